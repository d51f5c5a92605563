#!/usr/bin/env python3
"""Dispatch across hosts against the same ranks on one host, on the multi-node test bed
(tests/multinode; root): build/bench/hpo_bench_dispatch with 4 ranks in one-rank groups, as 2
namespace hosts x 2 ranks (the control plane over TCP between hosts) and as 4 ranks on host 0
alone (shared memory), alternating, REPS times each: no-op trials (trials/s, the gap from a
group's result to its next trial) and sleeping trials of 0.1-1.0 s (slot utilization and dispatch
share).

Usage (root): bench/multihost_dispatch.py --bench build/bench/hpo_bench_dispatch [--reps 3]
Prints the benchmark's own `bench=dispatch ...` lines, each prefixed with `hosts=N`.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "multinode"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "mpi"))
import netns_testbed  # noqa: E402
from netns_testbed import TestBed  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    why = netns_testbed.unavailable()
    if why:
        print("bench=multihost_dispatch skipped: " + why)
        return 0
    bench = os.path.abspath(args.bench)
    ok = True
    with TestBed(hosts=2, slots=2) as bed:
        for _ in range(args.reps):
            for hosts in ([0, 1], [0]):
                for extra in (["2000", "1"], ["100", "1", "0.1", "1.0"]):
                    done = bed.mpirun([bench] + extra, np=4, timeout=600, hosts=hosts)
                    ok = ok and done.returncode == 0
                    for line in done.output.splitlines():
                        if line.startswith("bench="):
                            print("hosts=%d %s" % (len(hosts), line), flush=True)
                    if done.returncode != 0:
                        print(done.describe())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

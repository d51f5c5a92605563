#!/usr/bin/env python3
"""Time from a lost host to the job's exit, on the multi-node test bed (tests/multinode): the
sweep of tests/multinode/test_lost_host.py (3 ranks on 2 namespace hosts, peer_timeout_s 5,
scripts/hpo-mpirun with HPO_MPIRUN_ABORT_GRACE_S 10) loses host 1 after two finished trials,
by a cut link and by kill -9 of everything on it, REPS times each, alternating.

Usage (root): bench/lost_host_exit.py --hpo build/hpo [--reps 5]
Prints one `bench=lost_host_exit ...` line per way of losing the host: the median seconds from
the loss to mpirun's (or the wrapper's) exit, every run, and the exit codes; check=ok when every
cut-link run exited with 4 and every kill -9 run with a non-zero code.
"""

import argparse
import os
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "multinode"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "mpi"))
import netns_testbed  # noqa: E402
import test_lost_host  # noqa: E402
from netns_testbed import TestBed  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    why = netns_testbed.unavailable()
    if why:
        print("bench=lost_host_exit skipped: " + why)
        return 0
    test_lost_host.HPO = os.path.abspath(args.hpo)
    ways = {"cut_link": lambda bed: bed.cut(1), "kill_9": lambda bed: bed.kill_all(1)}
    results = {name: [] for name in ways}
    for _ in range(args.reps):
        for name, lose in ways.items():
            case = test_lost_host.LostHost()
            case.setUp()
            try:
                with TestBed(hosts=2, slots=[2, 1]) as bed:
                    code, _, seconds = case.lose_host_mid_sweep(bed, lose)
                results[name].append((seconds, code))
            finally:
                shutil.rmtree(case.tmp, ignore_errors=True)
    ok = True
    for name, runs in results.items():
        codes = [code for _, code in runs]
        good = all(code == 4 for code in codes) if name == "cut_link" else all(codes)
        ok = ok and good
        print("bench=lost_host_exit way=%s median_s=%.1f runs=%s codes=%s check=%s" %
              (name, statistics.median(s for s, _ in runs),
               ",".join("%.1f" % s for s, _ in runs), ",".join(str(c) for c in codes),
               "ok" if good else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

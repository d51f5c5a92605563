#!/usr/bin/env python3
"""False "lost" exits of short 2-rank DDP sweeps beside busy loops: does a live rank's heartbeat
starve on a loaded machine?

Starts BUSY processes that spin (`while True: pass`, at the sweep's priority) to bring the load
to about BUSY + 2, then runs SWEEPS sweeps one after another: `mpirun --bind-to none -np 2 hpo
sweep` of a small synthetic grid, one trial group of 2 ranks (DDP: an allreduce per step), with
peer_timeout_s TIMEOUT (5 by default, to make starvation likely). Every rank is on this machine,
so a sweep that ends with exit code 4 ("lost contact") is a false loss.

Usage: bench/heartbeat_under_load.py --hpo build/hpo [--sweeps 50] [--busy 8] [--timeout 5]
Prints one `bench=heartbeat_under_load ...` line per sweep and a summary line: sweeps, false
losses, other failures, seconds per sweep, the 1-minute load average seen; check=ok when no
sweep ended in a false loss or any other failure. The busy loops and every process of a sweep
are killed at the end, also when the script fails or is interrupted.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "mpi"))
from hpo_test_support import MPI_ENV  # noqa: E402

EXIT_PEER_LOST = 4
SWEEP_TIMEOUT_S = 600


def config(peer_timeout_s):
    """Two trials of a few epochs, both ranks in one DDP group."""
    return ("sweep:\n"
            "  method: grid\n"
            "  metric: {name: val_loss, goal: minimize}\n"
            "  parameters:\n"
            "    lr: {values: [0.001, 0.004]}\n"
            "    width: {value: 64}\n"
            "    optimizer: {value: sgd}\n"
            "task: synthetic\n"
            "synthetic: {train_samples: 3000, val_samples: 256, test_samples: 256, features: 32,"
            " classes: 4, noise: 0.5}\n"
            "epochs: 3\n"
            "ranks_per_trial: 2\n"
            "peer_timeout_s: %g\n"
            "seed: 3\n") % peer_timeout_s


def start_busy_loops(count):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(count)]


def stop(processes):
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def run_sweep(hpo, work, index, peer_timeout_s):
    """(exit code or None on a time-out, seconds, output) of one sweep. The sweep runs in a
    session of its own, killed whole when it times out or the script is interrupted."""
    path = os.path.join(work, "sweep.yaml")
    with open(path, "w") as f:
        f.write(config(peer_timeout_s))
    argv = ["mpirun", "--bind-to", "none", "-np", "2", hpo, "sweep", "--config", path,
            "--output", os.path.join(work, "out%d" % index)]
    started = time.monotonic()
    sweep = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=work, env=dict(os.environ, **MPI_ENV), start_new_session=True)
    try:
        output, _ = sweep.communicate(timeout=SWEEP_TIMEOUT_S)
        return sweep.returncode, time.monotonic() - started, output
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - started, "timed out"
    finally:
        stop([sweep])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--sweeps", type=int, default=50)
    parser.add_argument("--busy", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args()
    hpo = os.path.abspath(args.hpo)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    busy = start_busy_loops(args.busy)
    false_losses, failures, seconds, loads = 0, 0, [], []
    try:
        with tempfile.TemporaryDirectory(prefix="hpo-heartbeat-load-") as work:
            for index in range(args.sweeps):
                code, took, output = run_sweep(hpo, work, index, args.timeout)
                load = os.getloadavg()[0]
                lost = code == EXIT_PEER_LOST
                false_losses += lost
                failures += code not in (0, EXIT_PEER_LOST)
                seconds.append(took)
                loads.append(load)
                print("bench=heartbeat_under_load sweep=%d exit=%s seconds=%.1f load1=%.1f" %
                      (index, code, took, load), flush=True)
                if code != 0:
                    print(output[-3000:], flush=True)
    finally:
        stop(busy)
    ok = false_losses == 0 and failures == 0
    print("bench=heartbeat_under_load sweeps=%d false_losses=%d other_failures=%d "
          "median_s=%.1f load1_min=%.1f load1_median=%.1f peer_timeout_s=%g busy=%d check=%s" %
          (len(seconds), false_losses, failures, statistics.median(seconds), min(loads),
           statistics.median(loads), args.timeout, args.busy, "ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

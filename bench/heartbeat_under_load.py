#!/usr/bin/env python3
"""False "lost" exits of short 2-rank DDP sweeps beside busy loops: does a live rank's heartbeat
starve on a loaded machine?

Starts BUSY processes that spin (`while True: pass`, at the sweep's priority) to bring the load
to about BUSY + 2, then runs SWEEPS sweeps one after another: `mpirun --bind-to none -np 2 hpo
sweep` of a small synthetic grid, one trial group of 2 ranks (DDP: an allreduce per step), with
peer_timeout_s TIMEOUT (5 by default, to make starvation likely). Every rank is on this machine,
so a sweep that ends with exit code 4 ("lost contact", "no word from rank 0") is a false loss.

With --resume, every sweep is instead a `--resume` of a copy of one study interrupted after its
first trial (SIGUSR1, exit 3): 2 ranks in 2 groups of one, so rank 0 also trains, and the
resumed trials restart from their checkpoints, which is when issue 52 saw rank 0's heartbeat
thread starved (the multinode LostHost resume). `starved=N` counts the sweeps in which rank 1
waited on a rank 0 it had not heard from for the timeout but whose process ran (its warning).

Usage: bench/heartbeat_under_load.py --hpo build/hpo [--sweeps 50] [--busy 8] [--timeout 5]
                                     [--resume]
Prints one `bench=heartbeat_under_load ...` line per sweep and a summary line: sweeps, false
losses, other failures, seconds per sweep, the 1-minute load average seen; check=ok when no
sweep ended in a false loss or any other failure. The busy loops and every process of a sweep
are killed at the end, also when the script fails or is interrupted.
"""

import argparse
import os
import shutil
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
EXIT_INTERRUPTED = 3
SWEEP_TIMEOUT_S = 600
STARVED_WARNING = "rank 0 runs on this machine and its process is running"


def config(peer_timeout_s, resume):
    """Two trials of a few epochs, both ranks in one DDP group; for --resume, four trials, one
    rank each, with a checkpoint every epoch."""
    return ("sweep:\n"
            "  method: grid\n"
            "  metric: {name: val_loss, goal: minimize}\n"
            "  parameters:\n"
            "    lr: {values: [%s]}\n"
            "    width: {value: 64}\n"
            "    optimizer: {value: sgd}\n"
            "task: synthetic\n"
            "synthetic: {train_samples: 3000, val_samples: 256, test_samples: 256, features: 32,"
            " classes: 4, noise: 0.5}\n"
            "epochs: %d\n"
            "%s"
            "ranks_per_trial: %d\n"
            "peer_timeout_s: %g\n"
            "seed: 3\n") % ("0.001, 0.002, 0.003, 0.004" if resume else "0.001, 0.004",
                             6 if resume else 3, "checkpoint: {interval: 1}\n" if resume else "",
                             1 if resume else 2, peer_timeout_s)


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


def run_sweep(hpo, work, index, config_path, base):
    """(exit code or None on a time-out, seconds, output) of one sweep, a --resume of a copy of
    `base` when one is given. The sweep runs in a session of its own, killed whole when it times
    out or the script is interrupted."""
    output_dir = os.path.join(work, "out%d" % index)
    argv = ["mpirun", "--bind-to", "none", "-np", "2", hpo, "sweep", "--config", config_path,
            "--output", output_dir]
    if base:
        shutil.copytree(base, output_dir)
        argv.append("--resume")
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
        shutil.rmtree(output_dir, ignore_errors=True)


def interrupted_study(hpo, work, config_path):
    """The output folder of a sweep interrupted (SIGUSR1 through mpirun, exit 3) once its first
    trial has finished: what every --resume sweep starts from."""
    base = os.path.join(work, "base")
    argv = ["mpirun", "--bind-to", "none", "-np", "2", hpo, "sweep", "--config", config_path,
            "--output", base]
    sweep = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=work, env=dict(os.environ, **MPI_ENV), start_new_session=True)
    try:
        lines = []
        for line in sweep.stdout:
            lines.append(line)
            if line.startswith("trial "):
                os.kill(sweep.pid, signal.SIGUSR1)
                break
        lines += sweep.stdout.readlines()
        sweep.wait(SWEEP_TIMEOUT_S)
    finally:
        stop([sweep])
    if sweep.returncode != EXIT_INTERRUPTED:
        raise RuntimeError("the sweep to resume ended with %s:\n%s" %
                           (sweep.returncode, "".join(lines)[-3000:]))
    return base


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--sweeps", type=int, default=50)
    parser.add_argument("--busy", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    hpo = os.path.abspath(args.hpo)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    false_losses, failures, starved, seconds, loads = 0, 0, 0, [], []
    with tempfile.TemporaryDirectory(prefix="hpo-heartbeat-load-") as work:
        config_path = os.path.join(work, "sweep.yaml")
        with open(config_path, "w") as f:
            f.write(config(args.timeout, args.resume))
        base = interrupted_study(hpo, work, config_path) if args.resume else None
        busy = start_busy_loops(args.busy)
        try:
            for index in range(args.sweeps):
                code, took, output = run_sweep(hpo, work, index, config_path, base)
                load = os.getloadavg()[0]
                false_losses += code == EXIT_PEER_LOST
                failures += code not in (0, EXIT_PEER_LOST)
                starved += STARVED_WARNING in output
                seconds.append(took)
                loads.append(load)
                print("bench=heartbeat_under_load sweep=%d exit=%s seconds=%.1f load1=%.1f" %
                      (index, code, took, load), flush=True)
                if code != 0:
                    print(output[-3000:], flush=True)
        finally:
            stop(busy)
    ok = false_losses == 0 and failures == 0
    print("bench=heartbeat_under_load mode=%s sweeps=%d false_losses=%d other_failures=%d "
          "starved=%d median_s=%.1f load1_min=%.1f load1_median=%.1f peer_timeout_s=%g busy=%d "
          "check=%s" %
          ("resume" if args.resume else "fresh", len(seconds), false_losses, failures, starved,
           statistics.median(seconds), min(loads), statistics.median(loads), args.timeout,
           args.busy, "ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

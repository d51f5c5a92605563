#!/usr/bin/env python3
"""Per-trial overhead of command trials: from one trial's program exit to the next trial's program
start in the same group, for 1- and 2-rank groups, beside the program's own start-up (reported
apart).

The program is a tiny bash script: it appends `start US` (its first action) and `end US` (its last)
to HPO_TRIAL_DIR/times-RANK and prints the metric; the stamps are bash's $EPOCHREALTIME (in
microseconds), which starts no process. Overhead per pair of consecutive
trials of one group = next start - previous end, on the leader's clock (both on this host); it holds
everything hpo does between them: reaping the children, the group's end-of-trial messages, the
result to rank 0, the next request and assignment, params.json, the port pick, fork and exec, and
bash's own start-up. The start-up alone (fork+exec of bash to its first line) is measured with the
same script outside hpo.

Every command trial also gets W&B's program contract (a parameter file, WANDB_* variables, a
poll for the run's log); `--platform sagemaker` adds SageMaker's training environment (a channel,
the /opt/ml files and SM_* variables per rank), measured in the same run beside the plain one.

Usage: bench/command_overhead.py --hpo build/hpo [--trials 200] [--np 2] [--platform sagemaker]
Prints one `bench=command_overhead ...` line per group size (and platform), check=ok when every
trial completed.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

PROGRAM = """#!/bin/bash
echo "start ${EPOCHREALTIME/./}" >> "$HPO_TRIAL_DIR/times-$RANK"
[ "$RANK" = 0 ] && echo "loss=$HPO_TRIAL_ID"
echo "end ${EPOCHREALTIME/./}" >> "$HPO_TRIAL_DIR/times-$RANK"
"""

CONFIG = """sweep:
  program: trial.sh
  command: ['${program}', '${args}']
  method: grid
  metric: {name: loss, goal: minimize}
  parameters:
    i: {distribution: int_uniform, min: 1, max: %d}
ranks_per_trial: %d
seed: 1
"""


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def startup_ms(folder, runs=50):
    """Median ms from fork+exec of the script to its first line (outside hpo)."""
    env = dict(os.environ, HPO_TRIAL_DIR=folder, RANK="1", HPO_TRIAL_ID="0")
    samples = []
    for _ in range(runs):
        before = time.time_ns()
        subprocess.run([os.path.join(folder, "trial.sh")], env=env, check=True)
        with open(os.path.join(folder, "times-1")) as f:
            start = int(f.read().split()[1])
        os.remove(os.path.join(folder, "times-1"))
        samples.append((start * 1000 - before) / 1e6)
    return statistics.median(samples)


def measure(hpo, folder, trials, np_count, ranks_per_trial, platform):
    config = os.path.join(folder, "sweep-%d-%s.yaml" % (ranks_per_trial, platform))
    with open(config, "w") as f:
        f.write(CONFIG % (trials, ranks_per_trial))
        if platform == "sagemaker":
            os.makedirs(os.path.join(folder, "channel"), exist_ok=True)
            f.write("sagemaker: {job_name: bench, channels: {train: %s}}\n" %
                    os.path.join(folder, "channel"))
    output = os.path.join(folder, "out-%d-%s" % (ranks_per_trial, platform))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    done = subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(np_count),
                           hpo, "sweep", "--config", config, "--output", output],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit("sweep failed:\n" + done.stdout + done.stderr)
    with h5py.File(os.path.join(output, "study.h5"), "r") as f:
        rows = f["trials"][:]
    by_group = {}
    completed = 0
    for row in rows:
        completed += row["status"] == b"completed"
        trial_dir = os.path.join(output, "trials", str(int(row["trial_id"])))
        with open(os.path.join(trial_dir, "times-0")) as f:
            stamps = dict(line.split() for line in f)
        by_group.setdefault(int(row["group"]), []).append((int(stamps["start"]),
                                                           int(stamps["end"])))
    gaps = []
    for spans in by_group.values():
        spans.sort()
        gaps += [(b[0] - a[1]) / 1e3 for a, b in zip(spans, spans[1:])]
    return gaps, completed == trials and len(rows) == trials


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--platform", choices=["sagemaker"], action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hpo-command-overhead-") as folder:
        script = os.path.join(folder, "trial.sh")
        with open(script, "w") as f:
            f.write(PROGRAM)
        os.chmod(script, 0o755)
        for ranks_per_trial in (1, 2):
            for platform in ["none"] + args.platform:
                before = startup_ms(folder)
                gaps, ok = measure(os.path.abspath(args.hpo), folder, args.trials, args.np,
                                   ranks_per_trial, platform)
                start = (before + startup_ms(folder)) / 2  # the load may change meanwhile
                median = statistics.median(gaps)
                print("bench=command_overhead ranks_per_trial=%d np=%d platform=%s trials=%d "
                      "gaps=%d median_ms=%.2f p90_ms=%.2f max_ms=%.2f program_startup_ms=%.2f "
                      "hpo_share_ms=%.2f check=%s" %
                      (ranks_per_trial, args.np, platform, args.trials, len(gaps), median,
                       percentile(gaps, 0.9), max(gaps), start, median - start,
                       "ok" if ok else "FAILED"),
                      flush=True)


if __name__ == "__main__":
    main()

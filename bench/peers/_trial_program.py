#!/usr/bin/python3
"""The trial of bench/peers/_overhead.py: the same code runs in-process in the peers' trainables and
as the command-trial program that hpo, Ray Tune and Optuna launch (`/usr/bin/python3
_trial_program.py --workload=W --d=D|--steps=S --stamps=FILE`, hpo's `${args}` spelling).

Workloads:
* `sleep`: sleeps d seconds (the hyperparameter, uniform in [0.1, 1.0]).
* `train`: `steps` steps of SGD (the hyperparameter, 400-4000: about 0.1-1 s at 0.26 ms a step on
  a busy core) on a 32-256-4 ReLU MLP, batches of 128 from 4,096 samples of a noisy linear
  teacher. numpy, not torch: both Debian's python3 and the peers' venvs have it, so the in-process
  and the program trials run the same code, and it imports in 0.1 s where torch takes a second or
  more, a start-up that would swamp every command trial's overhead (it counts for no system: see
  below). Intra-op threads are the caller's (OPENBLAS_NUM_THREADS=1: one core per trial).

Each trial appends `START END` (wall-clock seconds, time.time()) to the stamps file in one write
once its work is done: the start is taken after the interpreter's start-up and imports, so a
program's start-up counts as overhead for every system alike. The program prints `loss=VALUE`
(hpo reads name=value lines; the peers' run_program parses it).
"""

import argparse
import os
import subprocess
import time

import numpy as np

FEATURES, HIDDEN, CLASSES, SAMPLES, BATCH, LR = 32, 256, 4, 4096, 128, 0.1

# Each workload's hyperparameter: name, lowest, highest (d a float, steps an integer).
SPACE = {"sleep": ("d", 0.1, 1.0), "train": ("steps", 400, 4000)}


def train(steps):
    """Trains the MLP for `steps` SGD steps from a fixed seed; returns the last batch's loss."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
    teacher = rng.standard_normal((FEATURES, CLASSES)).astype(np.float32)
    noise = 0.5 * rng.standard_normal((SAMPLES, CLASSES)).astype(np.float32)
    y = np.argmax(x @ teacher + noise, axis=1)
    w1 = (rng.standard_normal((FEATURES, HIDDEN)) / np.sqrt(FEATURES)).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, CLASSES)) / np.sqrt(HIDDEN)).astype(np.float32)
    b1 = np.zeros(HIDDEN, np.float32)
    b2 = np.zeros(CLASSES, np.float32)
    rows = np.arange(BATCH)
    loss = float("nan")
    for step in range(steps):
        first = step * BATCH % SAMPLES
        xb, yb = x[first:first + BATCH], y[first:first + BATCH]
        z = xb @ w1 + b1
        a = np.maximum(z, 0.0)
        logits = a @ w2 + b2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        loss = float(-np.log(p[rows, yb]).mean())
        p[rows, yb] -= 1.0
        p /= BATCH
        ga = p @ w2.T
        ga[z <= 0.0] = 0.0
        w2 -= LR * (a.T @ p)
        b2 -= LR * p.sum(axis=0)
        w1 -= LR * (xb.T @ ga)
        b1 -= LR * ga.sum(axis=0)
    return loss


def run_trial(workload, value, stamps):
    """Runs one trial (`value`: d for sleep, steps for train), stamps it; returns its loss."""
    start = time.time()
    if workload == "sleep":
        time.sleep(value)
        loss = value
    else:
        loss = train(int(value))
    end = time.time()
    with open(stamps, "a") as f:
        f.write("%.6f %.6f\n" % (start, end))
    return loss


def run_program(workload, value, stamps):
    """Runs one trial as this program, as hpo's command trials do; returns its loss."""
    argv = ["/usr/bin/python3", os.path.abspath(__file__), "--workload=" + workload,
            "--%s=%s" % (SPACE[workload][0], value), "--stamps=" + stamps]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return float(done.stdout.rsplit("loss=", 1)[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", choices=("sleep", "train"), required=True)
    parser.add_argument("--d", type=float)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--stamps", required=True)
    args = parser.parse_args()
    value = args.d if args.workload == "sleep" else args.steps
    if value is None:
        parser.error("--workload=sleep needs --d, train needs --steps")
    print("loss=%r" % run_trial(args.workload, value, args.stamps))


if __name__ == "__main__":
    main()

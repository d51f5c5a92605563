#!/usr/bin/env python3
"""A stand-in training program for the report's tests (a command trial): each step prints one JSON
line {"epoch": step, "loss": value}. The loss falls with the steps towards a floor that depends
mostly on lr (best near 3e-3, a log-scale bowl), a little on optimizer and hardly on width, so the
hyperparameter importance has a clear winner. Batch 256 or lr above 0.05 "runs out of memory"
(exit 1 before the first step), so a sweep over them has failed trials whatever early stopping
decides."""

import argparse
import json
import math
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--optimizer", default="adam")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--sleep", type=float, default=0.0)
    args, _ = parser.parse_known_args()
    floor = ((math.log10(args.lr) + 2.5) ** 2 + {"sgd": 0.15, "adam": 0.0, "adamw": 0.05}.get(
        args.optimizer, 0.1) + 0.01 * args.width / 64.0)
    for step in range(1, args.steps + 1):
        if args.sleep:
            time.sleep(args.sleep)
        if args.batch >= 256 or args.lr > 0.05:  # before its first report: early stopping
            print("CUDA out of memory (pretend): batch %d, lr %g" % (args.batch, args.lr),
                  file=sys.stderr, flush=True)  # cannot stop it first
            sys.exit(1)
        loss = floor + 1.0 / step
        print(json.dumps({"epoch": step, "loss": loss}), flush=True)


if __name__ == "__main__":
    main()

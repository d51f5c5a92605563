#!/usr/bin/env python3
"""A program that evaluates and checkpoints the way Hugging Face's Trainer does, without
transformers (one process; its trial is one rank). It trains `--steps` evaluation periods of
`--train_seconds` each, at 4 evaluations per epoch ('epoch': 0.25, 0.5, ...), and at each one:

1. prints the evaluation as Trainer's PrinterCallback does ({'eval_loss': '0.5', 'epoch': '0.25'});
2. after `--save_delay` seconds (Trainer's save follows its report), saves `checkpoint-N` (N its
   global step) in HPO_CHECKPOINT_DIR: the model first, `--save_seconds` later trainer_state.json,
   then removes the older checkpoints (save_total_limit: 1).

It starts from the highest checkpoint-N, as `get_last_checkpoint` picks it, complete or not, and
exits 1 with Trainer's "Can't find a valid checkpoint" when that one has no trainer_state.json.
SIGTERM ends it at once (Python's default), as it ends a Trainer script.
"""

import argparse
import json
import os
import re
import shutil
import sys
import time

EVALUATIONS_PER_EPOCH = 4


def last_checkpoint(folder):
    """transformers.trainer_utils.get_last_checkpoint: the highest checkpoint-N folder."""
    steps = [int(match.group(1)) for match in
             (re.fullmatch(r"checkpoint-(\d+)", name) for name in os.listdir(folder))
             if match and os.path.isdir(os.path.join(folder, match.group(0)))]
    return os.path.join(folder, "checkpoint-%d" % max(steps)) if steps else None


def save(folder, step, save_seconds):
    """Trainer's _save_checkpoint: the model, then (last) the trainer state, then rotation."""
    checkpoint = os.path.join(folder, "checkpoint-%d" % step)
    os.makedirs(checkpoint, exist_ok=True)
    with open(os.path.join(checkpoint, "model.safetensors"), "w") as f:
        f.write("weights after step %d" % step)
    time.sleep(save_seconds)
    with open(os.path.join(checkpoint, "trainer_state.json"), "w") as f:
        json.dump({"global_step": step, "epoch": step / EVALUATIONS_PER_EPOCH}, f)
    for name in os.listdir(folder):
        if name != os.path.basename(checkpoint) and name.startswith("checkpoint-"):
            shutil.rmtree(os.path.join(folder, name))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--train_seconds", type=float, default=0.1)
    parser.add_argument("--save_delay", type=float, default=0.1)
    parser.add_argument("--save_seconds", type=float, default=0.5)
    args, _ = parser.parse_known_args()
    folder = os.environ["HPO_CHECKPOINT_DIR"]
    first = 1
    resume = last_checkpoint(folder)
    if resume:
        state = os.path.join(resume, "trainer_state.json")
        if not os.path.exists(state):
            sys.exit("ValueError: Can't find a valid checkpoint at %s" % resume)
        with open(state) as f:
            first = json.load(f)["global_step"] + 1
        print("resumed from %s" % os.path.basename(resume), flush=True)
    for step in range(first, args.steps + 1):
        time.sleep(args.train_seconds)
        loss = args.lr + 1.0 / step
        print("{'eval_loss': '%.4g', 'epoch': '%g'}" % (loss, step / EVALUATIONS_PER_EPOCH),
              flush=True)
        time.sleep(args.save_delay)
        save(folder, step, args.save_seconds)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A SageMaker script-mode training script, written as SageMaker's examples write `train.py`:
hyperparameters arrive as `--name value` arguments, and the paths and hosts come from the SM_*
environment variables that the SageMaker training toolkit sets (os.environ[...], a KeyError when a
platform does not give them).

It reads the CSV files of the train channel (its data lines count in the loss, so the data matter),
"trains" a deterministic fake loop (0.05 s per epoch) printing `epoch N: val_loss=X` for the tuning
job's MetricDefinitions regex, and saves model.json into the model folder on the first host only.
"""

import argparse
import json
import os
import time


def parse_args():
    parser = argparse.ArgumentParser()

    # Hyperparameters sent by the client are passed as command-line arguments to the script.
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--optimizer", type=str, default="sgd")

    # Data, model, and output directories, and the cluster, from the training environment.
    parser.add_argument("--model-dir", type=str, default=os.environ["SM_MODEL_DIR"])
    parser.add_argument("--output-data-dir", type=str, default=os.environ["SM_OUTPUT_DATA_DIR"])
    parser.add_argument("--train", type=str, default=os.environ["SM_CHANNEL_TRAIN"])
    parser.add_argument("--num-gpus", type=int, default=os.environ["SM_NUM_GPUS"])
    parser.add_argument("--hosts", type=list, default=json.loads(os.environ["SM_HOSTS"]))
    parser.add_argument("--current-host", type=str, default=os.environ["SM_CURRENT_HOST"])

    return parser.parse_args()


def count_examples(train_dir):
    """Data lines (not headers, not blank) of every .csv/.txt file in the channel folder."""
    examples = 0
    for name in sorted(os.listdir(train_dir)):
        if not name.endswith((".csv", ".txt")):
            continue
        with open(os.path.join(train_dir, name)) as f:
            lines = [line for line in f.read().splitlines() if line.strip()]
        if name.endswith(".csv") and lines:
            lines = lines[1:]  # the header
        examples += len(lines)
    return examples


def train(args):
    examples = count_examples(args.train)
    if examples == 0:
        raise ValueError("no training data in %s" % args.train)
    momentum = 0.9 if args.optimizer == "adam" else 1.0
    val_loss = 0.0
    for epoch in range(1, args.epochs + 1):
        time.sleep(0.05)
        val_loss = (args.lr * momentum * examples + 1.0 / epoch) * 32.0 / args.batch_size
        print("epoch %d: val_loss=%.6f" % (epoch, val_loss), flush=True)
    return val_loss


def save_model(model_dir, args, val_loss):
    path = os.path.join(model_dir, "model.json")
    with open(path, "w") as f:
        json.dump({"lr": args.lr, "epochs": args.epochs, "batch_size": args.batch_size,
                   "optimizer": args.optimizer, "val_loss": val_loss}, f)
    print("saved model to %s" % path, flush=True)


if __name__ == "__main__":
    args = parse_args()
    print("training on %s of %s, %d GPU(s)" % (args.current_host, args.hosts, args.num_gpus),
          flush=True)
    val_loss = train(args)
    # Only the first host saves the model, as SageMaker's distributed examples do.
    if args.current_host == args.hosts[0]:
        save_model(args.model_dir, args, val_loss)

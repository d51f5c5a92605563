#!/usr/bin/env python3
"""A training program that hands its parsed command line to W&B as the run's config
(`wandb.init(config=args)`), as EKS and Kubeflow examples do, and then reads the hyperparameters
back from `wandb.config`: under a sweep the sweep's values win over the flags' defaults and over
the flags given. It knows nothing of whoever started it.

The "training" is a deterministic fake: the loss falls with each epoch and is least for lr near
0.01.
"""

import argparse
import math
import time

import wandb


def main():
    parser = argparse.ArgumentParser(description="A fake trainer")
    parser.add_argument("--lr", type=float, default=0.1, help="learning rate")
    parser.add_argument("--epochs", type=int, default=3, help="epochs to train")
    parser.add_argument("--batch_size", type=int, default=32, help="batch size")
    args = parser.parse_args()

    run = wandb.init(config=args)

    lr = wandb.config.lr
    epochs = wandb.config.epochs
    for epoch in range(1, epochs + 1):
        val_loss = (math.log10(lr) + 2.0) ** 2 + 1.0 / epoch
        wandb.log({"epoch": epoch, "val_loss": val_loss, "batch_size": wandb.config.batch_size})
        time.sleep(0.05)

    run.finish()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A training program written the way W&B's quickstart and sweeps walkthrough write one: it takes
its hyperparameters from `wandb.config` (filled by the sweep), logs each epoch with `wandb.log`,
and finishes the run. It knows nothing of whoever started it.

The "training" is a deterministic fake: the loss falls with each epoch and is least for lr near
0.01, so a search has something to rank.
"""

import math
import time

import wandb


def train_one_epoch(epoch, lr):
    # Farther from lr = 0.01 (in decades) costs more; each epoch helps.
    gap = (math.log10(lr) + 2.0) ** 2
    return gap + 1.0 / epoch


def evaluate_one_epoch(epoch, lr):
    return train_one_epoch(epoch, lr) + 0.05


def main():
    run = wandb.init()

    # Note that we define values from `wandb.config` instead of defining hard values.
    lr = wandb.config.lr
    epochs = wandb.config.get("epochs", 5)

    for epoch in range(1, epochs + 1):
        train_loss = train_one_epoch(epoch, lr)
        val_loss = evaluate_one_epoch(epoch, lr)
        wandb.log({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss})
        time.sleep(0.05)

    run.finish()


if __name__ == "__main__":
    main()

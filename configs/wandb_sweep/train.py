#!/usr/bin/env python3
"""A small MLP regression on synthetic data: the program of the bare W&B sweep file sweep.yaml.

W&B's agent (and hpo) run it as `python3 train.py --activation=relu --hidden=64 --lr=0.001
--use_bias=True`. The data are made with torch from a fixed seed, so every trial sees the same
problem: y = sin(2 x.a) + 0.5 (x.b)^2 + 0.1 noise, x of 16 standard normal features.

It runs as one process, or as a DDP world when started by torchrun or by hpo with
`--ranks-per-trial` > 1 (gloo; each rank trains on its share of every batch). Rank 0 prints one
line per epoch in Katib's name=value format, which hpo reads as metrics:
    epoch=1 train_loss=0.412 val_loss=0.377
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

FEATURES, TRAIN, VAL, BATCH = 16, 4096, 1024, 128


def boolean(text):
    """W&B passes booleans as Python spells them: --use_bias=True / --use_bias=False."""
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError("expected True or False, got %r" % text)


def make_data():
    generator = torch.Generator().manual_seed(1234)  # the same problem for every trial and rank
    a = torch.randn(FEATURES, generator=generator) / FEATURES ** 0.5
    b = torch.randn(FEATURES, generator=generator) / FEATURES ** 0.5
    x = torch.randn(TRAIN + VAL, FEATURES, generator=generator)
    y = torch.sin(2 * x @ a) + 0.5 * (x @ b) ** 2 + 0.1 * torch.randn(TRAIN + VAL,
                                                                       generator=generator)
    y = y.unsqueeze(1)
    return x[:TRAIN], y[:TRAIN], x[TRAIN:], y[TRAIN:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--activation", choices=["relu", "tanh", "gelu"], default="relu")
    parser.add_argument("--use_bias", type=boolean, default=True)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=int(os.environ.get("HPO_TRIAL_SEED", "0")))
    args = parser.parse_args()
    args.seed %= 2 ** 31  # HPO_TRIAL_SEED is a 64-bit number
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))

    distributed = "WORLD_SIZE" in os.environ  # torchrun or hpo started it
    if distributed:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1

    train_x, train_y, val_x, val_y = make_data()
    torch.manual_seed(args.seed)
    activation = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}[args.activation]
    net = nn.Sequential(
        nn.Linear(FEATURES, args.hidden, bias=args.use_bias), activation(),
        nn.Linear(args.hidden, args.hidden, bias=args.use_bias), activation(),
        nn.Linear(args.hidden, 1))
    model = DistributedDataParallel(net) if distributed else net
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()

    order = torch.Generator().manual_seed(args.seed)
    for epoch in range(1, args.epochs + 1):
        model.train()
        permutation = torch.randperm(TRAIN, generator=order)  # the same on every rank
        total = 0.0
        for start in range(0, TRAIN, BATCH):
            batch = permutation[start:start + BATCH][rank::world]  # this rank's share
            loss = loss_fn(model(train_x[batch]), train_y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        net.eval()
        with torch.no_grad():
            val_loss = loss_fn(net(val_x), val_y).item()  # every rank has the same weights
        train_loss = torch.tensor([total])
        if distributed:
            dist.all_reduce(train_loss)
        if rank == 0:
            print("epoch=%d train_loss=%.6f val_loss=%.6f"
                  % (epoch, train_loss.item() / TRAIN, val_loss), flush=True)

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

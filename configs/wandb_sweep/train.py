#!/usr/bin/env python3
"""A small MLP regression on synthetic data: the program of the bare W&B sweep file sweep.yaml,
written the way W&B's quickstart writes one: its hyperparameters come from `wandb.config` (the
defaults below, overridden by the sweep), each epoch is logged with `wandb.log`, the run is
finished at the end. It knows nothing of who started it: `wandb agent`, or hpo, which reads what it
logs from the run's own log and runs it offline unless you have a W&B API key.

The data are made with torch from a fixed seed, so every trial sees the same problem:
y = sin(2 x.a) + 0.5 (x.b)^2 + 0.1 noise, x of 16 standard normal features. It runs as one
process, or as a DDP world when started by torchrun or by hpo with `--ranks-per-trial` > 1 (gloo;
each rank trains on its share of every batch; every rank reads wandb.config, rank 0 logs).
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel

FEATURES, TRAIN, VAL, BATCH = 16, 4096, 1024, 128
DEFAULTS = {"lr": 1e-3, "hidden": 64, "activation": "relu", "use_bias": True, "epochs": 5,
            "seed": 0}


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
    run = wandb.init(config=DEFAULTS)
    config = wandb.config
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))

    distributed = "WORLD_SIZE" in os.environ  # torchrun or hpo started it
    if distributed:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1

    train_x, train_y, val_x, val_y = make_data()
    torch.manual_seed(config.seed)
    activation = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}[config.activation]
    net = nn.Sequential(
        nn.Linear(FEATURES, config.hidden, bias=config.use_bias), activation(),
        nn.Linear(config.hidden, config.hidden, bias=config.use_bias), activation(),
        nn.Linear(config.hidden, 1))
    model = DistributedDataParallel(net) if distributed else net
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr)
    loss_fn = nn.MSELoss()

    order = torch.Generator().manual_seed(config.seed)
    for epoch in range(1, config.epochs + 1):
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
            wandb.log({"epoch": epoch, "train_loss": train_loss.item() / TRAIN,
                       "val_loss": val_loss})

    if distributed:
        dist.destroy_process_group()
    run.finish()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fashion-MNIST CNN trained with PyTorch DistributedDataParallel: an ordinary DDP script, as you
would launch it with torchrun, that hpo runs as a command trial (configs/fashion_mnist_ddp.yaml).

    torchrun --nproc_per_node 2 fashion_cnn_ddp.py --lr=0.001 --batch_size=64 --optimizer=adam
    python3 fashion_cnn_ddp.py --epochs=1          # no torchrun environment: one process

What it relies on, all of which hpo (like torchrun) provides:
* MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK in the environment:
  init_process_group() reads them (gloo on CPUs, NCCL on GPUs; the GPU is chosen by LOCAL_RANK).
  Without WORLD_SIZE it runs alone, without torch.distributed.
* One `--name=value` argument per hyperparameter (W&B's ${args}).
* HPO_CHECKPOINT_DIR (optional): rank 0 saves the model, optimizer and epoch there after every
  epoch, before it reports the epoch, and at start every rank continues from that checkpoint. So a
  trial that hpo paused and promotes, or a preempted one it starts again (`--resume`), goes on
  from its next epoch.
* SIGTERM (early stopping, preemption) keeps Python's default action: the process ends at once
  (status 143), even inside a collective. The last checkpoint is whole: it is written to a temporary
  name and renamed.

Rank 0 prints one JSON object per epoch on stdout, which is what hpo reads:
    {"epoch": 1, "train_loss": 0.61, "val_loss": 0.43, "val_accuracy": 0.84}

Data: the IDX files of Fashion-MNIST (--data; Debian's dataset-fashion-mnist by default). The
training and validation sets are carved from one fixed shuffle of the 60,000 training images:
the first --train_samples for training, the last --val_samples for validation.
"""

import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

MEAN, STD = 0.2860, 0.3530  # of the Fashion-MNIST training images, pixels scaled to [0, 1]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch_size", type=int, default=64,
                        help="the global batch: each rank takes batch_size / WORLD_SIZE")
    parser.add_argument("--optimizer", choices=["sgd", "adam"], default="adam")
    parser.add_argument("--momentum", type=float, default=0.9, help="for sgd")
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--width", type=int, default=16, help="channels of the first conv layer")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train_samples", type=int, default=12000)
    parser.add_argument("--val_samples", type=int, default=2000)
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("HPO_TRIAL_SEED", "0")))
    parser.add_argument("--checkpoint_dir", default=os.environ.get("HPO_CHECKPOINT_DIR", ""),
                        help="folder of checkpoint.pt (default $HPO_CHECKPOINT_DIR; empty: none)")
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "1")),
                        help="torch CPU threads per process (default: $OMP_NUM_THREADS, else 1)")
    return parser.parse_args()


def read_idx(path):
    """An IDX file (gzip-compressed) as a numpy array of its shape."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_data(folder, train_samples, val_samples):
    """(train_x, train_y, val_x, val_y) as tensors: normalized images N x 1 x 28 x 28, labels N."""
    images = read_idx(os.path.join(folder, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(folder, "train-labels-idx1-ubyte.gz"))
    if train_samples + val_samples > len(images):
        raise SystemExit("--train_samples + --val_samples is more than the %d images"
                         % len(images))
    order = np.random.default_rng(20260101).permutation(len(images))  # the same on every rank
    train_idx = order[:train_samples]
    val_idx = order[len(images) - val_samples:]

    def tensors(idx):
        x = torch.from_numpy(images[idx].astype(np.float32) / 255.0)
        x = ((x - MEAN) / STD).unsqueeze(1)
        return x, torch.from_numpy(labels[idx].astype(np.int64))

    return (*tensors(train_idx), *tensors(val_idx))


class Net(nn.Module):
    """(conv 3x3 - ReLU - max-pool 2) x 2, dropout, linear: 28x28 -> 14x14 -> 7x7 -> 10 classes."""

    def __init__(self, width, dropout):
        super().__init__()
        self.conv1 = nn.Conv2d(1, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(2 * width * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(self.dropout(torch.flatten(x, 1)))


def start_distributed():
    """(distributed, rank, world, device): torch.distributed started from the torchrun
    environment when there is one (gloo on CPUs, NCCL on GPUs), and this process's device."""
    distributed = "WORLD_SIZE" in os.environ  # started by torchrun or hpo
    if distributed:
        dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        # A GPU per process by LOCAL_RANK (with CUDA_VISIBLE_DEVICES per process: the one it sees).
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    return distributed, rank, world, device


def make_optimizer(args, net):
    if args.optimizer == "adam":
        return torch.optim.Adam(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    return torch.optim.SGD(net.parameters(), lr=args.lr, momentum=args.momentum,
                           weight_decay=args.weight_decay)


def resume(checkpoint_path, net, optimizer, device, rank, epochs):
    """The first epoch to train: after the checkpoint of an earlier run of this trial when there
    is one (its model and optimizer loaded), else 1."""
    if not checkpoint_path or not os.path.exists(checkpoint_path):
        return 1
    state = torch.load(checkpoint_path, map_location=device)
    net.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if rank == 0:
        print("resuming from %s after epoch %d" % (checkpoint_path, state["epoch"]), flush=True)
        if state["epoch"] >= epochs and state.get("metrics") is not None:
            # Stopped after its last checkpoint but before it ended: say the result again.
            print(json.dumps(state["metrics"]), flush=True)
    return state["epoch"] + 1


def train_epoch(model, optimizer, train_x, train_y, indices, local_batch):
    """One pass over this rank's INDICES; the sum of its per-sample losses (float64 tensor)."""
    model.train()
    loss_sum = torch.zeros((), dtype=torch.float64, device=train_x.device)
    for start in range(0, len(indices), local_batch):
        batch = indices[start:start + local_batch]
        x, y = train_x[batch], train_y[batch]
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        loss_sum += loss.detach().double() * len(batch)
    return loss_sum


def validate(net, val_x, val_y):
    """(summed loss, correct) over this rank's share of the validation set."""
    net.eval()
    val_loss, correct = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(val_x), 1000):
            logits = net(val_x[start:start + 1000])
            y = val_y[start:start + 1000]
            val_loss += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(1) == y).sum().item()
    return val_loss, correct


def save_checkpoint(args, checkpoint_path, net, optimizer, epoch, metrics):
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    temporary = checkpoint_path + ".tmp"
    torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": epoch, "metrics": metrics, "args": vars(args)}, temporary)
    os.replace(temporary, checkpoint_path)  # never a half-written checkpoint


def main():
    args = parse_args()
    args.seed %= 2 ** 31  # HPO_TRIAL_SEED is a 64-bit number; torch wants seeds below 2^64
    torch.set_num_threads(args.threads)
    distributed, rank, world, device = start_distributed()

    train_x, train_y, val_x, val_y = load_data(args.data, args.train_samples, args.val_samples)
    train_x, train_y = train_x.to(device), train_y.to(device)
    val_x, val_y = val_x[rank::world].to(device), val_y[rank::world].to(device)  # this rank's share

    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP also broadcasts them)
    net = Net(args.width, args.dropout).to(device)
    model = net
    if distributed:
        model = DistributedDataParallel(net, device_ids=[device.index] if device.type == "cuda"
                                        else None)
    optimizer = make_optimizer(args, net)
    checkpoint_path = os.path.join(args.checkpoint_dir, "checkpoint.pt") if args.checkpoint_dir \
        else ""
    first_epoch = resume(checkpoint_path, net, optimizer, device, rank, args.epochs)

    local_batch = max(1, args.batch_size // world)
    # Pads to a multiple of WORLD_SIZE, so that every rank takes the same number of steps.
    sampler = DistributedSampler(range(len(train_x)), num_replicas=world, rank=rank,
                                 shuffle=True, seed=args.seed)
    for epoch in range(first_epoch, args.epochs + 1):
        started = time.time()
        sampler.set_epoch(epoch)  # a new order each epoch, the same on a resumed run
        torch.manual_seed(args.seed * 100003 + epoch * 1009 + rank)  # dropout masks
        indices = torch.tensor(list(sampler), device=device)
        loss_sum = train_epoch(model, optimizer, train_x, train_y, indices, local_batch)
        val_loss, correct = validate(net, val_x, val_y)
        # Each rank validated its share; the sums are added up so that all ranks agree.
        sums = torch.tensor([loss_sum.item(), len(indices), val_loss, correct, len(val_x)],
                            dtype=torch.float64, device=device)
        if distributed:
            dist.all_reduce(sums)
        train_loss, trained, val_loss, correct, validated = sums.tolist()
        metrics = {"epoch": epoch, "train_loss": round(train_loss / trained, 6),
                   "val_loss": round(val_loss / validated, 6),
                   "val_accuracy": round(correct / validated, 6)}
        if rank == 0:
            # Saved before the epoch is reported: hpo may pause the trial (SIGTERM) right after
            # the report, and the resumed trial then goes on from the next epoch.
            if checkpoint_path:
                save_checkpoint(args, checkpoint_path, net, optimizer, epoch, metrics)
            print(json.dumps(metrics), flush=True)
            print("epoch %d took %.1f s" % (epoch, time.time() - started), file=sys.stderr,
                  flush=True)

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Training throughput of the fashion_mnist CNN in Python PyTorch eager, to compare with the C++
trainer (bench/ddp_throughput.cpp run as 1 rank x 1 thread).

The same model as core/src/train/models.cpp (BuildFashionCnn): conv3x3(1->w, pad 1), BatchNorm,
ReLU, maxpool 2, conv3x3(w->2w, pad 1), BatchNorm, ReLU, maxpool 2, flatten, dropout,
linear(2w*7*7 -> 128), ReLU, dropout, linear(128 -> 10); width 16, dropout 0. The same training:
adam, lr 1e-3, global batch 128 (the last, partial batch kept), a fresh permutation per epoch,
rows gathered with index_select, mean cross-entropy, one thread (torch.set_num_threads(1); run
with OMP_NUM_THREADS=1). The same data: Fashion-MNIST from the IDX files, scaled to [0, 1] and
normalised with mean 0.2860 and std 0.3530, the first N training images; 1000 held-out training
images for the self-check.

What is timed, as in ddp_throughput.cpp: an untimed 1-epoch warm-up on the first 2048 samples,
then E epochs over N samples; samples_per_s = N x E / training time (validation not timed).
Check: every loss finite and validation accuracy > 0.6.
  OMP_NUM_THREADS=1 /usr/bin/python3 bench/python_eager_cnn.py [--train-samples N] [--epochs E]
"""
import argparse
import gzip
import math
import os
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"
WARMUP_SAMPLES = 2048
VALIDATION_SAMPLES = 1000


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, count = struct.unpack(">II", raw[:8])
    dims = magic & 0xFF
    shape = (count,) + struct.unpack(">" + "I" * (dims - 1), raw[8:4 * (dims + 1)])
    data = torch.frombuffer(bytearray(raw[4 * (dims + 1):]), dtype=torch.uint8)
    return data.reshape(shape)


def build_cnn(width, dropout, classes=10):
    pooled = 28 // 4
    return nn.Sequential(
        nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(dropout),
        nn.Linear(2 * width * pooled * pooled, 128), nn.ReLU(), nn.Dropout(dropout),
        nn.Linear(128, classes))


def train(model, optimizer, inputs, labels, batch, epochs, seed):
    losses = []
    generator = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(inputs.shape[0], generator=generator)
        for begin in range(0, inputs.shape[0], batch):
            index = order[begin:begin + batch]
            optimizer.zero_grad()
            loss = F.cross_entropy(model(inputs.index_select(0, index)),
                                   labels.index_select(0, index))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-samples", type=int, default=20000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(42)

    images = read_idx(os.path.join(DATA, "train-images-idx3-ubyte.gz"))
    targets = read_idx(os.path.join(DATA, "train-labels-idx1-ubyte.gz")).long()
    images = ((images.float() / 255.0 - 0.2860) / 0.3530).unsqueeze(1).contiguous()
    n = args.train_samples
    inputs, labels = images[:n], targets[:n]
    val_inputs, val_labels = images[-VALIDATION_SAMPLES:], targets[-VALIDATION_SAMPLES:]

    warm = build_cnn(16, 0.0)
    train(warm, torch.optim.Adam(warm.parameters(), lr=1e-3), inputs[:WARMUP_SAMPLES],
          labels[:WARMUP_SAMPLES], args.batch, 1, 1)

    model = build_cnn(16, 0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    start = time.perf_counter()
    losses = train(model, optimizer, inputs, labels, args.batch, args.epochs, 2)
    train_time = time.perf_counter() - start

    model.eval()
    with torch.no_grad():
        accuracy = (model(val_inputs).argmax(1) == val_labels).float().mean().item()
    check = all(math.isfinite(x) for x in losses) and accuracy > 0.6
    samples_per_s = n * args.epochs / train_time
    print(f"bench=python_eager_cnn torch={torch.__version__} threads={torch.get_num_threads()} "
          f"batch={args.batch} train_samples={n} epochs={args.epochs} "
          f"train_time_s={train_time:.3f} samples_per_s={samples_per_s:.1f} "
          f"val_accuracy={accuracy:.4f} check={'ok' if check else 'FAILED'}")
    return 0 if check else 1


if __name__ == "__main__":
    sys.exit(main())

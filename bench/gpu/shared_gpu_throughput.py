#!/usr/bin/env python3
"""Trials per hour and training images/s of the built-in Fashion-MNIST CNN when K one-rank trials
share one GPU (trials_per_gpu: K), for each K given, through `hpo sweep` itself:

    python3 bench/gpu/shared_gpu_throughput.py BUILD/hpo [--ks 1,2,4] [--trials 8]
        [--train-samples 30000] [--epochs 2] [--data DIR]

Each K runs the same --trials trials (adam, lr 1e-3, batch 128, width 16) with mpirun -np K on
GPU 0 (CUDA_VISIBLE_DEVICES=0). Without --data it writes random images in Fashion-MNIST's IDX
layout (throughput does not depend on the pixels; nothing is downloaded). wall_s is mpirun's whole
run (start, data, every trial, study); images_per_s = trials x train_samples x epochs / wall_s;
speedup_vs_k1 compares trials per hour with the first K. One result line per K, as the other
benchmarks print them; check=ok when every trial completed."""

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1",
           "CUDA_VISIBLE_DEVICES": "0"}


def write_idx(folder, prefix, count, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=count, dtype=np.uint8)
    images = rng.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
    with open(os.path.join(folder, prefix + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, count, 28, 28))
        f.write(images.tobytes())
    with open(os.path.join(folder, prefix + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, count))
        f.write(labels.tobytes())


def config(k, args, data):
    return ("sweep:\n"
            "  method: random\n"
            "  metric: {name: val_accuracy, goal: maximize}\n"
            "  run_cap: %d\n"
            "  parameters:\n"
            "    lr: {value: 0.001}\n"
            "    batch_size: {value: 128}\n"
            "    optimizer: {value: adam}\n"
            "    width: {value: 16}\n"
            "task: fashion_mnist\n"
            "data: %s\n"
            "train_samples: %d\n"
            "validation_samples: 2000\n"
            "epochs: %d\n"
            "trials_per_gpu: %d\n"
            "seed: 1\n") % (args.trials, data, args.train_samples, args.epochs, k)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("hpo")
    parser.add_argument("--ks", default="1,2,4")
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--train-samples", type=int, default=30000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--data")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hpo-shared-gpu-")
    data = args.data
    if data is None:
        data = os.path.join(work, "data")
        os.makedirs(data)
        write_idx(data, "train", args.train_samples + 2000, 1)
        write_idx(data, "t10k", 1000, 2)
    first_rate = None
    failed = False
    for k in [int(k) for k in args.ks.split(",")]:
        path = os.path.join(work, "k%d.yaml" % k)
        with open(path, "w") as f:
            f.write(config(k, args, data))
        output = os.path.join(work, "out-k%d" % k)
        start = time.monotonic()
        done = subprocess.run(["mpirun", "-np", str(k), args.hpo, "sweep", "--config", path,
                               "--output", output], env=dict(os.environ, **MPI_ENV),
                              capture_output=True, text=True)
        wall = time.monotonic() - start
        completed = 0
        if os.path.exists(os.path.join(output, "study.h5")):
            with h5py.File(os.path.join(output, "study.h5"), "r") as f:
                completed = sum(1 for row in f["trials"][:]
                                if row["trial_id"] >= 0 and row["status"] == b"completed")
        ok = done.returncode == 0 and completed == args.trials
        if not ok:
            failed = True
            sys.stderr.write(done.stdout + done.stderr)
        rate = args.trials / wall * 3600
        first_rate = first_rate or rate
        print("bench=shared_gpu_throughput trials_per_gpu=%d trials=%d train_samples=%d epochs=%d "
              "wall_s=%.1f images_per_s=%.0f trials_per_hour=%.0f speedup_vs_k1=%.2f check=%s" %
              (k, args.trials, args.train_samples, args.epochs, wall,
               args.trials * args.train_samples * args.epochs / wall, rate, rate / first_rate,
               "ok" if ok else "FAILED"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

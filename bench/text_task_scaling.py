#!/usr/bin/env python3
"""Training throughput of `task: text_classification` as a whole (tokenised corpus, padding to the
longest row of each batch, DDP gradient allreduce, validation pass) on 1 and 2 ranks per trial,
with the same global batch.

Each run is one `hpo sweep` of one fixed trial (d_model 128, 4 heads, 2 layers, ff 256, sequence
128, mean pooling, AdamW, global batch 32) for EPOCHS epochs on the 20 Newsgroups tables
(scripts/fetch-text-corpus.sh). samples/s = training rows / epoch_time_s, from the study's
/curves, of the last epoch (the first one also warms the allocator); epoch_time_s holds the epoch's
validation pass too (1,127 rows, forward only), as a user's does.
Runs of 1 and 2 ranks alternate, REPS times each, so both see the same noise. Scaling efficiency =
samples/s on 2 ranks / (2 x samples/s on 1 rank), from the medians.

Usage: bench/text_task_scaling.py --hpo build/hpo [--data data/20newsgroups] [--reps 2]
                                  [--epochs 2]
Prints one `bench=text_task_scaling ...` line per rank count and one for the efficiency; check=ok
when every run completed.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

import h5py

CONFIG = """sweep:
  method: grid
  metric: {name: val_macro_f1, goal: maximize}
  parameters:
    lr: {value: 0.0003}
    batch_size: {value: 32}
    optimizer: {value: adamw}
    weight_decay: {value: 0.01}
    warmup_ratio: {value: 0.1}
    layers: {value: 2}
    d_model: {value: 128}
    heads: {value: 4}
    ff_dim: {value: 256}
    dropout: {value: 0.1}
    max_seq_length: {value: 128}
    pooling: {value: mean}
task: text_classification
text:
  train: %(data)s/train.tsv
  validation: %(data)s/validation.tsv
  test: %(data)s/test.tsv
  min_count: 2
  max_vocab: 30000
epochs: %(epochs)d
ranks_per_trial: %(ranks)d
threads_per_rank: 1
seed: 7
"""


def training_rows(path):
    csv.field_size_limit(sys.maxsize)
    with open(path, newline="", encoding="utf-8") as f:
        return sum(1 for _ in csv.reader(f, delimiter="\t")) - 1


def run(hpo, folder, data, ranks, epochs, rep):
    config = os.path.join(folder, "r%d-%d.yaml" % (ranks, rep))
    with open(config, "w") as f:
        f.write(CONFIG % {"data": data, "epochs": epochs, "ranks": ranks})
    output = os.path.join(folder, "out-r%d-%d" % (ranks, rep))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
    done = subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks),
                           hpo, "sweep", "--config", config, "--output", output],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        return None
    with h5py.File(os.path.join(output, "study.h5"), "r") as f:
        rows = f["curves"][:]
    return float(rows[rows["epoch"] == epochs]["epoch_time_s"][0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--data", default="data/20newsgroups")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    data = os.path.abspath(args.data)
    rows = training_rows(os.path.join(data, "train.tsv"))
    rates = {1: [], 2: []}
    ok = True
    with tempfile.TemporaryDirectory(prefix="hpo-text-scaling-") as folder:
        for rep in range(args.reps):
            for ranks in (1, 2):
                seconds = run(os.path.abspath(args.hpo), folder, data, ranks, args.epochs, rep)
                ok = ok and seconds is not None
                if seconds is not None:
                    rates[ranks].append(rows / seconds)
    median = {ranks: statistics.median(values) if values else 0.0
              for ranks, values in rates.items()}
    check = "ok" if ok else "FAILED"
    for ranks in (1, 2):
        print("bench=text_task_scaling ranks=%d rows=%d samples_per_s=%.1f runs=%s check=%s" %
              (ranks, rows, median[ranks], ",".join("%.1f" % r for r in rates[ranks]), check))
    efficiency = median[2] / (2 * median[1]) if median[1] else 0.0
    print("bench=text_task_scaling efficiency_2_ranks=%.2f check=%s" % (efficiency, check))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

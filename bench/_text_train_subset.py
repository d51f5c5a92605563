#!/usr/bin/env python3
"""Writes a corpus folder whose training split is a fixed random subset of another's, for measuring
the baselines on the rows configs/programs/finetune_text_classifier.py trains on with
--max_train_samples N (the rows random.Random(0).sample(range(rows), N) picks, in file order).
The validation and test splits are copied whole.

    /usr/bin/python3 bench/_text_train_subset.py data/20newsgroups /tmp/20newsgroups-2000 --samples 2000
"""
import argparse
import csv
import random
import shutil
import sys
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder with train.tsv, validation.tsv, test.tsv")
    parser.add_argument("destination", type=Path)
    parser.add_argument("--samples", type=int, required=True)
    args = parser.parse_args()
    csv.field_size_limit(sys.maxsize)
    with open(args.source / "train.tsv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    header, body = rows[0], rows[1:]
    if args.samples < len(body):
        body = [body[i] for i in sorted(random.Random(0).sample(range(len(body)), args.samples))]
    args.destination.mkdir(parents=True, exist_ok=True)
    with open(args.destination / "train.tsv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, delimiter="\t", lineterminator="\n").writerows([header] + body)
    for split in ("validation", "test"):
        shutil.copyfile(args.source / f"{split}.tsv", args.destination / f"{split}.tsv")
    print(f"{args.destination}: {len(body)} training rows")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Exports the full learning curves of study files to one CSV, the tabular blackbox's data.

    _export_curves.py STUDY.h5 [STUDY.h5 ...] [-o bench/peers/data/fmnist_long_curves.csv]

One row per trial that ran all the epochs (the most any trial of the studies ran; the studies must
agree on it, on the metric and on the hyperparameters): `study` (the study's position among the
arguments, from 0), `trial_id`, the hyperparameters in the config's order, then the sweep metric
after each epoch, `METRIC_1` .. `METRIC_N`. Only published rows are read (docs/study-file.md), so
a study still being written exports its finished trials. Rows are in argument order, then by
trial id; numbers are written in their shortest round-trip form, so the same studies give the
same bytes. Runs with /usr/bin/python3 (h5py).
"""

import argparse
import csv
import os
import struct
import sys

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.join(HERE, "data", "fmnist_long_curves.csv")


def _fnv1a64(data):
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def published_counts(f):
    """(trials, curves) rows published, from the valid /published record with the larger sequence;
    None for a study without /published (every row counts then)."""
    if "published" not in f:
        return None
    names = ("sequence", "trials", "curves", "state_offset", "state_size", "state_checksum")
    best = None
    for row in f["published"][:]:
        fields = [int(row[name]) for name in names]
        if _fnv1a64(struct.pack("<qqqqqQ", *fields)) != int(row["checksum"]):
            continue
        if best is None or fields[0] > best[0]:
            best = fields
    if best is None:
        raise ValueError("no valid /published record")
    return best[1], best[2]


def text(value):
    """A cell: shortest round-trip form for numbers, strings decoded."""
    if isinstance(value, bytes):
        return value.decode()
    if hasattr(value, "dtype") and value.dtype.kind in "iu":
        return str(int(value))
    return repr(float(value))


def read_study(path):
    """(metric, parameter names, {trial_id: (params, {epoch: value})}, most epochs of a trial)."""
    with h5py.File(path, "r") as f:
        counts = published_counts(f)
        trials = f["trials"][:] if counts is None else f["trials"][:counts[0]]
        curves = f["curves"][:] if counts is None else f["curves"][:counts[1]]
        metric = f.attrs["metric_name"]
        metric = metric.decode() if isinstance(metric, bytes) else str(metric)
    fields = list(trials.dtype.names)
    params = fields[fields.index("objective") + 1:fields.index("epochs")]
    rows = {}
    most = 0
    for trial in trials:
        if trial["trial_id"] < 0:
            continue
        most = max(most, int(trial["epochs"]))
        if trial["status"] == b"completed":
            rows[int(trial["trial_id"])] = ([text(trial[name]) for name in params], {})
    for row in curves:
        trial_id = int(row["trial_id"])
        if trial_id in rows:
            rows[trial_id][1][int(row["epoch"])] = text(row[metric])
    return metric, params, rows, most


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("studies", nargs="+")
    parser.add_argument("-o", "--output", default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    studies = [read_study(path) for path in args.studies]
    metric, params = studies[0][0], studies[0][1]
    epochs = max(study[3] for study in studies)
    for path, study in zip(args.studies, studies):
        if (study[0], study[1]) != (metric, params):
            sys.exit("_export_curves.py: %s is another design (metric %s, parameters %s; "
                     "%s: %s, %s)" % (path, study[0], study[1], args.studies[0], metric, params))
    out = []
    for index, study in enumerate(studies):
        for trial_id in sorted(study[2]):
            values, curve = study[2][trial_id]
            if sorted(curve) != list(range(1, epochs + 1)):
                continue
            out.append([str(index), str(trial_id)] + values +
                       [curve[e] for e in range(1, epochs + 1)])
    if not out:
        sys.exit("_export_curves.py: no trial ran all %d epochs" % epochs)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["study", "trial_id"] + params +
                        ["%s_%d" % (metric, e) for e in range(1, epochs + 1)])
        writer.writerows(out)
    print("_export_curves.py: %d trials of %d epochs -> %s" % (len(out), epochs, args.output))


if __name__ == "__main__":
    main()

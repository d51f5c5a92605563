#!/usr/bin/env python3
"""Checks that a study file (STUDY.h5) reads with the Python tools docs/design.md promises ("The
study file").

Usage: check_study_readable.py STUDY.h5 ROWS [--param NAME]... [--metric NAME]... [--curve-rows N]

Opens the file with h5py, builds pandas.DataFrame(h5py.File(p)["trials"][:]), checks its row count
and columns (trial_id, status, objective, the --param names in order, epochs, duration_s, group,
message, start_time_s), reads /curves (trial_id, epoch, the --metric names), reads the root
attributes, and reads
pandas.read_hdf(p, "trials") and pandas.read_hdf(p, "curves") (PyTables generic tables). Exits 0
when everything matches, 1 with a message on stderr otherwise.

A study being written (or left by a crash) has rows past what is published: published_rows() shows
how a Python reader finds the published counts (what hpo's own reader does, study_writer.cpp), and
the rows below them are checked. A finished study has no such rows (the counts are the extents).
"""

import argparse
import struct
import sys
import warnings


def fnv1a64(data):
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def published_rows(f):
    """(trials, curves): the published row counts of an open h5py.File, or None for a file
    without /published (every row is the study then)."""
    if "published" not in f:
        return None
    best = None
    for record in f["published"][:]:
        fields = [int(record[name]) for name in
                  ("sequence", "trials", "curves", "state_offset", "state_size", "state_checksum")]
        if fnv1a64(struct.pack("<qqqqqQ", *fields)) != int(record["checksum"]):
            continue  # torn by a crash: the other record holds
        if best is None or fields[0] > best[0]:
            best = fields
    if best is None:
        fail("h5py: /published has no valid record")
    return best[1], best[2]

TRIAL_HEAD = ["trial_id", "status", "objective"]
TRIAL_TAIL = ["epochs", "duration_s", "group", "message", "start_time_s"]
CURVE_HEAD = ["trial_id", "epoch"]
ROOT_ATTRIBUTES = ["config", "metric_name", "metric_goal", "world_size", "start_time", "version"]


def fail(message):
    print(f"check_study_readable: {message}", file=sys.stderr)
    sys.exit(1)


def check_columns(what, actual, expected):
    if list(actual) != expected:
        fail(f"{what}: columns {list(actual)}, expected {expected}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("rows", type=int)
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--metric", action="append", default=[])
    parser.add_argument("--curve-rows", type=int, default=None)
    args = parser.parse_args()

    import h5py
    import pandas

    trial_columns = TRIAL_HEAD + args.param + TRIAL_TAIL
    curve_columns = CURVE_HEAD + args.metric

    with h5py.File(args.path, "r") as f:
        for name in ("trials", "curves"):
            if name not in f:
                fail(f"h5py: no /{name} dataset")
        counts = published_rows(f)
        trial_rows = len(f["trials"]) if counts is None else counts[0]
        curve_rows = len(f["curves"]) if counts is None else counts[1]
        trials = pandas.DataFrame(f["trials"][:trial_rows])
        curves = pandas.DataFrame(f["curves"][:curve_rows])
        missing = [name for name in ROOT_ATTRIBUTES if name not in f.attrs]
        if missing:
            fail(f"h5py: missing root attributes {missing}")
        for name in ROOT_ATTRIBUTES:
            _ = f.attrs[name]
    if len(trials) != args.rows:
        fail(f"h5py/pandas: /trials has {len(trials)} rows, expected {args.rows}")
    check_columns("h5py/pandas /trials", trials.columns, trial_columns)
    check_columns("h5py/pandas /curves", curves.columns, curve_columns)
    if args.curve_rows is not None and len(curves) != args.curve_rows:
        fail(f"h5py/pandas: /curves has {len(curves)} rows, expected {args.curve_rows}")
    statuses = {s.decode() for s in trials["status"]}
    if not statuses <= {"completed", "stopped", "failed", "running"}:
        fail(f"h5py/pandas: unexpected status values {sorted(statuses)}")

    with warnings.catch_warnings():
        # Column names such as "optimizer.lr" are fine for us; PyTables warns about them.
        warnings.simplefilter("ignore")
        try:
            table = pandas.read_hdf(args.path, "trials").iloc[:trial_rows]
            curve_table = pandas.read_hdf(args.path, "curves").iloc[:curve_rows]
        except Exception as error:  # report any failure of the reader as a mismatch
            fail(f"pandas.read_hdf: {type(error).__name__}: {error}")
    if len(table) != args.rows:
        fail(f"pandas.read_hdf: /trials has {len(table)} rows, expected {args.rows}")
    check_columns("pandas.read_hdf /trials", table.columns, trial_columns)
    check_columns("pandas.read_hdf /curves", curve_table.columns, curve_columns)
    if len(curve_table) != len(curves):
        fail(f"pandas.read_hdf: /curves has {len(curve_table)} rows, h5py {len(curves)}")
    if list(table["trial_id"]) != list(trials["trial_id"]):
        fail("pandas.read_hdf and h5py disagree on trial_id")
    print(f"check_study_readable: {args.path}: {len(table)} trials, {len(curve_table)} curve rows")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Results unchanged across a refactoring: runs each CONFIG with two builds of hpo (BEFORE, AFTER) on
one group of ranks_per_trial ranks (a sequential, so deterministic, sweep) and compares the two
studies' /trials and /curves rows, every column but times: parameters, status, epochs, objective
values. Prints `same` or `DIFFERENT` (with the first difference) per config; exits 1 on any
difference or failed sweep.

  /usr/bin/python3 scripts/compare-studies.py BEFORE/hpo AFTER/hpo CONFIG...

Run it from the repository root (configs name programs and data relative to it); the sweeps'
output goes under /tmp/compare-studies.
"""

import os
import re
import shutil
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "mpi"))
sys.dont_write_bytecode = True
from hpo_test_support import published_rows  # noqa: E402

OUTPUT = "/tmp/compare-studies"
TIME_COLUMNS = ("time", "duration", "start", "end", "elapsed", "_s")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1")


def rows(study, table):
    """The table's published rows, each a {column: repr(value)} without time columns (repr: a
    NaN, an inactive conditional parameter, equals itself)."""
    with h5py.File(study, "r") as f:
        return [{name: repr(row[name].tolist()) for name in row.dtype.names
                 if not any(part in name for part in TIME_COLUMNS)}
                for row in published_rows(f, table)]


def sweep(hpo, config, label):
    """The config's study as run by `hpo`: {table: rows}, or None (and why) when it failed."""
    with open(config) as f:
        found = re.search(r"^ranks_per_trial: *(\d+)", f.read(), re.M)
    output = os.path.join(OUTPUT, "%s-%s" % (os.path.basename(config), label))
    shutil.rmtree(output, ignore_errors=True)
    done = subprocess.run(["mpirun", "--oversubscribe", "-np", found.group(1) if found else "1",
                           hpo, "sweep", "--config", config, "--output", output],
                          capture_output=True, text=True, env=ENV)
    if done.returncode != 0:
        return None, "exit %d: %s" % (done.returncode, done.stderr[-800:])
    study = os.path.join(output, "study.h5")
    return {table: rows(study, table) for table in ("trials", "curves")}, ""


def first_difference(before, after):
    for table in ("trials", "curves"):
        for old, new in zip(before[table], after[table]):
            if old != new:
                return table, {k: (old[k], new.get(k)) for k in old if old[k] != new.get(k)}
    return "rows", "%d/%d trials" % (len(before["trials"]), len(after["trials"]))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    before_hpo, after_hpo, configs = sys.argv[1], sys.argv[2], sys.argv[3:]
    failures = 0
    for config in configs:
        before, why = sweep(before_hpo, config, "before")
        after, why_after = sweep(after_hpo, config, "after") if before else (None, "")
        if before is None or after is None:
            print("FAILED %s: %s" % (config, why or why_after))
            failures += 1
        elif before == after:
            print("same %s: %d trials, %d curve rows" % (config, len(before["trials"]),
                                                       len(before["curves"])))
        else:
            print("DIFFERENT %s: first in %s %s" % ((config,) + first_difference(before, after)))
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How long `hpo report --html` takes for a large study, and how long the page takes to open in
headless Chromium (Debian's `chromium`).

Writes a study of --trials trials (default 10,000) with h5py in the study file's layout (four
hyperparameters, a 9-epoch curve per trial, 70% completed, 25% stopped by a rung, 5% failed, on
16 groups with start times), runs `hpo report STUDY --html PAGE` (which also computes the fANOVA
importance), then loads the page --runs times with `chromium --headless --dump-dom` and reads the
times the page records on <html> (performance.now() from navigation start, so HTML and JSON
parsing included): data-render-ms, the first screen drawn and laid out, and data-frame-ms, that
frame painted (canvases rasterised); the views below the first screen are drawn one task each
after it. Each run also loads PAGE#all-at-once, which draws every view before the first frame,
for the whole page's cost. Prints one line per run and the medians; exits 77 when chromium or
h5py is missing.

  bench/report_open_time.py --hpo build/hpo [--trials 10000] [--runs 5]
"""

import argparse
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

CONFIG = """sweep:
  method: random
  metric: {name: val_loss, goal: minimize}
  run_cap: %d
  parameters:
    lr: {min: 0.0001, max: 0.1, distribution: log_uniform_values}
    width: {min: 8, max: 256, distribution: int_uniform}
    optimizer: {values: [sgd, adam, adamw]}
    dropout: {min: 0.0, max: 0.5}
  early_terminate: {type: hyperband, min_iter: 1, eta: 3}
task: synthetic
epochs: 9
ranks_per_trial: 1
"""


def write_study(path, trials, seed=1):
    import h5py
    import numpy as np
    rng = random.Random(seed)
    groups = 16
    trial_dtype = np.dtype([("trial_id", "<i8"), ("status", "S16"), ("objective", "<f8"),
                            ("lr", "<f8"), ("width", "<i8"), ("optimizer", "S8"),
                            ("dropout", "<f8"), ("epochs", "<i8"), ("duration_s", "<f8"),
                            ("group", "<i8"), ("message", "S256"), ("start_time_s", "<f8")])
    rows = np.zeros(trials, trial_dtype)
    curves = []
    clock = [1.8e9] * groups
    for i in range(trials):
        lr = 10 ** rng.uniform(-4, -1)
        width = rng.randint(8, 256)
        optimizer = rng.choice(["sgd", "adam", "adamw"])
        dropout = rng.uniform(0, 0.5)
        floor = (math.log10(lr) + 2.5) ** 2 * 0.3 + 0.05 * dropout + (0.1 if optimizer == "sgd"
                                                                     else 0.0)
        r = rng.random()
        status = "completed" if r < 0.7 else "stopped" if r < 0.95 else "failed"
        epochs = 9 if status == "completed" else rng.choice([1, 3]) if status == "stopped" else 1
        values = [floor + 1.0 / e + rng.gauss(0, 0.02) for e in range(1, epochs + 1)]
        objective = values[-1] if status != "failed" else float("nan")
        group = min(range(groups), key=lambda g: clock[g])
        duration = 2.0 * epochs + rng.uniform(0, 1)
        start = clock[group] + rng.uniform(0, 0.2)
        clock[group] = start + duration
        message = {"stopped": "stopped at rung %d" % epochs, "failed": "loss is NaN"}.get(status,
                                                                                         "")
        rows[i] = (i, status.encode(), objective, lr, width, optimizer.encode(), dropout, epochs,
                   duration, group, message.encode(), start)
        for e, v in enumerate(values, 1):
            curves.append((i, e, v if status != "failed" else float("nan")))
    curve_dtype = np.dtype([("trial_id", "<i8"), ("epoch", "<i8"), ("val_loss", "<f8")])
    with h5py.File(path, "w") as f:
        f.create_dataset("trials", data=rows, maxshape=(None,), chunks=(64,))
        f.create_dataset("curves", data=np.array(curves, curve_dtype), maxshape=(None,),
                         chunks=(512,))
        for name, value in (("config", CONFIG % trials), ("metric_name", "val_loss"),
                            ("metric_goal", "minimize"), ("start_time", "2027-01-15T08:00:00Z"),
                            ("version", "bench")):
            f.attrs[name] = np.bytes_(value)
        f.attrs["world_size"] = np.int64(groups)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", help="copy the page here")
    args = parser.parse_args()
    browser = shutil.which("chromium")
    try:
        import h5py  # noqa: F401
    except ImportError:
        browser = None
    if browser is None:
        print("SKIP: needs chromium and python3-h5py")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="hpo_report_bench_")
    try:
        study = os.path.join(tmp, "study.h5")
        page = os.path.join(tmp, "report.html")
        write_study(study, args.trials)
        began = time.monotonic()
        subprocess.run([os.path.abspath(args.hpo), "report", study, "--html", page],
                       check=True, capture_output=True)
        report_s = time.monotonic() - began
        size = os.path.getsize(page)
        print("hpo report --html: %d trials in %.2f s (fANOVA included), page %.1f MB" %
              (args.trials, report_s, size / 1e6))
        if args.keep:
            shutil.copy(page, args.keep)
        first, whole = [], []
        for run in range(args.runs):
            for url, into in (("file://" + page, first), ("file://" + page + "#all-at-once", whole)):
                done = subprocess.run(
                    [browser, "--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1400,1000", "--dump-dom", url],
                    capture_output=True, text=True, timeout=120)
                found = dict(re.findall(r'data-([a-z]+)-ms="(\d+)"', done.stdout))
                errors = re.search(r'<div id="hpo-errors" class="errors">([^<]+)</div>',
                                   done.stdout)
                if "render" not in found or "frame" not in found or errors:
                    print("page did not draw: %s" %
                          (errors.group(1) if errors else done.stderr[-2000:]))
                    sys.exit(1)
                into.append((float(found["render"]), float(found["frame"])))
            print("run %d: first screen drawn %.0f ms, painted %.0f ms; whole page (#all-at-once) "
                  "drawn %.0f ms, painted %.0f ms" % ((run + 1,) + first[-1] + whole[-1]))

        def median(values):
            return sorted(values)[len(values) // 2]
        print("median over %d runs: first screen painted %.0f ms after navigation start; whole "
              "page painted %.0f ms" % (args.runs, median([f for _, f in first]),
                                        median([f for _, f in whole])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The tabular blackbox of bench/peers/ (_curves.py, _export_curves.py, asha_replay's --curves
mode).

    check_peer_blackbox.py REPO_ROOT [HPO_BENCH_ASHA_REPLAY]

On a small study file and config it writes (not the recorded pool), checks that:
- _export_curves.py keeps exactly the published completed trials that ran every epoch, in trial
  order, with their parameters and curves, and writes the same bytes twice;
- the nearest-neighbour lookup maps a recorded configuration to itself and a nearby one (a
  slightly different learning rate, momentum) to its recorded neighbour, with categorical
  parameters as a mismatch;
- given the bench binary: the C++ blackbox picks the same rows as the Python one for recorded,
  nearby and random points, its hpo_random sweep passes its own check, and the oracle that judges
  each trial after 1 epoch costs no more, seed by seed, than the one judging after 3, random
  search or the curve scheduler on the same draws;
- given the bench binary: --calibration counts a curve recorded twice once (the recorded
  Fashion-MNIST outcome curves: 15 rows, 13 curves, every line check=ok), and fails on curves
  that stay flat and then jump by amounts their start cannot tell (the predictor is overconfident
  there); --references N predicts from every set of N other curves (C(12, 2) = 66 per curve
  there), N = 12 (every other curve) gives the default's numbers, and N = 13 is refused.
Needs h5py and PyYAML (/usr/bin/python3 on the machine image), no peer environment.
"""

import math
import os
import random
import struct
import subprocess
import sys
import tempfile

import h5py
import numpy

CONFIG = """sweep:
  method: random
  metric: {name: val_accuracy, goal: maximize}
  run_cap: 4
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    batch_size: {values: [32, 64, 128]}
    optimizer: {values: [sgd, adam]}
    momentum: {distribution: uniform, min: 0.0, max: 0.9}
task: fashion_mnist
epochs: 3
seed: 1
"""
# trial_id, status, lr, batch_size, optimizer, momentum, epochs, curve
TRIALS = [
    (0, b"completed", 0.001, 64, b"sgd", 0.5, 3, [0.5, 0.6, 0.7]),
    (1, b"stopped", 0.01, 32, b"adam", 0.1, 1, [0.3]),
    (2, b"completed", 0.05, 128, b"adam", 0.8, 3, [0.6, 0.8, 0.9]),
    (3, b"completed", 0.0002, 32, b"sgd", 0.2, 3, [0.1, 0.2, 0.3]),
    (4, b"completed", 0.002, 64, b"adam", 0.5, 3, [0.7, 0.85, 0.88]),
    (5, b"completed", 0.003, 64, b"sgd", 0.4, 3, [0.4, 0.45, 0.5]),  # not published
]
PUBLISHED = 5  # rows of /trials that the study's /published record counts


def fnv1a64(data):
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def write_study(path):
    trial_type = numpy.dtype([("trial_id", "<i8"), ("status", "S16"), ("objective", "<f8"),
                              ("lr", "<f8"), ("batch_size", "<i8"), ("optimizer", "S4"),
                              ("momentum", "<f8"), ("epochs", "<i8"), ("duration_s", "<f8"),
                              ("group", "<i8"), ("message", "S8"), ("start_time_s", "<f8")])
    curve_type = numpy.dtype([("trial_id", "<i8"), ("epoch", "<i8"), ("train_loss", "<f8"),
                              ("val_accuracy", "<f8")])
    trials, curves = [], []
    for trial_id, status, lr, batch, optimizer, momentum, epochs, curve in TRIALS:
        trials.append((trial_id, status, curve[-1], lr, batch, optimizer, momentum, epochs, 1.0,
                       1, b"", 0.0))
        curves += [(trial_id, e + 1, 1.0, value) for e, value in enumerate(curve)]
    published_curves = sum(len(t[7]) for t in TRIALS[:PUBLISHED])
    trials.append((-1, b"", 0.0, 0.0, 0, b"", 0.0, 0, 0.0, 0, b"", 0.0))  # a fill row
    fields = [1, PUBLISHED, published_curves, 0, 0, 0]
    record = tuple(fields) + (fnv1a64(struct.pack("<qqqqqQ", *fields)),)
    record_type = numpy.dtype([(name, "<i8") for name in ("sequence", "trials", "curves",
                                                          "state_offset", "state_size")] +
                              [("state_checksum", "<u8"), ("checksum", "<u8")])
    stale = (0, 1, 3, 0, 0, 0, 12345)  # a record whose checksum does not hold
    with h5py.File(path, "w") as f:
        f["trials"] = numpy.array(trials, dtype=trial_type)
        f["curves"] = numpy.array(curves, dtype=curve_type)
        f["published"] = numpy.array([record, stale], dtype=record_type)
        f.attrs["metric_name"] = "val_accuracy"


def check_calibration(root, bench):
    """Problems with asha_replay's --calibration mode (see the top of the file)."""
    problems = []
    outcome = [bench, "--curves", os.path.join(root, "bench", "peers", "data",
                                               "fmnist_outcome_curves.csv"),
               "--config", os.path.join(root, "bench", "configs", "fmnist_outcome_bohb.yaml"),
               "--calibration"]
    done = subprocess.run(outcome, capture_output=True, text=True)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 8 or \
            not all(" curves=13 " in line and line.endswith("check=ok") for line in lines):
        problems.append("--calibration on the outcome curves: exit %d\n%s%s" %
                        (done.returncode, done.stdout, done.stderr))
    problems += check_calibration_references(outcome, lines)
    with tempfile.TemporaryDirectory() as folder:
        config = os.path.join(folder, "config.yaml")
        with open(config, "w") as f:
            f.write(CONFIG)
        csv_path = os.path.join(folder, "jumps.csv")
        with open(csv_path, "w") as f:
            f.write("study,trial_id,lr,batch_size,optimizer,momentum,%s\n"
                    % ",".join("val_accuracy_%d" % e for e in range(1, 10)))
            for trial in range(8):
                final = 0.9 if trial % 2 else 0.5
                f.write("0,%d,0.001,64,sgd,%g,%s,%g\n"
                        % (trial, trial / 10, ",".join(["0.5"] * 8), final))
        done = subprocess.run([bench, "--curves", csv_path, "--config", config,
                               "--calibration"], capture_output=True, text=True)
        if done.returncode != 1 or "check=FAILED" not in done.stdout:
            problems.append("--calibration passed curves whose jumps no start foretells: exit "
                            "%d\n%s%s" % (done.returncode, done.stdout, done.stderr))
    return problems


def without_reference_counts(line):
    """A calibration line without its references= and predictions= fields."""
    return " ".join(field for field in line.split()
                    if not field.startswith(("references=", "predictions=")))


def check_calibration_references(outcome, default_lines):
    """Problems with --calibration --references N on the outcome curves (`outcome` the command
    without it, `default_lines` its output)."""
    problems = []
    done = subprocess.run(outcome + ["--references", "2"], capture_output=True, text=True)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 8 or \
            not all(" references=2 predictions=858 " in line for line in lines):
        problems.append("--calibration --references 2: exit %d\n%s%s" %
                        (done.returncode, done.stdout, done.stderr))
    elif [without_reference_counts(line) for line in lines] == \
            [without_reference_counts(line) for line in default_lines]:
        problems.append("--references 2 predicts as every other curve does:\n" + done.stdout)
    done = subprocess.run(outcome + ["--references", "12"], capture_output=True, text=True)
    if done.returncode != 0 or \
            [without_reference_counts(line) for line in done.stdout.splitlines()] != \
            [without_reference_counts(line) for line in default_lines]:
        problems.append("--references 12 (every other curve) differs from the default:\n%s%s"
                        % (done.stdout, done.stderr))
    done = subprocess.run(outcome + ["--references", "13"], capture_output=True, text=True)
    if done.returncode == 0 or "--references 13" not in done.stderr:
        problems.append("--references 13 of 13 curves was not refused: exit %d\n%s%s"
                        % (done.returncode, done.stdout, done.stderr))
    return problems


def check_export(root, study, csv_path):
    """Problems with _export_curves.py's CSV of `study`: it must be byte-identical on a second
    run and hold the expected rows."""
    problems = []
    export = [sys.executable, os.path.join(root, "bench", "peers", "_export_curves.py"), study]
    subprocess.run(export + ["-o", csv_path], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(export + ["-o", csv_path + ".again"], check=True, stdout=subprocess.DEVNULL)
    with open(csv_path) as f:
        text = f.read()
    with open(csv_path + ".again") as f:
        if f.read() != text:
            problems.append("_export_curves.py wrote different bytes for the same study")
    expected = ("study,trial_id,lr,batch_size,optimizer,momentum,"
                "val_accuracy_1,val_accuracy_2,val_accuracy_3\n"
                "0,0,0.001,64,sgd,0.5,0.5,0.6,0.7\n"
                "0,2,0.05,128,adam,0.8,0.6,0.8,0.9\n"
                "0,3,0.0002,32,sgd,0.2,0.1,0.2,0.3\n"
                "0,4,0.002,64,adam,0.5,0.7,0.85,0.88\n")
    if text != expected:
        problems.append("_export_curves.py wrote\n%s\nnot\n%s" % (text, expected))
    return problems


def check_lookup(table, queries, wanted):
    """Problems with the Python blackbox's lookups: nearest rows, a curve, an invalid choice."""
    problems = []
    if (table.metric, table.epochs) != ("val_accuracy", 3):
        problems.append("the CSV reads as metric %s, %d epochs" % (table.metric, table.epochs))
    for query, row in zip(queries, wanted):
        if table.nearest(query) != row:
            problems.append("nearest(%s) is row %d, not %d" % (query, table.nearest(query), row))
    if table.curve(queries[-1]) != [0.7, 0.85, 0.88]:
        problems.append("curve(%s) is %s" % (queries[-1], table.curve(queries[-1])))
    try:
        table.nearest({"lr": 0.001, "batch_size": 48, "optimizer": "sgd", "momentum": 0.5})
        problems.append("a batch_size outside the space's values was accepted")
    except ValueError:
        pass
    return problems


def lookup_queries(table):
    """(queries, the rows they must find): every row's own settings, then three near misses."""
    queries = [dict(c) for c in table.configs]
    wanted = list(range(len(table.configs)))
    # nearby: a little off in lr and momentum, same choices
    queries.append({"lr": 0.0011, "batch_size": 64, "optimizer": "sgd", "momentum": 0.45})
    wanted.append(0)
    queries.append({"lr": 0.04, "batch_size": 128, "optimizer": "adam", "momentum": 0.9})
    wanted.append(1)
    # row 0's numbers with adam: row 3 (adam, lr 0.002) is nearer than row 0 (a mismatch)
    queries.append({"lr": 0.001, "batch_size": 64, "optimizer": "adam", "momentum": 0.5})
    wanted.append(3)
    return queries, wanted


def check_cpp_nearest(bench, csv_path, config, table, queries):
    """Problems unless the C++ blackbox picks Python's rows for `queries` and 40 random ones."""
    rng = random.Random(7)
    queries = list(queries)
    for _ in range(40):
        queries.append({"lr": math.exp(rng.uniform(math.log(1e-4), math.log(0.1))),
                        "batch_size": rng.choice([32, 64, 128]),
                        "optimizer": rng.choice(["sgd", "adam"]),
                        "momentum": rng.uniform(0.0, 0.9)})
    command = [bench, "--curves", csv_path, "--config", config]
    for query in queries:
        command += ["--nearest", ",".join("%s=%r" % (k, v) if isinstance(v, float)
                                          else "%s=%s" % (k, v) for k, v in query.items())]
    done = subprocess.run(command, capture_output=True, text=True)
    rows = [int(line.split("=")[1]) for line in done.stdout.split()]
    python_rows = [table.nearest(query) for query in queries]
    if done.returncode != 0 or rows != python_rows:
        return ["the C++ blackbox picks rows %s (exit %d, %s), Python %s" %
                (rows, done.returncode, done.stderr.strip(), python_rows)]
    return []


def check_systems(bench, csv_path, config):
    """Problems with the replay's systems on the blackbox: hpo_random runs; the oracles are lower
    bounds (on every seed, judging after 1 epoch costs no more than after 3, than random search,
    or than the curve scheduler on the same draws); an oracle of 0 epochs is refused."""
    problems = []
    blackbox = [bench, "--curves", csv_path, "--config", config]
    done = subprocess.run(blackbox + ["--target", "0.88", "--system", "hpo_random", "--seeds",
                                      "1-3", "--run-cap", "5"], capture_output=True, text=True)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 3 or \
            not all(line.endswith("check=ok") for line in lines):
        problems.append("hpo_random on the blackbox: exit %d\n%s%s" %
                        (done.returncode, done.stdout, done.stderr))
    costs = {}
    for system in ("oracle_after_1_epoch", "oracle_after_3_epochs", "hpo_random",
                   "hpo_random_curves"):
        done = subprocess.run(blackbox + ["--target", "0.85", "--system", system, "--seeds",
                                          "1-8", "--run-cap", "5"], capture_output=True, text=True)
        costs[system] = [int(line.split(" epochs=")[1].split()[0])
                         for line in done.stdout.splitlines() if " epochs=" in line]
        if done.returncode != 0 or len(costs[system]) != 8:
            problems.append("%s on the blackbox: exit %d\n%s%s" %
                            (system, done.returncode, done.stdout, done.stderr))
    bound = costs["oracle_after_1_epoch"]
    for system in ("oracle_after_3_epochs", "hpo_random", "hpo_random_curves"):
        if len(bound) == 8 and len(costs[system]) == 8 and \
                any(low > cost for low, cost in zip(bound, costs[system])):
            problems.append("the 1-epoch oracle %s is above %s %s" %
                            (bound, system, costs[system]))
    done = subprocess.run(blackbox + ["--target", "0.85", "--system", "oracle_after_0_epochs",
                                      "--seeds", "1-1"], capture_output=True, text=True)
    if done.returncode == 0:
        problems.append("oracle_after_0_epochs was accepted")
    return problems


def main():
    root = os.path.abspath(sys.argv[1])
    bench = sys.argv[2] if len(sys.argv) > 2 else None
    sys.path.insert(0, os.path.join(root, "bench", "peers"))
    import _curves as curves

    with tempfile.TemporaryDirectory() as folder:
        study = os.path.join(folder, "study.h5")
        config = os.path.join(folder, "config.yaml")
        csv_path = os.path.join(folder, "curves.csv")
        write_study(study)
        with open(config, "w") as f:
            f.write(CONFIG)
        problems = check_export(root, study, csv_path)
        table = curves.Curves(curves.parse_space(config), csv_path)
        queries, wanted = lookup_queries(table)
        problems += check_lookup(table, queries, wanted)
        if bench:
            problems += check_cpp_nearest(bench, csv_path, config, table, queries)
            problems += check_systems(bench, csv_path, config)
    if bench:
        problems += check_calibration(root, bench)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("the blackbox's export, lookup%s hold" % (" and C++/Python agreement" if bench else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Population-based training (`pbt:`) against bayes + hyperband on Fashion-MNIST at equal epochs:
the best trial's test accuracy.

Per seed S, two real `hpo sweep` runs of the built-in fashion_mnist CNN (one rank per trial, 2
groups: mpirun -np 2), the same space (lr, batch_size, optimizer, weight_decay, dropout, width)
and EPOCHS epochs per trial:
  pbt              method random draws POPULATION members; every INTERVAL epochs the bottom
                   quarter is replaced by copies of the top quarter, lr, weight_decay, dropout and
                   batch_size explored: POPULATION x EPOCHS epochs in all;
  bayes+hyperband  the default TPE with ASHA (min_iter 1, eta 3); run_cap RUN_CAP (default: the
                   one that gives about POPULATION x EPOCHS epochs at ASHA's usual 2.4 epochs per
                   trial; the epochs each sweep trained are printed, so the comparison says how
                   equal they were).
hpo evaluates each sweep's best trial (by validation accuracy) on the held-out test split. One
line per method and seed:

    bench=pbt method=M seed=S epochs=N trials=T best_val=V test_accuracy=A check=ok|FAILED

and a summary line per method with the medians. check=ok when the sweep exited 0, every trial's
`epochs` equals its /curves rows, and (pbt) every child's parent had reached parent_epoch and a
child's curve starts after it.

Usage: bench/pbt.py --hpo build/hpo [--seeds 1-3] [--population 6] [--epochs 6] [--interval 2]
           [--train-samples 8000] [--validation-samples 2000] [--run-cap N] [--keep DIR]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import h5py

FASHION = "/usr/share/datasets/fashion-mnist"
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}

SPACE = """  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.01}
    batch_size: {values: [64, 128, 256]}
    optimizer: {values: [adam, adamw]}
    weight_decay: {distribution: log_uniform_values, min: 0.000001, max: 0.001}
    dropout: {distribution: q_uniform, min: 0.0, max: 0.5, q: 0.05}
    width: {values: [16, 32, 48]}
"""


def config_text(method, args, seed, run_cap):
    lines = ["sweep:"]
    if method == "pbt":
        lines += ["  method: random", "  run_cap: %d" % args.population]
    else:
        lines += ["  method: bayes", "  run_cap: %d" % run_cap,
                  "  early_terminate: {type: hyperband, min_iter: 1, eta: 3}"]
    lines += ["  metric: {name: val_accuracy, goal: maximize}"]
    text = "\n".join(lines) + "\n" + SPACE
    if method == "pbt":
        text += ("pbt:\n  population: %d\n  perturbation_interval: %d\n  quantile: 0.25\n"
                 "  mutations: [lr, weight_decay, dropout, batch_size]\n"
                 % (args.population, args.interval))
    else:
        text += "search: {startup_trials: %d}\n" % max(2, args.population // 2)
    text += ("task: fashion_mnist\ntrain_samples: %d\nvalidation_samples: %d\nepochs: %d\n"
             "ranks_per_trial: 1\nseed: %d\n"
             % (args.train_samples, args.validation_samples, args.epochs, seed))
    return text


def attribute(f, name):
    value = f.attrs.get(name)
    return None if value is None else float(value)


def read_study(path):
    """(trials {id: last row}, curves {id: [epochs]}, test_accuracy)."""
    with h5py.File(path, "r") as f:
        trials = {int(r["trial_id"]): r for r in f["trials"][:] if r["trial_id"] >= 0}
        curves = {}
        for r in f["curves"][:]:
            if r["trial_id"] >= 0:
                curves.setdefault(int(r["trial_id"]), []).append(int(r["epoch"]))
        test = attribute(f, "test_accuracy")
    return trials, curves, test


def check(method, trials, curves):
    problems = []
    for trial_id, row in trials.items():
        epochs = curves.get(trial_id, [])
        if int(row["epochs"]) != len(epochs) or epochs != sorted(set(epochs)):
            problems.append("trial %d: epochs %d, curve %s" % (trial_id, int(row["epochs"]), epochs))
        if method != "pbt" or int(row["parent_trial"]) < 0:
            continue
        parent, at = int(row["parent_trial"]), int(row["parent_epoch"])
        if at not in curves.get(parent, []) or (epochs and epochs[0] != at + 1):
            problems.append("trial %d: parent %d at epoch %d" % (trial_id, parent, at))
    return problems


def sweep(hpo, folder, method, text):
    os.makedirs(folder, exist_ok=True)
    config = os.path.join(folder, "config.yaml")
    with open(config, "w") as f:
        f.write(text)
    output = os.path.join(folder, "out")
    done = subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", hpo,
                           "sweep", "--config", config, "--output", output],
                          capture_output=True, text=True, env=dict(os.environ, **MPI_ENV))
    return done.returncode, done.stdout + done.stderr, os.path.join(output, "study.h5")


def seeds_of(text):
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--seeds", default="1-3")
    parser.add_argument("--population", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--interval", type=int, default=2)
    parser.add_argument("--train-samples", type=int, default=8000)
    parser.add_argument("--validation-samples", type=int, default=2000)
    parser.add_argument("--run-cap", type=int, default=0)
    parser.add_argument("--keep", default="")
    args = parser.parse_args()
    if not os.path.isdir(FASHION):
        print("bench=pbt skipped: %s is missing" % FASHION)
        return 0
    run_cap = args.run_cap or max(2, round(args.population * args.epochs / 2.4))
    root = args.keep or tempfile.mkdtemp(prefix="hpo-bench-pbt-")
    results = {"pbt": [], "bayes+hyperband": []}
    failed = False
    for seed in seeds_of(args.seeds):
        for method in results:  # interleaved: both see the same machine noise
            folder = os.path.join(root, "%s-%d" % (method.replace("+", "_"), seed))
            shutil.rmtree(folder, ignore_errors=True)
            rc, log, study = sweep(args.hpo, folder, method,
                                   config_text(method, args, seed, run_cap))
            problems = ["exit code %d: %s" % (rc, log[-2000:])] if rc != 0 else []
            epochs = trials_count = 0
            best = test = float("nan")
            if rc == 0:
                trials, curves, test = read_study(study)
                problems += check(method, trials, curves)
                epochs = sum(len(c) for c in curves.values())
                trials_count = len(trials)
                best = max(float(r["objective"]) for r in trials.values())
                if test is None:
                    problems.append("no test_accuracy")
                    test = float("nan")
            ok = not problems
            failed |= not ok
            results[method].append((epochs, test, best))
            print("bench=pbt method=%s seed=%d epochs=%d trials=%d best_val=%.4f test_accuracy=%.4f "
                  "check=%s" % (method, seed, epochs, trials_count, best, test,
                                "ok" if ok else "FAILED"), flush=True)
            for problem in problems:
                print("  " + problem, file=sys.stderr)
    for method, rows in results.items():
        print("bench=pbt method=%s seeds=%d median_epochs=%g median_test_accuracy=%.4f "
              "median_best_val=%.4f check=%s"
              % (method, len(rows), statistics.median(r[0] for r in rows),
                 statistics.median(r[1] for r in rows), statistics.median(r[2] for r in rows),
                 "FAILED" if failed else "ok"))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

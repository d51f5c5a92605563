#!/usr/bin/env python3
"""Warm start (`warm_start:`): how many trials a sweep needs to reach the best value of an earlier
sweep of the same problem, seeded with that sweep's trials against a cold start.

Per problem and seed S, three real `hpo sweep` runs of a command trial (the problem's function in
bench/peers/_problems.py, one trial at a time: mpirun -np 1), method bayes (hpo's default, the
multivariate TPE) with run_cap TRIALS each:
  earlier  seed S;
  warm     seed S + 1000, warm_start: [the earlier sweep's output];
  cold     seed S + 1000, no warm start.
A sweep's trials-to-reach is the number of its first trials (in trial id order) until one is at
least as good as the earlier sweep's best (minimised); TRIALS + 1 when none is. One line per
problem and seed:

    bench=warm_start function=F seed=S earlier_best=V warm_trials=N cold_trials=N
    warm_best=V cold_best=V check=ok|FAILED

and a summary line per problem with the medians and their ratio (warm / cold). check=ok when
every sweep exited 0 with TRIALS completed trials and the warm sweep's log says it used all of
the earlier sweep's trials.

Usage: bench/warm_start.py --hpo build/hpo [--functions hartmann6,mixed8] [--seeds 1-10]
           [--trials 40]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "peers"))
from _problems import PROBLEMS  # noqa: E402

PROGRAM = """import sys
sys.path.insert(0, %r)
from _problems import PROBLEMS
problem = PROBLEMS[%r]
params = {p.name: p for p in problem.params}
values = {}
for arg in sys.argv[1:]:
    name, text = arg[2:].split("=", 1)
    param = params[name]
    if param.kind == "categorical":
        values[name] = next(v for v in param.values if str(v) == text)
    else:
        values[name] = int(text) if param.kind == "int" else float(text)
print("loss=%%r" %% problem.evaluate(values))
"""

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def parameter_yaml(param):
    if param.kind == "float":
        return "{distribution: uniform, min: %r, max: %r}" % (param.low, param.high)
    if param.kind == "log":
        return "{distribution: log_uniform_values, min: %r, max: %r}" % (param.low, param.high)
    if param.kind == "int":
        return "{distribution: int_uniform, min: %d, max: %d}" % (param.low, param.high)
    return "{values: [%s]}" % ", ".join(str(v) for v in param.values)


def config_text(problem, program, seed, trials, warm_start=None):
    lines = ["sweep:", "  program: %s" % program, "  method: bayes",
             "  metric: {name: loss, goal: minimize}", "  run_cap: %d" % trials, "  parameters:"]
    lines += ["    %s: %s" % (p.name, parameter_yaml(p)) for p in problem.params]
    lines += ["interpreter: /usr/bin/python3", "seed: %d" % seed]
    if warm_start:
        lines.append("warm_start: [%s]" % warm_start)
    return "\n".join(lines) + "\n"


def sweep(hpo, folder, name, text):
    """Runs one sweep; returns (its objectives in trial id order, its log, ok)."""
    config = os.path.join(folder, name + ".yaml")
    with open(config, "w") as f:
        f.write(text)
    output = os.path.join(folder, name)
    done = subprocess.run(["mpirun", "--oversubscribe", "-np", "1", hpo, "sweep", "--config",
                           config, "--output", output], capture_output=True, text=True,
                          env=dict(os.environ, **MPI_ENV), timeout=1800)
    log = done.stdout + done.stderr
    if done.returncode != 0:
        return [], log, False
    with h5py.File(os.path.join(output, "study.h5"), "r") as f:
        rows = sorted((int(r["trial_id"]), float(r["objective"]), r["status"])
                      for r in f["trials"][:])
    objectives = [objective for _, objective, status in rows if status == b"completed"]
    return objectives, log, len(objectives) == len(rows)


def trials_to_reach(objectives, target):
    for count, value in enumerate(objectives, 1):
        if value <= target:
            return count
    return len(objectives) + 1


def parse_seeds(text):
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--functions", default="hartmann6,mixed8")
    parser.add_argument("--seeds", default="1-10")
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    hpo = os.path.abspath(args.hpo)
    failed = False
    for function in args.functions.split(","):
        problem = PROBLEMS[function]
        warm_counts, cold_counts = [], []
        for seed in parse_seeds(args.seeds):
            with tempfile.TemporaryDirectory(prefix="hpo-warm-start-") as folder:
                program = os.path.join(folder, "trial.py")
                with open(program, "w") as f:
                    f.write(PROGRAM % (os.path.join(HERE, "peers"), function))
                earlier, _, ok_earlier = sweep(
                    hpo, folder, "earlier", config_text(problem, program, seed, args.trials))
                warm, warm_log, ok_warm = sweep(
                    hpo, folder, "warm", config_text(problem, program, seed + 1000, args.trials,
                                                     os.path.join(folder, "earlier")))
                cold, _, ok_cold = sweep(
                    hpo, folder, "cold", config_text(problem, program, seed + 1000, args.trials))
            used = "warm start: %d of %d trials" % (args.trials, args.trials)
            ok = (ok_earlier and ok_warm and ok_cold and len(earlier) == args.trials and
                  len(warm) == args.trials and len(cold) == args.trials and used in warm_log)
            failed |= not ok
            if not ok:
                print("bench=warm_start function=%s seed=%d check=FAILED" % (function, seed))
                print(warm_log[-2000:], file=sys.stderr)
                continue
            best = min(earlier)
            warm_counts.append(trials_to_reach(warm, best))
            cold_counts.append(trials_to_reach(cold, best))
            print("bench=warm_start function=%s seed=%d earlier_best=%.6g warm_trials=%d "
                  "cold_trials=%d warm_best=%.6g cold_best=%.6g check=ok"
                  % (function, seed, best, warm_counts[-1], cold_counts[-1], min(warm),
                     min(cold)), flush=True)
        if warm_counts:
            warm_median = statistics.median(warm_counts)
            cold_median = statistics.median(cold_counts)
            print("bench=warm_start function=%s seeds=%d trials=%d median_warm_trials=%g "
                  "median_cold_trials=%g ratio=%.2f warm_reached=%d cold_reached=%d"
                  % (function, len(warm_counts), args.trials, warm_median, cold_median,
                     warm_median / cold_median,
                     sum(c <= args.trials for c in warm_counts),
                     sum(c <= args.trials for c in cold_counts)), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

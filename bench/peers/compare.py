#!/usr/bin/env python3
"""hpo beside its peers, in one run: overhead, search quality and compute to target.

    bench/peers/compare.py [--build build] [--comparisons overhead,quality,target]
                           [--systems NAME,...] [--trials 1000] [--repeats 1] [--seeds 20]
                           [--target-seeds 10] [--targets 0.865,0.87]
                           [--curves bench/peers/data/fmnist_long_curves.csv] [--log FILE]
    bench/peers/compare.py --from-log FILE       # the tables and goals of a recorded run

Install the peers first (bench/peers/install.sh, once; each in a virtual environment of its own
under HPO_PEERS_DIR, default /opt/hpo-mpi/peers). This script runs with /usr/bin/python3 and starts
one driver per comparison, each of which runs a system's side in that system's environment:
  _overhead.py  1,000 trials of 0.1-1 s (a sleeping trial and a tiny training step) with 2 slots:
                hpo's built-in and command trials against Ray Tune's Tuner and Optuna with 2
                workers on a journal file, in-process and running the same program
  _quality.py   Branin, Hartmann-6, a mixed 10-D Levy and a mixed 8-D space: hpo's bayes (TPE),
                gp and random against Optuna's TPE (independent, multivariate) and GPSampler,
                SMAC3's HPO facade and HEBO; the best value after 25/50/100 trials per seed
  _target.py    epochs until a trial reaches 0.865 / 0.87 validation accuracy on the recorded
                Fashion-MNIST learning curves: hpo's searchers and ASHA variants against
                syne-tune's ASHA, Hyperband, MOBSTER and DyHPO, DEHB and Ray Tune's ASHA and
                HyperBand
Systems are interleaved (every system's run of one repetition, function or target before the next)
so that each sees the same machine. A system whose environment is missing is skipped with a line
saying so. Every result line is printed as it arrives (and appended to --log); at the end come the
tables (markdown, for bench/RESULTS.md) and one `bench=peer_goal ... outcome=met|missed|unmeasured`
line per goal of issue 35 (bench/peers/_results.py says how each is decided). Exit 1 when a
measurement failed (check=FAILED), else 0: a missed goal is a finding, not a failure.
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _results  # noqa: E402

PEERS_DIR = os.environ.get("HPO_PEERS_DIR", "/opt/hpo-mpi/peers")
DRIVERS = {"overhead": "_overhead.py", "quality": "_quality.py", "target": "_target.py"}
FUNCTIONS = ("branin", "hartmann6", "levy10_mixed", "mixed8")
WORKLOADS = ("sleep", "train")


def list_systems(driver):
    """(name, venv) of a driver's systems; venv is None for hpo's."""
    listing = subprocess.run([sys.executable, os.path.join(HERE, driver), "--list-systems"],
                             check=True, capture_output=True, text=True).stdout
    systems = []
    for line in listing.splitlines():
        name, venv = line.split()
        systems.append((name, None if venv == "-" else venv))
    return systems


def available(systems, chosen, say):
    """The systems to run: those chosen (all when none) whose environment is installed."""
    kept = []
    for name, venv in systems:
        if chosen and name not in chosen:
            continue
        if venv and not os.access(os.path.join(PEERS_DIR, venv, "bin", "python"), os.X_OK):
            say("skipped: %s needs the %s environment (bench/peers/install.sh %s)" %
                (name, venv, venv))
            continue
        kept.append(name)
    return kept


def plan(args, say):
    """The driver command lines to run, in order (systems interleaved)."""
    chosen = set(args.systems.split(",")) if args.systems else set()
    seeds = "1-%d" % args.seeds
    runs = []
    for comparison in args.comparisons.split(","):
        driver = os.path.join(HERE, DRIVERS[comparison])
        systems = available(list_systems(DRIVERS[comparison]), chosen, say)
        base = [sys.executable, driver, "--build", args.build]
        if comparison == "overhead":
            for _ in range(args.repeats):
                for workload in WORKLOADS:
                    for system in systems:
                        runs.append(base + ["--system", system, "--workload", workload,
                                            "--trials", str(args.trials)])
        elif comparison == "quality":
            for function in FUNCTIONS:
                for system in systems:
                    runs.append(base + ["--system", system, "--function", function,
                                        "--seeds", seeds])
        else:
            for system in systems:  # every target from one sweep per seed (_target.py)
                runs.append(base + ["--system", system, "--target", args.targets,
                                    "--seeds", "1-%d" % args.target_seeds,
                                    "--curves", args.curves])
    return runs


def summarize(records, say):
    say(_results.markdown(records))
    for verdict in _results.verdicts(records):
        say(verdict.line())
    problems = _results.failures(records)
    for problem in problems:
        say("failed: " + problem)
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--comparisons", default="overhead,quality,target")
    parser.add_argument("--systems", default="")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--target-seeds", type=int, default=10)
    parser.add_argument("--targets", default="0.865,0.87")
    parser.add_argument("--curves", default=os.path.join(HERE, "data", "fmnist_long_curves.csv"))
    parser.add_argument("--log")
    parser.add_argument("--from-log")
    args = parser.parse_args()
    for comparison in args.comparisons.split(","):
        if comparison not in DRIVERS:
            parser.error("unknown comparison %r (known: %s)" % (comparison, ",".join(DRIVERS)))

    log = open(args.log, "a") if args.log else None

    def say(line):
        print(line, flush=True)
        if log:
            log.write(line + "\n")
            log.flush()

    if args.from_log:
        with open(args.from_log) as f:
            return summarize(_results.parse(f.read()), say)
    records = []
    for command in plan(args, say):
        say("# " + " ".join(os.path.relpath(word) if word.startswith(HERE) else word
                            for word in command[1:]))
        finished = subprocess.run(command, capture_output=True, text=True)
        lines = _results.parse(finished.stdout)
        for line in finished.stdout.splitlines():
            if line.startswith("bench="):
                say(line)
        if finished.returncode != 0 or not lines:
            reason = (finished.stderr.strip().splitlines() or ["no_result_line"])[-1]
            failure = "bench=peer_run system=%s check=FAILED error=exit_%d:%s" % (
                command[command.index("--system") + 1], finished.returncode,
                reason.replace(" ", "_"))
            say(failure)
            lines += _results.parse(failure)
        records.extend(lines)
    return summarize(records, say)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Search quality of hpo's searchers beside today's peers: the best value found per seed.

Each seed is a fresh sequential run of BUDGET trials (default 100) minimizing one problem of
bench/peers/_problems.py (branin, hartmann6, levy10_mixed, mixed8; bench/search_quality.cpp holds
the same ones for hpo). One line per seed:

    bench=peer_quality system=SYSTEM version=PKG-VERSION function=F seed=S best_at_25=V
    best_at_50=V best_at_100=V seconds=T check=ok|FAILED [error=REASON]

best_at_N is the best value of the first N trials (25, 50, 100 within the budget, and the
budget); seconds is the seed's wall time, the function's evaluations included and the peer's
imports not (its worker imports them before the first seed). check=ok when every trial ran and
the values are finite and not below the known minimum (minus 1e-9); a peer that raises, dies or
exceeds --timeout seconds on one seed gives check=FAILED and error=REASON.

Systems (--list-systems prints each with its virtual environment, `-` for hpo's):
- hpo_bayes, hpo_gp, hpo_random: hpo's multivariate TPE as `method: bayes` with no search: keys
  runs it (the Sobol start-up since 2026-11-29), GP and random search; hpo_bayes_sobol: the TPE
  with search.sampler sobol named; hpo_bayes_random_startup: the TPE with random start-up trials
  (search.sampler random, the default before 2026-11-29); all run by
  BUILD/bench/hpo_bench_search_quality --system.
- optuna_tpe: Optuna's TPESampler with its defaults; optuna_tpe_multivariate: multivariate=True
  (group=True only splits conditional spaces into their subspaces; these spaces are flat, and on
  mixed8 it suggests the very same points); optuna_gp: GPSampler. Ask-and-tell, seeded with the
  seed.
- smac_hpo: SMAC3's HyperparameterOptimizationFacade (random forest, deterministic=True,
  n_trials=BUDGET, Scenario seed = the seed), ask-and-tell.
- hebo: HEBO with its default settings (GP, MACE acquisition), one suggestion at a time, numpy,
  torch and the Sobol start seeded with the seed.
A peer runs in a worker process of this script under its own environment's interpreter,
${HPO_PEERS_DIR:-/opt/hpo-mpi/peers}/VENV/bin/python (bench/peers/install.sh installs them; nothing
is fetched here), with one BLAS/OpenMP thread unless OMP_NUM_THREADS says otherwise, and its
logging and output suppressed.

Usage: /usr/bin/python3 bench/peers/_quality.py --system SYSTEM --function F --seeds 1-20
           [--budget 100] [--build BUILD] [--timeout SECONDS]
       /usr/bin/python3 bench/peers/_quality.py --list-systems
"""

import argparse
import math
import os
import random
import selectors
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _problems import PROBLEMS  # noqa: E402 (beside this file, in every interpreter)

ROOT = os.path.dirname(os.path.dirname(HERE))
BUDGETS = (25, 50, 100)

# system -> (virtual environment, the package whose version the lines name); None: hpo's
SYSTEMS = {
    "hpo_bayes": (None, None),
    "hpo_bayes_sobol": (None, None),
    "hpo_bayes_random_startup": (None, None),
    "hpo_gp": (None, None),
    "hpo_random": (None, None),
    "optuna_tpe": ("optuna", "optuna"),
    "optuna_tpe_multivariate": ("optuna", "optuna"),
    "optuna_gp": ("optuna", "optuna"),
    "smac_hpo": ("smac", "smac"),
    "hebo": ("hebo", "hebo"),
}


def budgets_within(budget):
    return [b for b in BUDGETS if b < budget] + [budget]


def clean(text):
    """A value for one key=value field: no whitespace, at most 200 characters."""
    return "_".join(str(text).split())[:200] or "unknown"


def result_line(system, version, function, seed, best_at, seconds, error=None):
    fields = ["bench=peer_quality", "system=" + system, "version=" + version,
              "function=" + function, "seed=%d" % seed]
    fields += ["best_at_%d=%.6g" % (budget, value) for budget, value in best_at]
    fields.append("seconds=%.4g" % seconds)
    fields.append("check=" + ("FAILED" if error else "ok"))
    if error:
        fields.append("error=" + clean(error))
    return " ".join(fields)


# ---- the workers: each runs under its peer's interpreter ----

def run_optuna(system, problem, seed, budget, objective):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    if system == "optuna_gp":
        sampler = optuna.samplers.GPSampler(seed=seed)
    else:
        sampler = optuna.samplers.TPESampler(seed=seed,
                                             multivariate=system == "optuna_tpe_multivariate")
    study = optuna.create_study(direction="minimize", sampler=sampler)
    for _ in range(budget):
        trial = study.ask()
        assignment = {}
        for p in problem.params:
            if p.kind == "categorical":
                assignment[p.name] = trial.suggest_categorical(p.name, p.values)
            elif p.kind == "int":
                assignment[p.name] = trial.suggest_int(p.name, p.low, p.high)
            else:
                assignment[p.name] = trial.suggest_float(p.name, p.low, p.high,
                                                         log=p.kind == "log")
        study.tell(trial, objective(assignment))


def run_smac(system, problem, seed, budget, objective):
    from ConfigSpace import Categorical, ConfigurationSpace, Float, Integer
    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.runhistory.dataclasses import TrialValue

    space = ConfigurationSpace(seed=seed)
    for p in problem.params:
        if p.kind == "categorical":
            space.add(Categorical(p.name, p.values))
        elif p.kind == "int":
            space.add(Integer(p.name, (p.low, p.high)))
        else:
            space.add(Float(p.name, (p.low, p.high), log=p.kind == "log"))

    def unused_target(config, seed=0):
        raise RuntimeError("ask-and-tell only")

    with tempfile.TemporaryDirectory(prefix="smac-") as output:
        scenario = Scenario(space, deterministic=True, n_trials=budget, seed=seed,
                            output_directory=output)
        smac = HyperparameterOptimizationFacade(scenario, unused_target, overwrite=True,
                                                logging_level=50)
        for _ in range(budget):
            info = smac.ask()
            value = objective(dict(info.config))
            smac.tell(info, TrialValue(cost=value))


def run_hebo(system, problem, seed, budget, objective):
    import numpy as np
    import torch
    from hebo.design_space.design_space import DesignSpace
    from hebo.optimizers.hebo import HEBO

    # HEBO holds categories as labels: map them back to the problem's values.
    labels = {p.name: {str(v): v for v in p.values} for p in problem.params
              if p.kind == "categorical"}
    kinds = {"float": "num", "log": "pow", "int": "int", "categorical": "cat"}
    space = DesignSpace().parse([
        {"name": p.name, "type": "cat", "categories": list(labels[p.name])}
        if p.kind == "categorical" else
        {"name": p.name, "type": kinds[p.kind], "lb": p.low, "ub": p.high}
        for p in problem.params])
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    optimizer = HEBO(space, scramble_seed=seed)
    for _ in range(budget):
        suggestion = optimizer.suggest(n_suggestions=1)
        row = suggestion.iloc[0]
        assignment = {}
        for p in problem.params:
            if p.kind == "categorical":
                assignment[p.name] = labels[p.name][str(row[p.name])]
            elif p.kind == "int":
                assignment[p.name] = int(round(float(row[p.name])))
            else:
                assignment[p.name] = float(row[p.name])
        optimizer.observe(suggestion, np.array([[objective(assignment)]]))


RUNNERS = {"optuna_tpe": run_optuna, "optuna_tpe_multivariate": run_optuna,
           "optuna_gp": run_optuna, "smac_hpo": run_smac, "hebo": run_hebo}
# What each worker imports before its first seed, so that no seed's seconds count the imports.
IMPORTS = {"optuna_tpe": ("optuna",), "optuna_tpe_multivariate": ("optuna",),
           "optuna_gp": ("optuna", "scipy.optimize", "torch"), "smac_hpo": ("smac",),
           "hebo": ("hebo.optimizers.hebo", "torch")}


def worker(args):
    """Runs a peer's seeds and writes their lines to the original stdout; whatever the peer
    prints, in Python or below it, goes to stderr."""
    import importlib
    import importlib.metadata
    import logging

    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    package = SYSTEMS[args.system][1]
    version = "%s-%s" % (package, importlib.metadata.version(package))
    problem = PROBLEMS[args.function]
    budgets = budgets_within(args.budget)
    for module in IMPORTS[args.system]:
        importlib.import_module(module)
    for seed in args.seeds:
        values = []

        def objective(assignment):
            value = float(problem.evaluate(assignment))
            values.append(value)
            return value

        error = None
        start = time.perf_counter()
        try:
            RUNNERS[args.system](args.system, problem, seed, args.budget, objective)
            if len(values) != args.budget:
                error = "%d_trials_ran,_not_%d" % (len(values), args.budget)
        except Exception as e:  # a peer's failure is a result: report it, go on to the next seed
            error = "%s:_%s" % (type(e).__name__, e)
        seconds = time.perf_counter() - start
        best_at = [(b, min(values[:b]) if len(values) >= b else math.nan) for b in budgets]
        if error is None and not all(math.isfinite(v) and v >= problem.minimum - 1e-9
                                     for _, v in best_at):
            error = "best_value_below_the_known_minimum_or_not_finite"
        results.write(result_line(args.system, version, args.function, seed, best_at, seconds,
                                  error) + "\n")
        results.flush()


# ---- the parent: always /usr/bin/python3 ----

def hpo_version():
    try:
        sha = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        sha = "unknown"
    return "hpo-" + sha


def stream(command, env, args, version):
    """Runs `command`, passes its result lines on as they come, and prints a check=FAILED line
    for every seed it did not report when it fails, dies or is silent for --timeout seconds.
    Returns the exit status: 1 when a seed failed."""
    missing = list(args.seeds)
    failed = False
    error = None
    with tempfile.TemporaryFile("w+") as stderr:
        try:
            process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=stderr, text=True)
        except OSError as e:
            process, error = None, "cannot_start_%s:_%s" % (command[0], e)
        if process:
            with selectors.DefaultSelector() as selector:
                selector.register(process.stdout, selectors.EVENT_READ)
                while True:
                    if not selector.select(timeout=args.timeout):
                        process.kill()
                        error = "no_result_within_%gs" % args.timeout
                        break
                    line = process.stdout.readline()
                    if not line:
                        break
                    if line.startswith("bench=peer_quality "):
                        print(line.rstrip("\n"), flush=True)
                        failed = failed or " check=FAILED" in line
                        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
                        if int(fields.get("seed", -1)) in missing:
                            missing.remove(int(fields["seed"]))
            returncode = process.wait()
            if error is None and missing:
                stderr.seek(0)
                lines = [l for l in stderr.read().splitlines() if l.strip()]
                error = "exit_%d:_%s" % (returncode, lines[-1] if lines else "no_output")
    for seed in missing:
        print(result_line(args.system, version, args.function, seed,
                          [(b, math.nan) for b in budgets_within(args.budget)], 0.0, error),
              flush=True)
    return 1 if failed or missing else 0


def parse_seeds(text):
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list-systems", action="store_true")
    parser.add_argument("--system", choices=sorted(SYSTEMS))
    parser.add_argument("--function", choices=list(PROBLEMS))
    parser.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1-20"),
                        help="FIRST-LAST or one seed (default 1-20)")
    parser.add_argument("--budget", type=int, default=100, help="trials per seed")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="hpo's build folder, for the hpo systems")
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="seconds a seed may take before it is reported as failed")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.list_systems:
        for name, (venv, _) in SYSTEMS.items():
            print(name, venv or "-")
        return 0
    if not args.system or not args.function or args.budget < 1:
        parser.error("--system, --function and a budget of at least 1 are needed")
    if args.worker:
        worker(args)
        return 0
    venv, package = SYSTEMS[args.system]
    seeds = "%d-%d" % (args.seeds[0], args.seeds[-1])
    if venv is None:
        version = hpo_version()
        command = [os.path.join(args.build, "bench", "hpo_bench_search_quality"),
                   "--system", args.system, "--function", args.function, "--seeds", seeds,
                   "--budget", str(args.budget), "--version", version]
        return stream(command, os.environ, args, version)
    python = os.path.join(os.environ.get("HPO_PEERS_DIR", "/opt/hpo-mpi/peers"), venv, "bin",
                          "python")
    env = dict(os.environ)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env.setdefault(variable, env.get("OMP_NUM_THREADS", "1"))
    command = [python, os.path.abspath(__file__), "--worker", "--system", args.system,
               "--function", args.function, "--seeds", seeds, "--budget", str(args.budget)]
    return stream(command, env, args, package + "-unknown")


if __name__ == "__main__":
    sys.exit(main())

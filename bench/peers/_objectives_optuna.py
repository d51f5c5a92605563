#!/usr/bin/env python3
"""Optuna's multi-objective samplers on bench/objectives_quality.cpp's problem: ZDT1 with 6
variables in [0, 1], both objectives minimised, BUDGET sequential trials per seed, the
hypervolume of the trials' objectives below the reference point (1.1, 11). Samplers: TPESampler
(Optuna's multi-objective TPE, MOTPE's splitting by non-dominated rank and hypervolume
contribution) and NSGAIISampler, each with its defaults and the seed. Prints one line per seed
and sampler and one with the median and mean over seeds, in the harness's format. Runs in the
optuna environment of bench/peers/install.sh.

Usage: /opt/hpo-mpi/peers/optuna/bin/python bench/peers/_objectives_optuna.py [SEEDS [BUDGET]]
"""

import math
import statistics
import sys
import time

import optuna

REFERENCE = (1.1, 11.0)
VARIABLES = 6


def zdt1(x):
    g = 1.0 + 9.0 * sum(x[1:]) / (VARIABLES - 1)
    return x[0], g * (1.0 - math.sqrt(x[0] / g))


def hypervolume(points):
    inside = sorted(p for p in points if p[0] < REFERENCE[0] and p[1] < REFERENCE[1])
    area, ceiling = 0.0, REFERENCE[1]
    for first, second in inside:
        if second < ceiling:
            area += (REFERENCE[0] - first) * (ceiling - second)
            ceiling = second
    return area


def run(sampler, budget):
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.optimize(lambda t: zdt1([t.suggest_float("x%d" % i, 0.0, 1.0) for i in range(VARIABLES)]),
                   n_trials=budget)
    return hypervolume([tuple(t.values) for t in study.trials])


def main():
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    samplers = {"optuna_tpe": optuna.samplers.TPESampler,
                "optuna_nsga2": optuna.samplers.NSGAIISampler}
    for name, make in samplers.items():
        volumes = []
        for seed in range(1, seeds + 1):
            start = time.monotonic()
            volume = run(make(seed=seed), budget)
            volumes.append(volume)
            print("bench=objectives_quality problem=zdt1_6d system=%s seed=%d budget=%d "
                  "hypervolume=%.6g seconds=%.3g check=ok" %
                  (name, seed, budget, volume, time.monotonic() - start), flush=True)
        print("bench=objectives_quality problem=zdt1_6d system=%s seeds=%d budget=%d "
              "hypervolume_median=%.5g hypervolume_mean=%.5g optuna=%s check=ok" %
              (name, seeds, budget, statistics.median(volumes), statistics.mean(volumes),
               optuna.__version__), flush=True)


if __name__ == "__main__":
    main()

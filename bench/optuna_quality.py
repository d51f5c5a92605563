#!/usr/bin/env python3
"""Optuna's TPE on the functions of bench/search_quality.cpp, for the table beside hpo's models.

Branin (2-D) and Hartmann-6 (6-D), the same bounds and formulas, 100 sequential trials per seed,
20 seeds (1..20), Optuna's TPESampler with its defaults (10 start-up trials, 24 EI candidates),
independent and multivariate; prints the median over seeds of the best value after 50 and 100
trials, and Optuna's mean time per suggestion, one line per function, sampler and budget, in the
harness's format. Needs Debian's python3-optuna (3.1).

Usage: bench/optuna_quality.py [SEEDS]
"""

import math
import statistics
import sys
import time
import warnings

import optuna

BUDGETS = (50, 100)
ALPHA = (1.0, 1.2, 3.0, 3.2)
A = ((10, 3, 17, 3.5, 1.7, 8), (0.05, 10, 17, 0.1, 8, 14), (3, 3.5, 1.7, 10, 17, 8),
     (17, 8, 0.05, 10, 0.1, 14))
P = ((1312, 1696, 5569, 124, 8283, 5886), (2329, 4135, 8307, 3736, 1004, 9991),
     (2348, 1451, 3522, 2883, 3047, 6650), (4047, 8828, 8732, 5743, 1091, 381))


def branin(x):
    b = 5.1 / (4.0 * math.pi * math.pi)
    c = 5.0 / math.pi
    t = 1.0 / (8.0 * math.pi)
    inner = x[1] - b * x[0] * x[0] + c * x[0] - 6.0
    return inner * inner + 10.0 * (1.0 - t) * math.cos(x[0]) + 10.0


def hartmann6(x):
    value = 0.0
    for i in range(4):
        exponent = sum(A[i][j] * (x[j] - 1e-4 * P[i][j]) ** 2 for j in range(6))
        value -= ALPHA[i] * math.exp(-exponent)
    return value


FUNCTIONS = (("branin", ((-5.0, 10.0), (0.0, 15.0)), 0.397887, branin),
             ("hartmann6", ((0.0, 1.0),) * 6, -3.32237, hartmann6))


def main():
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore")  # multivariate is an experimental feature in Optuna 3.1
    for name, bounds, minimum, function in FUNCTIONS:
        for multivariate in (False, True):
            best_at = {budget: [] for budget in BUDGETS}
            start = time.perf_counter()
            for seed in range(1, seeds + 1):
                sampler = optuna.samplers.TPESampler(seed=seed, multivariate=multivariate)
                study = optuna.create_study(sampler=sampler)

                def objective(trial, bounds=bounds, function=function):
                    return function([trial.suggest_float("x%d" % (d + 1), low, high)
                                     for d, (low, high) in enumerate(bounds)])

                best = math.inf
                for trial_number in range(1, BUDGETS[-1] + 1):
                    study.optimize(objective, n_trials=1)
                    best = min(best, study.trials[-1].value)
                    if trial_number in best_at:
                        best_at[trial_number].append(best)
            seconds = time.perf_counter() - start
            for budget in BUDGETS:
                values = best_at[budget]
                check = len(values) == seeds and all(
                    math.isfinite(v) and v >= minimum - 1e-9 for v in values)
                print("bench=search_quality function=%s method=optuna_tpe%s evals=%d seeds=%d "
                      "median_best=%.6g known_minimum=%.6g seconds_all_seeds=%.3f check=%s" %
                      (name, "_multivariate" if multivariate else "", budget, seeds,
                       statistics.median(values), minimum, seconds,
                       "ok" if check else "FAILED"), flush=True)


if __name__ == "__main__":
    main()

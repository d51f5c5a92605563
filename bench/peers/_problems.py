"""The test problems of the search-quality comparison, for bench/peers/_quality.py's workers.

Standard library only, so that every peer's virtual environment (and /usr/bin/python3) imports it.
bench/search_quality.cpp defines the same four problems for hpo's searchers, and ctest
search_quality_problems_agree (tests/unit/check_quality_problems.py) checks that both give the
same values, the known minima included:

- branin: 2-D, x1 float in [-5, 10], x2 float in [0, 15]; minimum 10 / (8 pi) = 0.397887 at
  (-pi, 12.275), (pi, 2.275) and (3 pi, 2.475).
- hartmann6: 6-D, [0, 1]^6; minimum -3.32236801141551 at HARTMANN6_MINIMIZER.
- levy10_mixed: the 10-D Levy function with x1..x4 float in [-10, 10], x5..x7 int in [-10, 10]
  and x8..x10 categorical over the labels of LEVY_LEVELS (numeric meaning -4, -1, 1, 3, 6);
  minimum 0 at all ones (x8..x10 = "p1").
- mixed8: a synthetic validation error over an 8-D space like the Fashion-MNIST sweep's (see
  mixed8 below); minimum 0.085 at MIXED8_MINIMIZER.

    PROBLEMS[name].evaluate({"x1": ..., ...}) -> float
"""

import math


class Param:
    """One dimension: kind float (uniform in [low, high]), log (log-uniform in [low, high]), int
    (integers low..high) or categorical (one of values)."""

    def __init__(self, name, kind, low=None, high=None, values=None):
        self.name = name
        self.kind = kind
        self.low = low
        self.high = high
        self.values = values


class Problem:
    def __init__(self, name, params, minimum, function):
        self.name = name
        self.params = params
        self.minimum = minimum
        self._function = function

    def evaluate(self, assignment):
        """The value at `assignment` (parameter name -> value)."""
        return self._function(assignment)


def branin(p):
    b = 5.1 / (4.0 * math.pi * math.pi)
    c = 5.0 / math.pi
    t = 1.0 / (8.0 * math.pi)
    inner = p["x2"] - b * p["x1"] * p["x1"] + c * p["x1"] - 6.0
    return inner * inner + 10.0 * (1.0 - t) * math.cos(p["x1"]) + 10.0


HARTMANN_ALPHA = (1.0, 1.2, 3.0, 3.2)
HARTMANN_A = ((10, 3, 17, 3.5, 1.7, 8), (0.05, 10, 17, 0.1, 8, 14), (3, 3.5, 1.7, 10, 17, 8),
              (17, 8, 0.05, 10, 0.1, 14))
HARTMANN_P = ((1312, 1696, 5569, 124, 8283, 5886), (2329, 4135, 8307, 3736, 1004, 9991),
              (2348, 1451, 3522, 2883, 3047, 6650), (4047, 8828, 8732, 5743, 1091, 381))
HARTMANN6_MINIMIZER = (0.20168950909365746, 0.15001069354111374, 0.4768739729250998,
                       0.2753324275220782, 0.3116516172395686, 0.6573005345536702)


def hartmann6(p):
    value = 0.0
    for i in range(4):
        exponent = 0.0
        for j in range(6):
            distance = p["x%d" % (j + 1)] - 1e-4 * HARTMANN_P[i][j]
            exponent += HARTMANN_A[i][j] * distance * distance
        value -= HARTMANN_ALPHA[i] * math.exp(-exponent)
    return value


LEVY_LEVELS = {"m4": -4.0, "m1": -1.0, "p1": 1.0, "p3": 3.0, "p6": 6.0}


def levy10_mixed(p):
    x = [float(p["x%d" % i]) for i in range(1, 8)]
    x += [LEVY_LEVELS[p["x%d" % i]] for i in range(8, 11)]
    w = [1.0 + (v - 1.0) / 4.0 for v in x]
    value = math.sin(math.pi * w[0]) ** 2
    for i in range(9):
        value += (w[i] - 1.0) ** 2 * (1.0 + 10.0 * math.sin(math.pi * w[i] + 1.0) ** 2)
    value += (w[9] - 1.0) ** 2 * (1.0 + math.sin(2.0 * math.pi * w[9]) ** 2)
    return value


# mixed8: validation error = 0.085 + the offsets of the categorical choices + penalties that are
# 0 at each choice's best continuous values, so the minimum is 0.085 exactly (adamw, batch 32,
# width 16 and the best values for them). The interactions:
# - the best log10(lr) is the optimizer's (sgd -0.6, adam -3.0, adamw -2.7), + 0.5 log10(batch /
#   128) (the square-root scaling rule), - 0.1 per layer beyond 2, and for sgd + log10(1 -
#   momentum) (momentum multiplies the effective step); 0.35 (1 - exp(-d^2 / 0.5)) for a log10(lr)
#   d decades off, so a far-off lr saturates like a diverged run;
# - momentum matters for sgd only: 0.05 (momentum - 0.9)^2;
# - the best log10(weight_decay) is the optimizer's (sgd -3.5, adam -4, adamw -2.5), each with its
#   own curvature (0.0015, 0.001, 0.002 per decade^2);
# - the best dropout and num_layers grow with the width: 0.1 (dropout - best)^2 with best 0.05,
#   0.2, 0.3 and 0.004 (layers - best)^2 with best 2, 2, 3 for widths 4, 8, 16.
MIXED8_OPTIMIZERS = {  # offset, best log10(lr), best log10(weight_decay), its curvature
    "sgd": (0.004, -0.6, -3.5, 0.0015),
    "adam": (0.003, -3.0, -4.0, 0.001),
    "adamw": (0.0, -2.7, -2.5, 0.002),
}
MIXED8_BATCH_OFFSET = {32: 0.0, 64: 0.001, 128: 0.003, 256: 0.006}
MIXED8_WIDTHS = {  # offset, best dropout, best num_layers
    4: (0.03, 0.05, 2), 8: (0.008, 0.2, 2), 16: (0.0, 0.3, 3)}
MIXED8_MINIMIZER = {"lr": 0.5 * 10.0 ** -2.8, "batch_size": 32, "optimizer": "adamw",
                    "momentum": 0.5, "dropout": 0.3, "width": 16, "weight_decay": 10.0 ** -2.5,
                    "num_layers": 3}


def mixed8(p):
    offset, best_lr, best_decay, decay_curvature = MIXED8_OPTIMIZERS[p["optimizer"]]
    width_offset, best_dropout, best_layers = MIXED8_WIDTHS[p["width"]]
    best_lr += 0.5 * math.log10(p["batch_size"] / 128.0) - 0.1 * (p["num_layers"] - 2)
    value = 0.085 + offset + MIXED8_BATCH_OFFSET[p["batch_size"]] + width_offset
    if p["optimizer"] == "sgd":
        best_lr += math.log10(1.0 - p["momentum"])
        value += 0.05 * (p["momentum"] - 0.9) ** 2
    lr_off = math.log10(p["lr"]) - best_lr
    value += 0.35 * (1.0 - math.exp(-lr_off * lr_off / 0.5))
    value += decay_curvature * (math.log10(p["weight_decay"]) - best_decay) ** 2
    value += 0.1 * (p["dropout"] - best_dropout) ** 2
    value += 0.004 * (p["num_layers"] - best_layers) ** 2
    return value


PROBLEMS = {problem.name: problem for problem in (
    Problem("branin", [Param("x1", "float", -5.0, 10.0), Param("x2", "float", 0.0, 15.0)],
            0.39788735772973816, branin),
    Problem("hartmann6", [Param("x%d" % d, "float", 0.0, 1.0) for d in range(1, 7)],
            -3.3223680114155147, hartmann6),
    Problem("levy10_mixed",
            [Param("x%d" % d, "float", -10.0, 10.0) for d in range(1, 5)] +
            [Param("x%d" % d, "int", -10, 10) for d in range(5, 8)] +
            [Param("x%d" % d, "categorical", values=list(LEVY_LEVELS)) for d in range(8, 11)],
            0.0, levy10_mixed),
    Problem("mixed8",
            [Param("lr", "log", 1e-5, 0.5),
             Param("batch_size", "categorical", values=[32, 64, 128, 256]),
             Param("optimizer", "categorical", values=["sgd", "adam", "adamw"]),
             Param("momentum", "float", 0.0, 0.95),
             Param("dropout", "float", 0.0, 0.6),
             Param("width", "categorical", values=[4, 8, 16]),
             Param("weight_decay", "log", 1e-6, 1e-2),
             Param("num_layers", "int", 1, 4)],
            0.085, mixed8),
)}

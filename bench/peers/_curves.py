"""The tabular blackbox every system of bench/peers/_target.py trains on: recorded learning curves.

A configuration proposed anywhere in the search space trains along the recorded curve of its
nearest recorded configuration, so model-based searchers may propose any point. Distance: the
squared Euclidean distance over the hyperparameters in the config's order, each scaled to [0, 1]:
a log-scale range (log_uniform_values) on the log of its value, a uniform range (uniform,
int_uniform, q_uniform) linearly, a list of numbers by the value's position in it
(index / (n - 1)), a list of strings as a mismatch (0 or 1). Ties go to the first row of the CSV. bench/asha_replay.cpp's --curves mode defines the same
blackbox in C++ (tests/unit/check_peer_blackbox.py checks that they agree).

The space comes from a config file's `sweep.parameters` (parse_space, which needs PyYAML; the
peers' environments get it as JSON from space_to_json); the curves from the CSV that
bench/peers/_export_curves.py writes. Only the standard library beyond that, so that every peer's
environment can import this module.
"""

import csv
import json
import math


def parse_space(config_path):
    """The search space of a config file: a list of {name, kind, min, max, values}, kind one of
    log, linear, ordinal, categorical."""
    import yaml
    with open(config_path) as f:
        config = yaml.safe_load(f)
    parameters = config.get("sweep", config)["parameters"]
    space = []
    for name, spec in parameters.items():
        if "values" in spec:
            values = list(spec["values"])
            numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
            space.append({"name": name, "kind": "ordinal" if numeric else "categorical",
                          "values": values})
            continue
        distribution = spec.get("distribution", "uniform")
        kinds = {"log_uniform_values": "log", "uniform": "linear", "int_uniform": "linear",
                 "q_uniform": "linear"}
        if distribution not in kinds:
            raise ValueError("%s: distribution %s is not supported" % (name, distribution))
        space.append({"name": name, "kind": kinds[distribution], "min": float(spec["min"]),
                      "max": float(spec["max"]), "integer": distribution == "int_uniform"})
    return space


def space_to_json(space):
    return json.dumps(space, sort_keys=True)


def space_from_json(text):
    return json.loads(text)


def scaled(parameter, value):
    """`value` of `parameter` on its [0, 1] scale (categorical: the value itself)."""
    kind = parameter["kind"]
    if kind == "log":
        low, high = math.log(parameter["min"]), math.log(parameter["max"])
        return (math.log(float(value)) - low) / (high - low)
    if kind == "linear":
        return (float(value) - parameter["min"]) / (parameter["max"] - parameter["min"])
    if kind == "ordinal":
        values = parameter["values"]
        matches = [i for i, v in enumerate(values) if float(v) == float(value)]
        if not matches:
            raise ValueError("%s: %r is none of %s" % (parameter["name"], value, values))
        return matches[0] / (len(values) - 1) if len(values) > 1 else 0.0
    return str(value)


def distance(space, a, b):
    """Squared distance between two scaled configurations (lists in the space's order)."""
    total = 0.0
    for parameter, x, y in zip(space, a, b):
        if parameter["kind"] == "categorical":
            d = 0.0 if x == y else 1.0
        else:
            d = x - y
        total += d * d
    return total


class Curves:
    """The recorded curves of a CSV and the nearest-neighbour lookup over them."""

    def __init__(self, space, csv_path):
        self.space = space
        names = [p["name"] for p in space]
        with open(csv_path, newline="") as f:
            rows = list(csv.reader(f))
        header = rows[0]
        missing = [name for name in names if name not in header]
        if missing:
            raise ValueError("%s has no column for %s" % (csv_path, ", ".join(missing)))
        columns = [header.index(name) for name in names]
        first = len(header) - 1
        while first > 0 and header[first - 1].rsplit("_", 1)[-1].isdigit():
            first -= 1
        self.metric = header[first].rsplit("_", 1)[0]
        self.epochs = len(header) - first
        self.configs = []  # parameters, parsed as the space's types
        self.points = []   # scaled
        self.curves = []   # metric after epochs 1..epochs
        for row in rows[1:]:
            config = {}
            for parameter, column in zip(space, columns):
                cell = row[column]
                if parameter["kind"] == "categorical":
                    config[parameter["name"]] = cell
                elif parameter["kind"] == "ordinal" or parameter.get("integer"):
                    config[parameter["name"]] = int(cell) if cell.lstrip("-").isdigit() \
                        else float(cell)
                else:
                    config[parameter["name"]] = float(cell)
            self.configs.append(config)
            self.points.append(self.scale(config))
            self.curves.append([float(v) for v in row[first:]])
        if not self.curves:
            raise ValueError("%s holds no curve" % csv_path)

    def scale(self, config):
        return [scaled(p, config[p["name"]]) for p in self.space]

    def nearest(self, config):
        """The row index of the recorded configuration nearest to `config` (a dict)."""
        point = self.scale(config)
        best, best_distance = 0, math.inf
        for index, other in enumerate(self.points):
            d = distance(self.space, point, other)
            if d < best_distance:
                best, best_distance = index, d
        return best

    def curve(self, config):
        """The metric after each epoch (1..epochs) of `config`'s nearest recorded configuration."""
        return self.curves[self.nearest(config)]


#!/usr/bin/env python3
"""The search-quality problems of bench/search_quality.cpp and bench/peers/_problems.py agree.

    check_quality_problems.py HPO_BENCH_SEARCH_QUALITY REPO_ROOT

For each problem of bench/peers/_problems.py, asks the C++ benchmark (`--evaluate`) for its value
at the known minimizers, at the space's corners, at every label of each categorical parameter
and at 12 random points, and fails (exit 1, one line per problem) when:
- a C++ value differs from the Python one by more than 1e-12 (relative, absolute near 0), or the
  known minima differ;
- a value at a known minimizer is not the known minimum (within 1e-12);
- the spaces differ: C++ refuses a point of the Python space, or accepts one just outside a
  numeric parameter's bounds or a label no categorical parameter has.
Needs no peer: _problems.py is standard-library Python.
"""

import math
import os
import random
import subprocess
import sys


def text(value):
    return repr(value) if isinstance(value, float) else str(value)


def cpp_evaluate(binary, problem, assignment):
    """(value, minimum) from the C++ benchmark, or None when it refuses the point."""
    result = subprocess.run([binary, "--evaluate", problem.name] +
                            [text(assignment[p.name]) for p in problem.params],
                            capture_output=True, text=True)
    if result.returncode != 0:
        return None
    fields = dict(field.split("=", 1) for field in result.stdout.split())
    return float(fields["value"]), float(fields["minimum"])


def close(a, b):
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def random_point(problem, rng):
    point = {}
    for p in problem.params:
        if p.kind == "float":
            point[p.name] = rng.uniform(p.low, p.high)
        elif p.kind == "log":
            point[p.name] = math.exp(rng.uniform(math.log(p.low), math.log(p.high)))
        elif p.kind == "int":
            point[p.name] = rng.randint(p.low, p.high)
        else:
            point[p.name] = rng.choice(p.values)
    return point


def corner(problem, high):
    return {p.name: (p.values[-1 if high else 0] if p.kind == "categorical" else
                     p.high if high else p.low) for p in problem.params}


def minimizers(problems_module, name):
    m = problems_module
    if name == "branin":
        return [{"x1": x1, "x2": x2} for x1, x2 in
                ((-math.pi, 12.275), (math.pi, 2.275), (3 * math.pi, 2.475))]
    if name == "hartmann6":
        return [{"x%d" % (d + 1): v for d, v in enumerate(m.HARTMANN6_MINIMIZER)}]
    if name == "levy10_mixed":
        return [{"x%d" % d: 1.0 if d <= 4 else 1 if d <= 7 else "p1" for d in range(1, 11)}]
    return [m.MIXED8_MINIMIZER, dict(m.MIXED8_MINIMIZER, momentum=0.0)]


def outside_points(problem):
    """Points just outside the space: one numeric parameter past a bound, or an unknown label."""
    inside = corner(problem, False)
    for p in problem.params:
        if p.kind == "categorical":
            yield p.name, dict(inside, **{p.name: "none_of_them"})
        elif p.kind == "int":
            yield p.name, dict(inside, **{p.name: p.low - 1})
            yield p.name, dict(inside, **{p.name: p.high + 1})
        else:
            yield p.name, dict(inside, **{p.name: p.low - abs(p.low) * 1e-9 - 1e-12})
            yield p.name, dict(inside, **{p.name: p.high + abs(p.high) * 1e-9 + 1e-12})


def main():
    binary, root = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(root, "bench", "peers"))
    import _problems as problems_module

    failures = []
    checked = 0
    for index, problem in enumerate(problems_module.PROBLEMS.values()):
        rng = random.Random(index)
        known = minimizers(problems_module, problem.name)
        points = known + [corner(problem, False), corner(problem, True)] + [
            dict(corner(problem, False), **{p.name: value})
            for p in problem.params if p.kind == "categorical" for value in p.values] + [
            random_point(problem, rng) for _ in range(12)]
        for number, point in enumerate(points):
            python_value = problem.evaluate(point)
            cpp = cpp_evaluate(binary, problem, point)
            checked += 1
            if cpp is None:
                failures.append("%s: C++ refuses %r, a point of the Python space" %
                                (problem.name, point))
                continue
            cpp_value, cpp_minimum = cpp
            if number == 0 and cpp_minimum != problem.minimum:
                failures.append("%s: known minimum %r in C++, %r in Python" %
                                (problem.name, cpp_minimum, problem.minimum))
            if not close(cpp_value, python_value):
                failures.append("%s at %r: C++ %r, Python %r" %
                                (problem.name, point, cpp_value, python_value))
            if number < len(known) and not (close(cpp_value, problem.minimum) and
                                            close(python_value, problem.minimum)):
                failures.append("%s at the minimizer %r: C++ %r, Python %r, not the minimum %r" %
                                (problem.name, point, cpp_value, python_value, problem.minimum))
        for name, point in outside_points(problem):
            if cpp_evaluate(binary, problem, point) is not None:
                failures.append("%s: C++ accepts %s=%r, outside the Python space" %
                                (problem.name, name, point[name]))
    for failure in failures:
        print(failure)
    if failures:
        return 1
    print("%d problems agree at %d points, the known minimizers included" %
          (len(problems_module.PROBLEMS), checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())

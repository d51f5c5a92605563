#!/usr/bin/env python3
"""The benchmark registry bench/benchmarks.txt lists every benchmark, and only files that exist.

    check_bench_registry.py REPO_ROOT

Fails (exit 1, one line per problem) when:
- a benchmark source under bench/ (every .cpp and .py, bench/gpu/ included; a .py whose name
  starts with `_` is a helper module, not a benchmark) or a source of an add_executable in
  bench/CMakeLists.txt is missing from the registry;
- a registry row names a file that does not exist, a kind that does not fit the file (c++ for
  .cpp, python for .py), or a .cpp that no add_executable of bench/CMakeLists.txt builds (run.sh
  finds the binary through it);
- bench/RESULTS.md's table of current figures has no row for a registered benchmark, or a row for
  one that is not registered, or a row's `results` section is no heading of RESULTS.md;
- `bench/run.sh --list` rejects the registry or leaves a benchmark out.
"""

import glob
import os
import re
import subprocess
import sys


def registry_rows(root):
    rows = []
    path = os.path.join(root, "bench", "benchmarks.txt")
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [field.strip() for field in line.rstrip("\n").split("|")]
            rows.append((number, fields))
    return rows


def built_sources(root):
    """bench/-relative source -> add_executable target, from bench/CMakeLists.txt."""
    with open(os.path.join(root, "bench", "CMakeLists.txt")) as f:
        text = f.read()
    return {source: target for target, source in
            re.findall(r"^\s*add_executable\((\w+)\s+([^\s)]+)\)", text, re.MULTILINE)}


def current_figures_names(root):
    """The first column of the table under `## Current figures` in bench/RESULTS.md."""
    with open(os.path.join(root, "bench", "RESULTS.md")) as f:
        lines = f.read().splitlines()
    headings = [re.sub(r"^#+\s*", "", line) for line in lines if line.startswith("#")]
    names = []
    inside = False
    for line in lines:
        if line.startswith("## "):
            inside = line.strip() == "## Current figures"
            continue
        if inside and line.startswith("|"):
            cell = line.split("|")[1].strip().strip("`")
            if cell and cell.lower() != "benchmark" and not set(cell) <= set("-: "):
                names.append(cell)
    return names, headings


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    problems = []
    rows = registry_rows(root)
    built = built_sources(root)
    registered = set()
    names = []
    for number, fields in rows:
        where = "bench/benchmarks.txt:%d" % number
        if len(fields) != 7:
            problems.append("%s: %d columns, not 7" % (where, len(fields)))
            continue
        name, source, kind, _ranks, _requires, results, _args = fields
        if name not in names:
            names.append(name)
        registered.add(source)
        if not os.path.isfile(os.path.join(root, source)):
            problems.append("%s: %s names %s, which does not exist" % (where, name, source))
        expected = {".cpp": "c++", ".py": "python"}.get(os.path.splitext(source)[1])
        if kind != expected:
            problems.append("%s: %s has kind %r, but %s wants %r" % (where, name, kind, source,
                                                                     expected))
        if source.endswith(".cpp") and source[len("bench/"):] not in built:
            problems.append("%s: no add_executable in bench/CMakeLists.txt builds %s" %
                            (where, source))

    on_disk = set()
    for pattern in ("bench/**/*.cpp", "bench/**/*.py"):
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            relative = os.path.relpath(path, root)
            if not os.path.basename(relative).startswith("_"):
                on_disk.add(relative)
    on_disk.update("bench/" + source for source in built)
    for source in sorted(on_disk - registered):
        problems.append("%s is a benchmark but bench/benchmarks.txt has no row for it" % source)

    table, headings = current_figures_names(root)
    for name in names:
        if name not in table:
            problems.append("bench/RESULTS.md: no row for %s in its table of current figures" % name)
    for name in table:
        if name not in names:
            problems.append("bench/RESULTS.md: the current figures name %s, which "
                            "bench/benchmarks.txt does not register" % name)
    for number, fields in rows:
        if len(fields) == 7 and not any(h.startswith(fields[5]) for h in headings):
            problems.append("bench/benchmarks.txt:%d: results section %r is no heading of "
                            "bench/RESULTS.md" % (number, fields[5]))

    listed = subprocess.run(["bash", os.path.join(root, "bench", "run.sh"), "--list"],
                            capture_output=True, text=True)
    if listed.returncode != 0:
        problems.append("bench/run.sh --list failed (exit %d): %s" %
                        (listed.returncode, listed.stderr.strip()))
    else:
        first_words = {line.split()[0] for line in listed.stdout.splitlines()[1:] if line.split()}
        for name in names:
            if name not in first_words:
                problems.append("bench/run.sh --list leaves out %s" % name)

    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("%d benchmarks (%d runs) registered; every benchmark source under bench/ is among them"
          % (len(names), len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The repository's own style rules (docs/design.md, **Conventions**), on every file git tracks:

- C++ (.cpp, .hpp, .h) is formatted as .clang-format says: `clang-format --dry-run -Werror`
  finds nothing to change;
- no C++ or Python function is over 80 lines (lizard's length: from the line of its name to its
  end, comments and blank lines included).

    check_style.py REPO_ROOT CLANG_FORMAT LIZARD

Prints one line per file or function that breaks a rule and exits 1; exits 0 when none does.
scripts/install-deps.sh installs both tools (Debian's clang-format, lizard pinned in
tests/unit/check_style.requirements.txt).
"""

import os
import subprocess
import sys

MOST_FUNCTION_LINES = 80
CXX_SUFFIXES = (".cpp", ".hpp", ".h")
FUNCTION_SUFFIXES = CXX_SUFFIXES + (".py",)


def tracked_files(root, suffixes):
    """The files git tracks under `root` whose names end in one of `suffixes`."""
    listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True)
    names = [name for name in listed.stdout.decode().split("\0") if name.endswith(suffixes)]
    return [name for name in names if os.path.isfile(os.path.join(root, name))]


def format_problems(root, clang_format):
    """One line per C++ file clang-format would change."""
    files = tracked_files(root, CXX_SUFFIXES)
    done = subprocess.run([clang_format, "--dry-run", "-Werror"] + files, cwd=root,
                          capture_output=True, text=True)
    if done.returncode == 0:
        return []
    unformatted = sorted({line.split(":")[0] for line in done.stderr.splitlines()
                          if "error: code should be clang-formatted" in line})
    if not unformatted:
        return ["%s failed (exit %d): %s" % (clang_format, done.returncode, done.stderr.strip())]
    return ["%s: not as .clang-format says (clang-format -i %s)" % (name, name)
            for name in unformatted]


def length_problems(root, lizard):
    """One line per function over MOST_FUNCTION_LINES lines."""
    files = tracked_files(root, FUNCTION_SUFFIXES)
    # -C and -a so high that only the length (-L) can warn.
    done = subprocess.run([lizard, "--warnings_only", "-L", str(MOST_FUNCTION_LINES), "-C", "100000",
                           "-a", "100000"] + files, cwd=root, capture_output=True, text=True)
    warnings = [line for line in done.stdout.splitlines() if ": warning: " in line]
    if done.returncode not in (0, 1) or (done.returncode == 1 and not warnings):
        return ["%s failed (exit %d): %s" % (lizard, done.returncode, done.stderr.strip())]
    return ["%s (at most %d lines)" % (line.replace(": warning: ", ": "), MOST_FUNCTION_LINES)
            for line in warnings]


def main():
    if len(sys.argv) != 4:
        print("usage: check_style.py REPO_ROOT CLANG_FORMAT LIZARD", file=sys.stderr)
        return 2
    root, clang_format, lizard = sys.argv[1:]
    missing = [name for name, path in (("clang-format", clang_format), ("lizard", lizard))
               if not os.access(path, os.X_OK)]
    if missing:
        print("not found: %s (scripts/install-deps.sh installs it: Debian's clang-format, lizard "
              "in HPO_STYLE_VENV, default /opt/hpo-mpi/style-tools)" % " and ".join(missing))
        return 1
    problems = format_problems(root, clang_format) + length_problems(root, lizard)
    for problem in problems:
        print(problem)
    if not problems:
        print("style holds: every C++ file formatted, no function over %d lines"
              % MOST_FUNCTION_LINES)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""The job files checked in under slurm/ and k8s-mpi/ are what `hpo render` writes today.

Each rendered file records its command in a header line `# Rendered by: hpo render KIND ARGS`.
This test runs that command again (from the repository root, with the hpo under test) and fails
on any difference, so a change to the renderer or to the sbatch body cannot leave the examples
stale. It also fails when a folder holds no rendered file at all.

usage: check_rendered_files.py --hpo PATH --root REPO DIR...
"""

import argparse
import difflib
import os
import shlex
import subprocess
import sys

HEADER = "# Rendered by: hpo render "


def rendered_command(path):
    with open(path) as f:
        for line in f.read().splitlines()[:3]:
            if line.startswith(HEADER):
                return shlex.split(line[len("# Rendered by: hpo "):])
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    failures = []
    for folder in args.dirs:
        checked = 0
        for name in sorted(os.listdir(os.path.join(args.root, folder))):
            path = os.path.join(args.root, folder, name)
            command = rendered_command(path) if os.path.isfile(path) else None
            if command is None:
                continue
            checked += 1
            result = subprocess.run([args.hpo] + command, cwd=args.root, capture_output=True,
                                    text=True)
            if result.returncode != 0:
                failures.append("%s/%s: `hpo %s` failed (exit %d): %s" % (
                    folder, name, " ".join(command), result.returncode, result.stderr.strip()))
                continue
            with open(path) as f:
                expected = f.read()
            if result.stdout != expected:
                diff = "".join(difflib.unified_diff(
                    expected.splitlines(True), result.stdout.splitlines(True),
                    "%s/%s (checked in)" % (folder, name), "rendered now"))
                failures.append("%s/%s differs from what `hpo %s` renders now; render it again:\n%s"
                                % (folder, name, " ".join(command), diff))
            else:
                print("ok: %s/%s" % (folder, name))
        if checked == 0:
            failures.append("%s: no rendered file (no '%s...' header)" % (folder, HEADER))
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

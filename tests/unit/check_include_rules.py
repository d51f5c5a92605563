#!/usr/bin/env python3
"""docs/design.md's include rules, checked by the commands the document gives: every `grep` line of
the ```sh block under "What each may include" is run from the repository root, and what it prints
must be what the rule allows:

1. torch, ATen and c10 headers: only under core/src/train/ and core/src/gpu/, in
   core/include/hpo/model_task.hpp, and in the built-in tasks' libtorch side (a folder named
   model_runtime/ under core/src/tasks/; the rest of a task's folder is hpo_core's, and rank 0
   checks configs with its descriptions);
2. <mpi.h>: core/include/hpo/mpi/communicator.hpp alone;
3. hpo_core's folders (the third command's list, tasks/ without its runtime/ and model_runtime/
   folders) include nothing of mpi/, train/, gpu/, a runtime/ or model_runtime/ folder, nor the
   public headers of the libraries above hpo_core;
4. what the torch-free `hpo` links (the fourth command's list: runtime/, cli/, the command task's
   runtime/, apps/hpo_main.cpp) includes neither torch nor train/, gpu/, a model_runtime/ folder,
   hpo/model_task.hpp.

Usage: check_include_rules.py REPO_ROOT. Exit 0 when all hold, 1 naming each file that breaks a
rule (or a command the document no longer has).
"""

import re
import subprocess
import sys


def design_commands(root):
    """The grep commands of design.md's include-rule block, continuation lines joined."""
    with open(root + "/docs/design.md") as f:
        text = f.read()
    start = text.index("**What each may include.**")
    block = re.search(r"```sh\n(.*?)```", text[start:], re.S).group(1)
    commands, current = [], ""
    for line in block.splitlines():
        code = line.split("  #", 1)[0].rstrip() if not line.strip().startswith("#") else ""
        if not code.strip():
            continue
        current += code.rstrip("\\").strip() + " "
        if not code.endswith("\\"):
            commands.append(current.strip())
            current = ""
    return commands


def run(root, command):
    done = subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # grep: 1 = nothing found
        raise SystemExit("check_include_rules: `%s` failed: %s" % (command, done.stderr))
    return sorted(line for line in done.stdout.splitlines() if line)


def torch_allowed(path):
    if path.startswith(("core/src/train/", "core/src/gpu/")):
        return True
    if path == "core/include/hpo/model_task.hpp":
        return True
    return path.startswith("core/src/tasks/") and "/model_runtime/" in path


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_include_rules.py REPO_ROOT")
    root = sys.argv[1]
    commands = design_commands(root)
    launcher = [c for c in commands if "model_runtime" in c]
    torch = [c for c in commands if "torch|ATen|c10" in c and c not in launcher]
    mpi = [c for c in commands if "<mpi.h>" in c]
    core = [c for c in commands if "(mpi|train|gpu|runtime)/" in c]
    if len(torch) != 1 or len(mpi) != 1 or len(core) != 1 or len(launcher) != 1:
        sys.exit("check_include_rules: docs/design.md should give one command per rule, found "
                 "%d, %d, %d, %d" % (len(torch), len(mpi), len(core), len(launcher)))
    broken = ["%s includes torch (allowed: train/, gpu/, hpo/model_task.hpp, tasks' model_runtime/)" % p
              for p in run(root, torch[0]) if not torch_allowed(p)]
    broken += ["%s includes <mpi.h> (only hpo/mpi/communicator.hpp may)" % p
               for p in run(root, mpi[0]) if p != "core/include/hpo/mpi/communicator.hpp"]
    broken += ["%s is in hpo_core but includes MPI, torch or the runtime" % p
               for p in run(root, core[0])]
    broken += ["%s is in the torch-free hpo but includes torch or the libtorch side" % p
               for p in run(root, launcher[0])]
    for line in broken:
        print("check_include_rules: " + line)
    print("check_include_rules: %d commands of docs/design.md run, %d files break a rule"
          % (len(commands), len(broken)))
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What the torch-free `hpo` buys (docs/design.md, "Two executables"), before and after in one run:
`hpo-torch` is the command line as it was (every built-in task, libtorch linked), `hpo` the one
users start now. Both run command sweeps, so each figure is taken for both on the same machine,
interleaved:

* `--version`, warm (median of --repeat runs) and cold (the page cache dropped before each run,
  when /proc/sys/vm/drop_caches can be written: root outside a container);
* a 4-rank command sweep (1-rank groups): each rank's resident memory and mapped shared objects,
  read by the trial program from its parent (the rank that started it), and the first trial's
  start after mpirun is launched;
* the scale: a command sweep of no-op trials on --scale-ranks ranks (default 256) with `hpo` alone
  (at about 170 MB a rank, `hpo-torch` would need 43 GB): that it finishes, its wall time and
  rank 0's resident memory.

Usage: bench/launcher_footprint.py --build build [--repeat 10] [--scale-ranks 256]
Prints `bench=launcher_footprint binary=hpo|hpo-torch measure=... ...` lines, check=ok when every
sweep completed every trial.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1"}

# Each trial records when it started and what its parent, the rank that started it, holds.
PROGRAM = """#!/usr/bin/python3
import os, time
started = time.time()
parent = os.getppid()
with open("/proc/%d/status" % parent) as f:
    rss_kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
with open("/proc/%d/maps" % parent) as f:
    objects = len({line.split()[-1] for line in f if ".so" in line})
with open(os.path.join(os.environ["STAMPS"], "trial-%s-%d" % (os.environ["HPO_TRIAL_ID"],
                                                                parent)), "w") as f:
    f.write("%f %d %d\\n" % (started, rss_kb, objects))
print("loss=%s" % os.environ["HPO_TRIAL_ID"], flush=True)
"""

NOOP = "#!/bin/sh\necho loss=1\n"

CONFIG = """sweep:
  program: %s
  command: ['${program}']
  method: random
  run_cap: %d
  metric: {name: loss, goal: minimize}
  parameters:
    x: {min: 0.0, max: 1.0}
ranks_per_trial: 1
seed: 1
"""


def emit(**fields):
    print("bench=launcher_footprint " + " ".join("%s=%s" % item for item in fields.items()),
          flush=True)


def version_seconds(binary, cold):
    if cold:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    start = time.perf_counter()
    subprocess.run([binary, "--version"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def can_drop_caches():
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
        return True
    except OSError:
        return False


def sweep(binary, ranks, program, trials, folder, timeout):
    """Runs a command sweep; returns (launch time, wall seconds, completed trials)."""
    config = os.path.join(folder, "sweep.yaml")
    with open(config, "w") as f:
        f.write(CONFIG % (program, trials))
    output = os.path.join(folder, "out")
    env = dict(os.environ, **MPI_ENV, STAMPS=folder)
    launched = time.time()
    done = subprocess.run(["mpirun", "--bind-to", "none", "-np", str(ranks), binary, "sweep",
                           "--config", config, "--output", output], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=timeout)
    wall = time.time() - launched
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        return launched, wall, 0
    with h5py.File(os.path.join(output, "study.h5"), "r") as study:
        completed = int((study["trials"]["status"] == b"completed").sum())
    return launched, wall, completed


def write_program(folder, name, text):
    """An executable file `name` in `folder` holding `text`; returns its path."""
    program = os.path.join(folder, name)
    with open(program, "w") as f:
        f.write(text)
    os.chmod(program, 0o755)
    return program


def footprint(binary, name, ranks, trials):
    with tempfile.TemporaryDirectory(prefix="hpo-footprint-") as folder:
        program = write_program(folder, "trial.py", PROGRAM)
        launched, wall, completed = sweep(binary, ranks, program, trials, folder, 600)
        stamps = [open(os.path.join(folder, n)).read().split() for n in os.listdir(folder)
                  if n.startswith("trial-")]
    if not stamps:  # the sweep failed before any trial ran (its output is on stderr)
        emit(binary=name, measure=f"command_sweep_{ranks}_ranks", trials=trials, check="FAILED")
        return False
    first = min(float(s[0]) for s in stamps) - launched
    rss = [int(s[1]) / 1024 for s in stamps]
    objects = [int(s[2]) for s in stamps]
    emit(binary=name, measure=f"command_sweep_{ranks}_ranks", trials=trials,
         first_trial_start_s="%.3f" % first, wall_s="%.2f" % wall,
         rank_rss_mb_median="%.1f" % statistics.median(rss),
         rank_rss_mb_max="%.1f" % max(rss), shared_objects=max(objects),
         check="ok" if completed == trials else "FAILED")
    return completed == trials


def scale(binary, ranks, trials):
    with tempfile.TemporaryDirectory(prefix="hpo-scale-") as folder:
        program = write_program(folder, "noop.sh", NOOP)
        _, wall, completed = sweep(binary, ranks, program, trials, folder, 1800)
    emit(binary="hpo", measure=f"noop_sweep_{ranks}_ranks", trials=trials, wall_s="%.1f" % wall,
         trials_per_s="%.1f" % (completed / wall), check="ok" if completed == trials else "FAILED")
    return completed == trials


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--scale-ranks", type=int, default=256)
    args = parser.parse_args()
    binaries = {"hpo": os.path.abspath(os.path.join(args.build, "hpo")),
                "hpo-torch": os.path.abspath(os.path.join(args.build, "hpo-torch"))}
    warm = {name: [] for name in binaries}
    for _ in range(args.repeat):  # interleaved, so both see the same machine
        for name, binary in binaries.items():
            warm[name].append(version_seconds(binary, cold=False))
    cold = {name: [] for name in binaries}
    if can_drop_caches():
        for _ in range(3):
            for name, binary in binaries.items():
                cold[name].append(version_seconds(binary, cold=True))
    for name in binaries:
        emit(binary=name, measure="version", warm_s_median="%.3f" % statistics.median(warm[name]),
             cold_s_median="%.3f" % statistics.median(cold[name]) if cold[name] else "n/a",
             check="ok")
    ok = True
    for _ in range(2):
        for name, binary in binaries.items():
            ok &= footprint(binary, name, 4, 16)
    if args.scale_ranks:
        ok &= scale(binaries["hpo"], args.scale_ranks // 4, args.scale_ranks)
        ok &= scale(binaries["hpo"], args.scale_ranks, 2 * args.scale_ranks)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

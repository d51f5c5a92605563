#!/usr/bin/python3
"""Overhead of hpo against Ray Tune and Optuna (issue 35): N trials of 0.1-1 s on C slots, the
share of slot time not spent in trials and trials per second, from launching each system to its
last trial's end.

Usage (always with /usr/bin/python3; the peers run in their venvs under HPO_PEERS_DIR, default
/opt/hpo-mpi/peers, from bench/peers/install.sh; nothing is fetched):
  bench/peers/_overhead.py --system SYSTEM --workload sleep|train --trials N [--concurrency 2]
                          [--build BUILD_DIR] [--seed S]
  bench/peers/_overhead.py --list-systems      # one line per system: NAME VENV (- for hpo)
Prints one line: `bench=peer_overhead system=.. version=.. workload=.. trials=N concurrency=C
wall_s=.. steady_s=.. busy_s=.. idle_share=.. steady_idle_share=.. trials_per_s=.. check=ok`
(check=FAILED error=... when not exactly N trials ran and completed).

Workloads (bench/peers/_trial_program.py, the same code in-process and as the trial program):
`sleep` sleeps d s, d uniform in [0.1, 1.0] drawn by the search; `train` runs `steps` SGD steps
(400-4000, about 0.1-1 s) of a small numpy MLP on synthetic data. Every trial stamps its own
start and end (wall clock) from inside, after any interpreter start-up:
  wall = launch of the system's process(es) -> last trial end; steady = first trial start -> last
  trial end; busy = sum of trial intervals; idle_share = 1 - busy / (wall * C),
  steady_idle_share = 1 - busy / (steady * C); trials_per_s = N / wall.

Systems:
* hpo_builtin: hpo's in-process trials. `train`: `mpirun -np C hpo sweep` of the built-in
  `synthetic` task, 1 epoch of 131,072 samples at a batch size from {160, 80, ..., 16} (160/k:
  steps uniform over 10 levels, about 0.1-1 s). Its trials cannot stamp themselves: a trial's
  busy time is its epoch_time_s (training and validation, measured inside the trial; building
  the model and saving the checkpoint and best weights count as overhead), its interval
  [start_time_s, start_time_s + duration_s] from the study (dispatch to result on rank 0, so
  steady is if anything long). `sleep`: hpo has no sleeping task, so
  build/bench/hpo_bench_dispatch (`mpirun -np C hpo_bench_dispatch N 1 0.1 1.0`): the real
  coordinator, searcher (random), study file and rank-to-rank messages of a sweep, each trial
  sleeping d uniform in [0.1, 1.0] drawn from its trial seed. _overhead_sleep_stamps.c,
  preloaded into its ranks, stamps those sleeps as _trial_program.py stamps its own.
* hpo_command: `mpirun --oversubscribe --bind-to none -np C hpo sweep`, C groups of 1 rank, of
  command trials (`/usr/bin/python3 _trial_program.py ${args}`), random search, hpo's defaults.
* ray_tune, ray_tune_program: bench/peers/_overhead_ray.py, a `Tuner` over a function trainable
  (1 CPU each), num_samples=N, random search with C trials at a time
  (BasicVariantGenerator(max_concurrent=C), what max_concurrent_trials=C sets up, seeded),
  ray.init(num_cpus=C); `_program` launches _trial_program.py per trial as hpo does. Settings:
  include_dashboard=False, log_to_driver=False, logging at WARNING,
  RunConfig(verbose=0), RAY_USAGE_STATS_ENABLED=0 (no network), Ray's temp dir and Tune's
  storage in the run's folder: what a user scripting a sweep sets to keep Ray quiet and off the
  network; none changes scheduling. Everything else is Ray's default (reuse_actors=False, Tune's
  result loggers and experiment checkpoints on). ray_tune_reuse and ray_tune_program_reuse are
  the same with TuneConfig(reuse_actors=True), Ray's advice for many short trials: one worker
  process serves trial after trial instead of a new one per trial (about 2 s each here).
* optuna, optuna_program: bench/peers/_overhead_optuna.py, C worker processes started together on
  one JournalStorage(JournalFileBackend(file)) (Optuna's file-based way to share a study between
  processes), RandomSampler, each optimizing until the study holds N trials (MaxTrialsCallback);
  Optuna's INFO log silenced.

Cost on a busy 2-core machine: 1,000 trials take hpo and Optuna about 5-7 min (sleep) and
8-15 min (train), Ray Tune 40-60 min (a new worker process per trial; about 10 s to start).

Every process gets OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1 (one core per trial) and TMPDIR in the
run's temporary folder, which is removed afterwards. This script makes itself a child subreaper
and runs every system in sessions of its own: whatever is left under it when a run ends (normally
nothing: Ray's daemons end with ray.shutdown; it says so on stderr otherwise), fails or is
interrupted (Ctrl-C, SIGTERM) is sent SIGTERM, then SIGKILL, and reaped.
"""

import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _trial_program as trial_program  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
PEERS = os.environ.get("HPO_PEERS_DIR", "/opt/hpo-mpi/peers")
SYSTEMS = {"hpo_builtin": "-", "hpo_command": "-", "ray_tune": "ray", "ray_tune_program": "ray",
           "ray_tune_reuse": "ray", "ray_tune_program_reuse": "ray", "optuna": "optuna",
           "optuna_program": "optuna"}
PR_SET_CHILD_SUBREAPER = 36
SYNTHETIC_SAMPLES = 131072
SYNTHETIC_BATCHES = [round(160 / k) for k in range(1, 11)]


class Failed(Exception):
    """The run did not complete exactly N trials; the message says why."""


def start(argv, folder, env, log_name):
    """Starts argv in a session of its own, output to FOLDER/LOG_NAME."""
    with open(os.path.join(folder, log_name), "w") as log:
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=folder, env=env,
                                start_new_session=True)


def log_tail(folder, log_name, lines=20):
    with open(os.path.join(folder, log_name)) as f:
        return "".join(f.readlines()[-lines:])


def wait(processes, folder):
    """Waits for (process, log name) pairs; raises Failed for the first that exited non-zero."""
    for process, log_name in processes:
        if process.wait() != 0:
            sys.stderr.write(log_tail(folder, log_name))
            raise Failed("%s_exited_%d" % (log_name, process.returncode))


def mpirun(args):
    return ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(args.concurrency)]


def read_stamps(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [tuple(map(float, line.split())) for line in f]


def read_study(path, trials):
    """The study's rows; raises Failed unless it holds exactly `trials` completed trials."""
    with h5py.File(path, "r") as f:
        rows = f["trials"][:]
        curves = f["curves"][:]
    rows = rows[rows["trial_id"] >= 0]
    completed = int((rows["status"] == b"completed").sum())
    if len(rows) != trials or completed != trials:
        raise Failed("study_has_%d_trials_%d_completed" % (len(rows), completed))
    return rows, curves


def hpo_version():
    done = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return "hpo-" + (done.stdout.strip() if done.returncode == 0 else "unknown")


def sweep_config(args, folder, lines):
    path = os.path.join(folder, "sweep.yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines + ["seed: %d" % args.seed, ""]))
    return path


def run_hpo_builtin(args, folder, env, stamps):
    """(launch time, trial intervals, busy seconds or None for their sum, version)."""
    if args.workload == "sleep":
        library = os.path.join(folder, "stamps.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", library,
                        os.path.join(HERE, "_overhead_sleep_stamps.c"), "-ldl"], check=True)
        argv = mpirun(args) + ["-x", "LD_PRELOAD=" + library,
                               os.path.join(args.build, "bench", "hpo_bench_dispatch"),
                               str(args.trials), "1", "0.1", "1.0"]
        launched = time.time()
        wait([(start(argv, folder, dict(env, HPO_OVERHEAD_STAMPS=stamps), "hpo.log"),
               "hpo.log")], folder)
        if "check=ok" not in log_tail(folder, "hpo.log"):
            raise Failed("hpo_bench_dispatch_check_failed")
        return launched, read_stamps(stamps), None, hpo_version()
    batches = ", ".join(map(str, SYNTHETIC_BATCHES))
    config = sweep_config(args, folder, [
        "sweep:",
        "  method: random",
        "  metric: {name: val_loss, goal: minimize}",
        "  run_cap: %d" % args.trials,
        "  parameters:",
        "    batch_size: {values: [%s]}" % batches,
        "    optimizer: {value: sgd}",
        "task: synthetic",
        "synthetic: {train_samples: %d, val_samples: 256, test_samples: 256, features: 32,"
        " classes: 4}" % SYNTHETIC_SAMPLES,
        "epochs: 1"])
    output = os.path.join(folder, "out")
    argv = mpirun(args) + [os.path.join(args.build, "hpo"), "sweep", "--config", config,
                           "--output", output]
    launched = time.time()
    wait([(start(argv, folder, env, "hpo.log"), "hpo.log")], folder)
    rows, curves = read_study(os.path.join(output, "study.h5"), args.trials)
    intervals = [(r["start_time_s"], r["start_time_s"] + r["duration_s"]) for r in rows]
    return launched, intervals, float(curves["epoch_time_s"].sum()), hpo_version()


def run_hpo_command(args, folder, env, stamps):
    name, low, high = trial_program.SPACE[args.workload]
    if args.workload == "sleep":
        space = "{distribution: uniform, min: %g, max: %g}" % (low, high)
    else:
        space = "{distribution: int_uniform, min: %d, max: %d}" % (low, high)
    config = sweep_config(args, folder, [
        "sweep:",
        "  program: %s" % os.path.join(HERE, "_trial_program.py"),
        "  command: ['/usr/bin/python3', '${program}', '${args}']",
        "  method: random",
        "  metric: {name: loss, goal: minimize}",
        "  run_cap: %d" % args.trials,
        "  parameters:",
        "    %s: %s" % (name, space),
        "    workload: {value: %s}" % args.workload,
        "    stamps: {value: '%s'}" % stamps])
    output = os.path.join(folder, "out")
    argv = mpirun(args) + [os.path.join(args.build, "hpo"), "sweep", "--config", config,
                           "--output", output]
    launched = time.time()
    wait([(start(argv, folder, env, "hpo.log"), "hpo.log")], folder)
    read_study(os.path.join(output, "study.h5"), args.trials)
    return launched, read_stamps(stamps), None, hpo_version()


def last_json(folder, log_name):
    with open(os.path.join(folder, log_name)) as f:
        lines = [line for line in f if line.startswith('{"version"')]
    if not lines:
        raise Failed("no_summary_in_" + log_name)
    return json.loads(lines[-1])


def run_ray(args, folder, env, stamps):
    argv = [os.path.join(PEERS, "ray", "bin", "python"), os.path.join(HERE, "_overhead_ray.py"),
            "--workload", args.workload, "--trials", str(args.trials),
            "--concurrency", str(args.concurrency), "--seed", str(args.seed), "--stamps", stamps,
            "--folder", folder] + (["--program"] if "_program" in args.system else []) + (
                ["--reuse-actors"] if args.system.endswith("_reuse") else [])
    launched = time.time()
    wait([(start(argv, folder, env, "ray.log"), "ray.log")], folder)
    summary = last_json(folder, "ray.log")
    if summary["trials"] != args.trials or summary["errors"] != 0:
        raise Failed("ray_ran_%d_trials_%d_errors" % (summary["trials"], summary["errors"]))
    return launched, read_stamps(stamps), None, summary["version"]


def run_optuna(args, folder, env, stamps):
    python = os.path.join(PEERS, "optuna", "bin", "python")
    script = os.path.join(HERE, "_overhead_optuna.py")
    journal = ["--journal", os.path.join(folder, "journal.log"), "--trials", str(args.trials)]
    common = [python, script] + journal + [
        "--workload", args.workload, "--seed", str(args.seed), "--stamps", stamps] + (
        ["--program"] if args.system.endswith("_program") else [])
    launched = time.time()
    workers = [(start(common + ["--worker", str(i)], folder, env, "optuna-%d.log" % i),
                "optuna-%d.log" % i) for i in range(args.concurrency)]
    wait(workers, folder)
    wait([(start([python, script, "--summary"] + journal, folder, env, "summary.log"),
           "summary.log")], folder)
    summary = last_json(folder, "summary.log")
    if summary["complete"] != args.trials or summary["failed"] != 0:
        raise Failed("optuna_completed_%d_failed_%d" % (summary["complete"], summary["failed"]))
    return launched, read_stamps(stamps), None, summary["version"]


RUNNERS = {"hpo_builtin": run_hpo_builtin, "hpo_command": run_hpo_command,
           "optuna": run_optuna, "optuna_program": run_optuna}
RUNNERS.update({name: run_ray for name, venv in SYSTEMS.items() if venv == "ray"})


def descendants():
    """Pids of the live processes below this one (zombies are reaped on the way)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    children = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, queue = [], [os.getpid()]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def process_name(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return str(pid)


def end_descendants():
    """SIGTERM to every process left below this one, SIGKILL after 5 s; returns their names."""
    left = descendants()
    names = sorted({process_name(pid) for pid in left})
    for sig, grace_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = descendants()
    return names


def interrupt(signum, frame):
    raise KeyboardInterrupt


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--system", choices=sorted(SYSTEMS))
    parser.add_argument("--workload", choices=("sleep", "train"))
    parser.add_argument("--trials", type=int)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list-systems", action="store_true")
    args = parser.parse_args()
    if args.list_systems:
        for name, venv in SYSTEMS.items():
            print(name, venv)
        return 0
    if args.system is None or args.workload is None or args.trials is None:
        parser.error("--system, --workload and --trials are required")
    args.build = os.path.abspath(args.build)

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGINT, interrupt)  # also when started with SIGINT ignored (`cmd &`)
    signal.signal(signal.SIGTERM, interrupt)
    folder = tempfile.mkdtemp(prefix="hpo-peer-overhead-")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", TMPDIR=folder,
               RAY_USAGE_STATS_ENABLED="0")
    stamps = os.path.join(folder, "stamps")
    launched, intervals, busy, version, error = time.time(), [], None, "-", None
    try:
        launched, intervals, busy, version = RUNNERS[args.system](args, folder, env, stamps)
        if len(intervals) != args.trials:
            raise Failed("%d_trials_stamped" % len(intervals))
    except (Failed, KeyboardInterrupt, subprocess.CalledProcessError) as failure:
        error = {KeyboardInterrupt: "interrupted", subprocess.CalledProcessError:
                 "building_the_stamps_library_failed"}.get(type(failure), str(failure))
        intervals = intervals or read_stamps(stamps)
    finally:
        leftovers = end_descendants()
        shutil.rmtree(folder, ignore_errors=True)
    if leftovers:
        sys.stderr.write("_overhead.py: ended leftover processes: %s\n" % " ".join(leftovers))

    nan = float("nan")
    wall = max(end for _, end in intervals) - launched if intervals else nan
    steady = (max(end for _, end in intervals) - min(s for s, _ in intervals)) if intervals else nan
    if busy is None:
        busy = sum(end - s for s, end in intervals)
    c = args.concurrency
    print("bench=peer_overhead system=%s version=%s workload=%s trials=%d concurrency=%d "
          "wall_s=%.3f steady_s=%.3f busy_s=%.3f idle_share=%.5f steady_idle_share=%.5f "
          "trials_per_s=%.3f check=%s" %
          (args.system, version, args.workload, args.trials, c, wall, steady, busy,
           1 - busy / (wall * c), 1 - busy / (steady * c), args.trials / wall,
           "ok" if error is None else "FAILED error=" + re.sub(r"\s+", "_", error)[:200]),
          flush=True)
    return 0 if error is None else 1


if __name__ == "__main__":
    sys.exit(main())

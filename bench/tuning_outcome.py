#!/usr/bin/env python3
"""A user's own tuning run, cut at a compute budget: the test accuracy of the trial hpo would
select after EPOCH_CAP cumulative epochs, and the pause/promotion churn that took (issue 54 item 4).

Per seed S, one real sweep of CONFIG (default bench/configs/fmnist_outcome_bohb.yaml: the
Fashion-MNIST CNN, 40 trials of up to 9 epochs, `method: bayes` with hyperband and no `search:`
keys, 2-rank trials) with `seed: S`, under `mpirun -np RANKS`. Once the sweep has trained EPOCH_CAP
epochs (the study's /curves rows and the running or interrupted trials' epochs beyond them,
which `hpo status` reads; polled every 5 s, so the running trials may finish the epoch they are
in), the sweep gets SIGUSR1 (Slurm's preemption signal; mpirun forwards it, and would kill the
job on SIGTERM), checkpoints its running trial and exits 3, as a preempted job does. Then:

  selected   the trial hpo's coordinator would report as best at that point: the first finished
             study row (rows are in finish order; paused and failed rows never count) with the best
             finite objective;
  test       its network (OUTPUT/models/trial_N.pt, which hpo keeps for the best trial) on the
             10,000 test images, as hpo scores it at a sweep's end (bench/_fmnist_test_accuracy.py);
  churn      checkpoints written (the progress lines "trial N paused at epoch", each a pause that
             saves the trial) and read (the lines "trial N promoted", each a paused trial resumed),
             per epoch trained. The checkpoint the stop writes is not counted. What the churn
             costs in time is inside `outside_epochs`: the share of the sweep's wall time (from
             the study's start_time to the log's last line) not spent in the epochs' own
             epoch_time_s (start-up, checkpoints written and read, the search's decisions).

One line per seed and a summary:

    bench=tuning_outcome seed=S epochs=E trials=T selected=N status=... val_accuracy=V
          test_accuracy=A checkpoints_written=W checkpoints_read=R churn_per_epoch=C
          wall_s=S outside_epochs=F goal=met|missed check=ok|FAILED
    bench=tuning_outcome seeds=... epoch_cap=E goal=A met=k/n check=ok|FAILED

check=ok when the sweep exited 0 or 3, every trial's last row has its /curves rows' epochs (but
the one trial the stop interrupted, which may hold more).

Usage: bench/tuning_outcome.py --hpo build/hpo [--seeds 1,2,3] [--epoch-cap 170] [--goal 0.925]
           [--config CONFIG] [--ranks 2] [--keep DIR] [--score DIR ...]
--keep leaves each sweep in DIR/seed-S (config.yaml, log.txt, wall_s.txt, out/); a sweep found
there is resumed (`hpo sweep --resume`) up to the cap, so a run stopped early goes on with the
same command: SIGUSR1 to this script stops the running sweep as the cap does (its line says
goal=unmeasured) and runs no further seed; SIGUSR1 to the sweep's mpirun stops that seed alone.
--score reads such folders, or one stopped at the cap by hand, instead of running any.
"""

import argparse
import datetime
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _fmnist_test_accuracy import test_accuracy, test_set  # noqa: E402

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
PREEMPTED_EXIT = 3  # docs/config.md: SIGUSR1 checkpoints the running trials and exits 3

# The sweep running now, and whether this script got SIGUSR1 (stop it, run no further seed).
RUNNING = {"job": None, "stop": False}


def stop_requested(signum, frame):
    """SIGUSR1 to this script: the running sweep checkpoints and exits 3, as at the cap."""
    del signum, frame
    RUNNING["stop"] = True
    job = RUNNING["job"]
    if job is not None and job.poll() is None:
        job.send_signal(signal.SIGUSR1)


def study_epochs(study, hpo):
    """Epochs the sweep has trained: its study's newest published /curves rows, plus the epochs
    its running trials hold beyond their rows there (a trial's rows land when it pauses or ends;
    `hpo status` reads its last epoch from the running state, published every few seconds)."""
    try:
        with h5py.File(study, "r") as f:
            published = max(f["published"][:], key=lambda row: row["sequence"])
            trial_ids = f["curves"]["trial_id"][:published["curves"]].tolist()
    except (OSError, KeyError, ValueError):  # no study yet, or none published
        return 0
    status = subprocess.run([hpo, "status", study], capture_output=True, text=True)
    if status.returncode != 0:
        sys.exit("hpo status %s: %s" % (study, status.stderr.strip()))
    running = re.findall(r"trial (\d+) \(epoch (\d+)", status.stdout)
    return len(trial_ids) + sum(max(0, int(epoch) - trial_ids.count(int(trial)))
                                for trial, epoch in running)


def run_until(hpo, config, ranks, folder, cap):
    """Runs (or resumes) the sweep in FOLDER until its study holds CAP epochs; returns mpirun's
    exit code. Each run's wall time is added to FOLDER/wall_s.txt, its output to FOLDER/log.txt."""
    study = os.path.join(folder, "out", "study.h5")
    command = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks), hpo, "sweep",
               "--config", config, "--output", os.path.join(folder, "out")]
    if study_epochs(study, hpo) >= cap:
        return 0  # measured already
    if os.path.exists(study):
        command.append("--resume")  # a run stopped before the cap (a session's end, say)
    started = time.monotonic()
    with open(os.path.join(folder, "log.txt"), "a") as log:
        job = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                               env=dict(os.environ, **MPI_ENV), start_new_session=True)
        RUNNING["job"] = job
        if RUNNING["stop"]:  # SIGUSR1 came while it started
            job.send_signal(signal.SIGUSR1)
        try:
            while job.poll() is None and study_epochs(study, hpo) < cap:
                time.sleep(5)
            if job.poll() is None:
                job.send_signal(signal.SIGUSR1)  # mpirun forwards it; SIGTERM kills
            return job.wait(timeout=600)
        finally:
            RUNNING["job"] = None
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()
            with open(os.path.join(folder, "wall_s.txt"), "a") as f:
                f.write("%.1f\n" % (time.monotonic() - started))


def wall_seconds(folder, study_start):
    """The sweep's wall time: its runs' from FOLDER/wall_s.txt, else from the study's start to
    the log's last line (one run stopped by hand)."""
    runs = os.path.join(folder, "wall_s.txt")
    if os.path.exists(runs):
        with open(runs) as f:
            return sum(float(line) for line in f if line.strip())
    started = datetime.datetime.strptime(study_start, "%Y-%m-%dT%H:%M:%SZ")
    ended = datetime.datetime.utcfromtimestamp(os.path.getmtime(os.path.join(folder, "log.txt")))
    return (ended - started).total_seconds()


def churn(log_path):
    """(checkpoints written, checkpoints read) by pauses and promotions in the sweep's log."""
    with open(log_path) as f:
        text = f.read()
    return (len(re.findall(r"^trial \d+ paused at epoch", text, re.M)),
            len(re.findall(r"^trial \d+ promoted", text, re.M)))


def selected_row(trials, goal_is_max):
    """The row hpo's coordinator keeps as best: the first finished one (completed or stopped; a
    paused row never counts, nor a failed one) with the best finite objective."""
    best = None
    for row in trials:
        objective = float(row["objective"])
        if row["status"] not in (b"completed", b"stopped") or not math.isfinite(objective):
            continue
        if best is None or (objective > best["objective"] if goal_is_max
                            else objective < best["objective"]):
            best = row
    return best


def score(folder, seed, goal, test, hpo):
    """Prints the seed's line; returns (goal met, check ok). Its epochs count those of the trial
    the stop interrupted, which no /curves row holds yet (study_epochs)."""
    out = os.path.join(folder, "out")
    epochs = study_epochs(os.path.join(out, "study.h5"), hpo)
    with h5py.File(os.path.join(out, "study.h5"), "r") as f:
        published = max(f["published"][:], key=lambda r: r["sequence"])  # rows past it are spare
        trials = f["trials"][:published["trials"]]
        curves = f["curves"][:published["curves"]]
        goal_is_max = f.attrs["metric_goal"] == b"maximize"
        wall = wall_seconds(folder, f.attrs["start_time"].decode())
    log_path = os.path.join(folder, "log.txt")
    last = {int(row["trial_id"]): int(row["epochs"]) for row in trials}  # finish order
    trained = {t: int((curves["trial_id"] == t).sum()) for t in set(curves["trial_id"].tolist())}
    # Only the trial that the stop interrupted may hold more epochs than its last row (or no row).
    ahead = [t for t, n in trained.items() if n > last.get(t, 0)]
    consistent = len(ahead) <= 1 and all(trained.get(t, 0) >= e for t, e in last.items())
    row = selected_row(trials, goal_is_max)
    written, read = churn(log_path)
    if row is None:
        print("bench=tuning_outcome seed=%d epochs=%d selected=none goal=missed check=%s"
              % (seed, epochs, "ok" if consistent else "FAILED"))
        return False, consistent
    path = os.path.join(out, "models", "trial_%d.pt" % row["trial_id"])  # hpo keeps the best's
    _, accuracy = test_accuracy(path, *test)
    met = accuracy >= goal
    print("bench=tuning_outcome seed=%d epochs=%d trials=%d selected=%d status=%s "
          "epochs_selected=%d val_accuracy=%.4f test_accuracy=%.4f checkpoints_written=%d "
          "checkpoints_read=%d churn_per_epoch=%.3f wall_s=%.0f outside_epochs=%.3f goal=%s "
          "check=%s"
          % (seed, epochs, len(trained), row["trial_id"], row["status"].decode(),
             row["epochs"], row["objective"], accuracy, written, read,
             (written + read) / max(epochs, 1), wall,
             1 - float(curves["epoch_time_s"].sum()) / wall, "met" if met else "missed",
             "ok" if consistent else "FAILED"), flush=True)
    return met, consistent


def seeded_config(config, seed, folder):
    """CONFIG with `seed: SEED`, written to FOLDER/config.yaml."""
    with open(config) as f:
        text, count = re.subn(r"^seed: \d+$", "seed: %d" % seed, f.read(), flags=re.M)
    if count != 1:
        sys.exit("%s: no top-level `seed:` line to replace" % config)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "config.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hpo", default=os.path.join(HERE, "..", "build", "hpo"))
    parser.add_argument("--config",
                        default=os.path.join(HERE, "configs", "fmnist_outcome_bohb.yaml"))
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--epoch-cap", type=int, default=170)
    parser.add_argument("--goal", type=float, default=0.925)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--keep", default=None)
    parser.add_argument("--score", nargs="+", default=None, help="score these kept folders")
    args = parser.parse_args()
    test = test_set()
    results = []
    with tempfile.TemporaryDirectory(prefix="hpo-bench-outcome-") as scratch:
        if args.score:
            seeds = []
            for folder in args.score:
                with open(os.path.join(folder, "config.yaml")) as f:
                    seeds.append(int(re.search(r"^seed: (\d+)$", f.read(), re.M).group(1)))
                results.append(score(folder, seeds[-1], args.goal, test,
                                     os.path.abspath(args.hpo)))
        else:
            seeds = [int(s) for s in args.seeds.split(",")]
            signal.signal(signal.SIGUSR1, stop_requested)
            for seed in seeds:
                if RUNNING["stop"]:
                    break
                folder = os.path.join(args.keep or scratch, "seed-%d" % seed)
                config = seeded_config(args.config, seed, folder)
                code = run_until(os.path.abspath(args.hpo), config, args.ranks, folder,
                                 args.epoch_cap)
                if code not in (0, PREEMPTED_EXIT):
                    print("bench=tuning_outcome seed=%d exit=%d (see %s) check=FAILED"
                          % (seed, code, os.path.join(folder, "log.txt")), flush=True)
                    results.append((False, False))
                    continue
                held = study_epochs(os.path.join(folder, "out", "study.h5"),
                                    os.path.abspath(args.hpo))
                if code == PREEMPTED_EXIT and held < args.epoch_cap:  # stopped by someone else
                    print("bench=tuning_outcome seed=%d epochs=%d goal=unmeasured (stopped before "
                          "the cap; the same command resumes it) check=ok" % (seed, held))
                    results.append((None, True))
                    continue
                results.append(score(folder, seed, args.goal, test, os.path.abspath(args.hpo)))
    ok = all(ok for _, ok in results)
    measured = [met for met, _ in results if met is not None]
    print("bench=tuning_outcome seeds=%s epoch_cap=%d goal=%g met=%d/%d check=%s"
          % (",".join(map(str, seeds)), args.epoch_cap, args.goal, sum(measured), len(measured),
             "ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

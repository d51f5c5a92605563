#!/usr/bin/env python3
"""Chaos: small sweeps of mixed methods, each hit at a random moment by one fault, then resumed
until done. Does a fault lose a finished trial, run a trial again past its checkpoint, leave a
study that does not open, leave a process behind, or a study that does not resume?

Sweep kinds (rotated with the faults so that every pair comes up): random search; bayes (TPE) +
hyperband; `search.model: curves` + hyperband; population-based training; two objectives (bayes,
ParEGO); command trials of a tiny Python program (random + hyperband) that keeps its step in
HPO_CHECKPOINT_DIR. The first five train the built-in synthetic task (3-6 short epochs, a
checkpoint every epoch); every sweep has 2-4 ranks, peer_timeout_s 6, and runs under
scripts/hpo-mpirun (the launcher the Slurm and Kubernetes recipes use: SIGTERM becomes SIGUSR1
for mpirun) at nice 10.

Faults, one per sweep, at a moment drawn uniformly from 5-95 % of the kind's uninterrupted run
(timed once per kind on 2 ranks when the script starts, scaled by 2 / the sweep's trial groups),
counted from rank 0's banner (printed once
the study exists and every rank's peer watch runs), or with --from-launch from the launch, so that
start-up is included (on a busy machine most faults then land before the study exists:
`study_at_fault=0`); a sweep that ends first is counted as missed:
  kill_rank     SIGKILL to a random rank
  kill_mpirun   SIGKILL to mpirun
  sigterm       SIGTERM to the launcher (preemption: exit 3 expected)
  sigstop_rank  SIGSTOP to a random rank until the job ends (exit 4 expected), then SIGCONT
  disk_full     the output folder is a 24 MB tmpfs, filled to the last byte (exit 1 expected);
                the filler is removed before the resume (skipped, and said so, where no tmpfs
                can be mounted)

After the fault, and after every resume: every process of the job (found by a tag in its
environment, so the rank's programs and their watchers too) must be gone within 15 s, else it is
an orphan (listed and killed); the study is copied and opened with h5py (a copy that does not open
is an unopenable study). Then `--resume`, without a fault, until exit 0 (at most 3 tries; a resume
that exits non-zero is a failed resume; a run past 150 s, or a job with a stopped rank that has
not ended 90 s after the SIGSTOP, is a hang, killed).

Counted at the end of each sweep, against the finished rows (completed, stopped, failed: a
trial's last row) of the study just before the fault (a copy of the live file) and just after it:
  lost     a finished trial missing from the final study, or its row changed
  reruns   epochs trained again at or below a checkpoint: for command trials from the program's
           own ledger (every rank appends `ran E` before and `saved E` after writing its step to
           HPO_CHECKPOINT_DIR; a `ran E` with E <= the last `saved` of that trial and rank), for
           every trial an epoch that appears twice in the final study's /curves
and the exit codes against the expected ones (informational: `unexpected`).

Usage: bench/chaos.py --hpo build/hpo [--sweeps 100] [--seed 1] [--from-launch] [--minutes M]
                      [--work DIR] [--keep]
Prints one `bench=chaos ...` line per kind timed, one per sweep and a summary line; check=ok when
no finished trial was lost, no epoch ran twice past its checkpoint, every study opened, every
resume succeeded, no process was left behind and nothing hung. The folders of sweeps with a
finding are kept (their snapshots: before.h5, after_fault.h5, after_resume_N.h5) under the work
folder and named; the others are removed unless --keep.
"""

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "mpi"))
from hpo_test_support import MPI_ENV, published_rows  # noqa: E402

LAUNCHER = os.path.join(ROOT, "scripts", "hpo-mpirun")
PYTHON = "/usr/bin/python3"
KINDS = ["random", "bayes_hyperband", "curves", "pbt", "objectives", "command"]
FAULTS = ["kill_rank", "kill_mpirun", "sigterm", "sigstop_rank", "disk_full"]
EXPECTED_EXIT = {"sigterm": {3}, "sigstop_rank": {4}, "disk_full": {1}}
PEER_TIMEOUT_S = 6
RUN_TIMEOUT_S = 150
STOPPED_TIMEOUT_S = 90  # peer_timeout_s, the launcher's 30 s abort grace, start-up, slack
MIN_ESTIMATE_S = 2
BANNER = "hpo-mpi "  # rank 0's first line, printed once the study exists and the peer watch runs
LEFTOVER_GRACE_S = 15
RESUME_TRIES = 3
TMPFS_SIZE = "24m"
FINISHED = {b"completed", b"stopped", b"failed"}

SYNTHETIC = ("task: synthetic\n"
             "synthetic: {train_samples: 4096, val_samples: 512, test_samples: 256, features: 32,"
             " classes: 4, noise: 0.5}\n")
PARAMETERS = ("  parameters:\n"
              "    lr: {distribution: log_uniform_values, min: 0.0005, max: 0.05}\n"
              "    batch_size: {values: [32, 64]}\n"
              "    optimizer: {values: [sgd, adam]}\n"
              "    width: {values: [64, 128]}\n")
HYPERBAND = "  early_terminate: {type: hyperband, min_iter: 1, eta: 2}\n"
COMMON = ("checkpoint: {interval: 1, grace_period_s: 20}\n"
          "peer_timeout_s: %d\n"
          "ranks_per_trial: %%d\n"
          "seed: %%d\n") % PEER_TIMEOUT_S

# The command trials' program: `--steps` steps of `--sleep` s; before each step it appends
# `ran E` to CHAOS_LEDGER/trial_T.rank_R, after writing the step to HPO_CHECKPOINT_DIR `saved E`,
# then rank 0 prints the metric. A resumed trial starts after its saved step.
PROGRAM = r'''
import argparse, json, os, time
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float)
parser.add_argument("--steps", type=int)
parser.add_argument("--sleep", type=float)
args, _ = parser.parse_known_args()
rank = int(os.environ.get("RANK", "0"))
ledger = os.path.join(os.environ["CHAOS_LEDGER"],
                      "trial_%s.rank_%d" % (os.environ["HPO_TRIAL_ID"], rank))
state = os.path.join(os.environ["HPO_CHECKPOINT_DIR"], "state-rank-%d.json" % rank)
first = 1
if os.path.exists(state):
    with open(state) as f:
        first = json.load(f)["step"] + 1
def note(text):
    with open(ledger, "a") as f:
        f.write(text + "\n")
for step in range(first, args.steps + 1):
    note("ran %d" % step)
    time.sleep(args.sleep)
    with open(state + ".tmp", "w") as f:
        json.dump({"step": step}, f)
    os.replace(state + ".tmp", state)
    note("saved %d" % step)
    if rank == 0:
        print(json.dumps({"epoch": step, "loss": args.lr * 10 + 1.0 / step}), flush=True)
'''


def sweep_config(kind, ranks_per_trial, seed, program):
    common = COMMON % (ranks_per_trial, seed)
    if kind == "random":
        return ("sweep:\n  method: random\n  metric: {name: val_accuracy, goal: maximize}\n"
                "  run_cap: 6\n" + PARAMETERS + SYNTHETIC + "epochs: 3\n" + common)
    if kind in ("bayes_hyperband", "curves"):
        model = "curves" if kind == "curves" else "tpe"
        return ("sweep:\n  method: bayes\n  metric: {name: val_accuracy, goal: maximize}\n"
                "  run_cap: 8\n" + HYPERBAND + PARAMETERS +
                "search: {model: %s, startup_trials: 3}\n" % model + SYNTHETIC + "epochs: 4\n" +
                common)
    if kind == "pbt":
        return ("sweep:\n  method: random\n  metric: {name: val_accuracy, goal: maximize}\n"
                "  run_cap: 4\n" + PARAMETERS +
                "pbt: {population: 4, perturbation_interval: 2, mutations: [lr, batch_size]}\n" +
                SYNTHETIC + "epochs: 6\n" + common)
    if kind == "objectives":
        return ("sweep:\n  method: bayes\n  metric:\n"
                "    - {name: val_loss, goal: minimize}\n"
                "    - {name: val_accuracy, goal: maximize}\n"
                "  run_cap: 6\n" + PARAMETERS + "search: {startup_trials: 2}\n" + SYNTHETIC +
                "epochs: 3\n" + common)
    assert kind == "command"
    return ("sweep:\n  program: %s\n  method: random\n  metric: {name: loss, goal: minimize}\n"
            "  run_cap: 8\n" % program + HYPERBAND +
            "  parameters:\n"
            "    lr: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
            "    steps: {value: 6}\n"
            "    sleep: {value: 0.4}\n"
            "epochs: 6\ninterpreter: %s\nterminate_grace_s: 3\n" % PYTHON + common)


# ---- the processes of a job: everything whose environment holds its tag ----

def tagged(tag):
    """{pid: (state, argv)} of the live (not zombie) processes whose environment holds tag."""
    found = {}
    needle = ("CHAOS_TAG=%s" % tag).encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open("/proc/%s/stat" % name) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open("/proc/%s/cmdline" % name, "rb") as f:
                argv = [part.decode(errors="replace") for part in f.read().split(b"\0") if part]
        except OSError:
            continue
        if state != "Z":
            found[int(name)] = (state, argv)
    return found


def ranks_of(tag):
    """The pids of the job's hpo ranks (they have OMPI_COMM_WORLD_RANK; their programs do not)."""
    ranks = []
    for pid, (_, argv) in tagged(tag).items():
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                if b"OMPI_COMM_WORLD_RANK=" in f.read():
                    if argv and os.path.basename(argv[0]).startswith("hpo"):
                        ranks.append(pid)
        except OSError:
            pass
    return sorted(ranks)


def threads_of(tag):
    """`pid:state:threads` of each of the job's ranks."""
    found = []
    for pid in ranks_of(tag):
        try:
            with open("/proc/%d/status" % pid) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            found.append("%d:%s:%s" % (pid, fields["State"].split()[0], fields["Threads"].strip()))
        except (OSError, KeyError):
            pass
    return " ".join(found)


def mpirun_of(tag):
    for pid, (_, argv) in tagged(tag).items():
        if argv and os.path.basename(argv[0]) in ("mpirun", "orterun"):
            return pid
    return None


def signal_pid(pid, number):
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def reap_leftovers(tag):
    """Waits up to LEFTOVER_GRACE_S for the job's processes to go; kills (SIGCONT, SIGKILL) and
    returns what is left: the orphans, as `pid state argv` strings."""
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    while time.monotonic() < deadline:
        if not tagged(tag):
            return []
        time.sleep(0.2)
    left = tagged(tag)
    for pid in left:
        signal_pid(pid, signal.SIGCONT)
        signal_pid(pid, signal.SIGKILL)
    return ["%d %s %s" % (pid, state, " ".join(argv)[:160]) for pid, (state, argv) in left.items()]


# ---- the study ----

def snapshot(study, path):
    """Copies the study to `path` and reads the copy: (finished rows {trial_id: bytes}, curves
    {trial_id: [epochs]}, error). (None, None, None) when there is no study yet."""
    if not os.path.exists(study):
        return None, None, None
    try:
        shutil.copyfile(study, path)
        with h5py.File(path, "r") as f:
            last = {}
            for row in published_rows(f, "trials"):
                if row["trial_id"] >= 0:
                    last[int(row["trial_id"])] = row
            curves = {}
            for row in published_rows(f, "curves"):
                curves.setdefault(int(row["trial_id"]), []).append(int(row["epoch"]))
        finished = {t: row.tobytes() for t, row in last.items() if row["status"] in FINISHED}
        return finished, curves, None
    except (OSError, KeyError, ValueError) as error:
        return None, None, "%s: %s" % (type(error).__name__, error)


def ledger_reruns(ledger):
    """Epochs a command trial's program ran again at or below a step it had saved."""
    reruns = []
    for name in sorted(os.listdir(ledger)):
        saved = 0
        with open(os.path.join(ledger, name)) as f:
            for line in f:
                what, epoch = line.split()
                epoch = int(epoch)
                if what == "saved":
                    saved = max(saved, epoch)
                elif epoch <= saved:
                    reruns.append("%s epoch %d (saved %d)" % (name, epoch, saved))
    return reruns


def curve_repeats(curves):
    return ["trial %d epochs %s" % (t, e) for t, e in sorted(curves.items())
            if len(e) != len(set(e))]


# ---- a run of the launcher, with or without a fault ----

@contextlib.contextmanager
def output_folder(path, on_tmpfs):
    os.makedirs(path)
    if on_tmpfs:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + TMPFS_SIZE, "tmpfs", path],
                       check=True, capture_output=True)
    try:
        yield
    finally:
        if on_tmpfs:
            subprocess.run(["umount", "-l", path], capture_output=True)


def tmpfs_works():
    folder = tempfile.mkdtemp(prefix="hpo-chaos-mount-")
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", folder],
                              capture_output=True, text=True)
        if done.returncode == 0:
            subprocess.run(["umount", folder], capture_output=True)
            return None
        return done.stderr.strip() or "mount failed"
    finally:
        os.rmdir(folder)


def fill(folder):
    with open(os.path.join(folder, "filler"), "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
        except OSError:
            pass
        try:
            while True:
                filler.write(b"\0")
        except OSError:
            pass


class Run:
    """One launch of the sweep (its own session, its own tag); `log` and `code` once it ended
    (code None: it hung and was killed). Run.live holds those not waited for yet, killed when the
    script ends early."""

    live = set()

    def __init__(self, argv, tag, work, ledger):
        env = dict(os.environ, **MPI_ENV)
        env.update(CHAOS_TAG=tag, CHAOS_LEDGER=ledger)
        self.tag = tag
        self.started = time.monotonic()
        self.log_path = os.path.join(work, "%s.log" % tag)
        self.log_file = open(self.log_path, "w")
        self.process = subprocess.Popen(["nice", "-n", "10", LAUNCHER] + argv, cwd=work, env=env,
                                        stdout=self.log_file, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self.code = None
        self.log = ""
        Run.live.add(self)

    def elapsed(self):
        return time.monotonic() - self.started

    def banner_at(self):
        """Seconds from the launch to rank 0's banner, or None when the run ended without one."""
        while True:
            ended = self.process.poll() is not None
            with open(self.log_path) as f:
                if any(line.startswith(BANNER) for line in f):
                    return self.elapsed()
            if ended or self.elapsed() > RUN_TIMEOUT_S:
                return None
            time.sleep(0.05)

    def kill(self):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in tagged(self.tag):
            signal_pid(pid, signal.SIGCONT)
            signal_pid(pid, signal.SIGKILL)
        self.process.wait()

    def wait(self, timeout):
        """Waits for the launcher; on a time-out kills the job's session and tagged processes.
        Returns whether it ended by itself."""
        try:
            self.code = self.process.wait(timeout=max(timeout, 0.01))
            ended = True
        except subprocess.TimeoutExpired:
            self.kill()
            ended = False
        Run.live.discard(self)
        self.log_file.close()
        with open(self.log_path) as f:
            self.log = f.read()
        return ended


def inject(fault, run, rng, output):
    """Injects `fault` into the running job; returns the pid it stopped (SIGSTOP) or None.
    A rank fault waits (briefly) for the ranks to exist."""
    if fault in ("kill_rank", "sigstop_rank"):
        ranks = []
        deadline = time.monotonic() + 30
        while not ranks and run.process.poll() is None and time.monotonic() < deadline:
            ranks = ranks_of(run.tag)
            time.sleep(0.05)
        if not ranks:
            return None
        pid = rng.choice(ranks)
        signal_pid(pid, signal.SIGKILL if fault == "kill_rank" else signal.SIGSTOP)
        return pid if fault == "sigstop_rank" else None
    if fault == "kill_mpirun":
        pid = None
        deadline = time.monotonic() + 30
        while pid is None and run.process.poll() is None and time.monotonic() < deadline:
            pid = mpirun_of(run.tag)
            time.sleep(0.05)
        if pid:
            signal_pid(pid, signal.SIGKILL)
        return None
    if fault == "sigterm":
        signal_pid(run.process.pid, signal.SIGTERM)
        return None
    assert fault == "disk_full"
    fill(output)
    return None


class Counts:
    NAMES = ["lost", "reruns", "unopenable", "failed_resumes", "orphans", "hangs", "unexpected",
             "missed"]

    def __init__(self):
        for name in self.NAMES:
            setattr(self, name, 0)

    def add(self, other):
        for name in self.NAMES:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def findings(self):
        return any(getattr(self, name) for name in self.NAMES[:6])

    def line(self):
        return " ".join("%s=%d" % (name, getattr(self, name)) for name in self.NAMES)


class Sweep:
    """One chaos sweep's folder, study, ledger and command line."""

    def __init__(self, index, kind, rng, args, work, program):
        self.index, self.kind, self.seed = index, kind, args.seed
        self.folder = os.path.join(work, "sweep%03d" % index)
        os.makedirs(self.folder)
        self.ledger = os.path.join(self.folder, "ledger")
        os.makedirs(self.ledger)
        self.output = os.path.join(self.folder, "out")
        self.study = os.path.join(self.output, "study.h5")
        self.np_count = rng.choice([2, 2, 3, 4])
        self.ranks_per_trial = 2 if (self.np_count == 4 and
                                     kind in ("random", "objectives", "command")) else 1
        config = os.path.join(self.folder, "sweep.yaml")
        with open(config, "w") as f:
            f.write(sweep_config(kind, self.ranks_per_trial, rng.randrange(1000), program))
        self.argv = ["-np", str(self.np_count), "--oversubscribe", "--bind-to", "none", args.hpo,
                     "sweep", "--config", config, "--output", self.output]

    def run(self, attempt, resume=False):
        return Run(self.argv + (["--resume"] if resume else []),
                   "chaos%d-%03d-%d" % (self.seed, self.index, attempt), self.folder, self.ledger)

    def snapshot(self, name):
        return snapshot(self.study, os.path.join(self.folder, name))


def reap(run, what, counts, notes):
    """Counts and notes the processes `run` left behind."""
    orphans = reap_leftovers(run.tag)
    counts.orphans += len(orphans)
    if orphans:
        notes.append("left after %s: %s" % (what, "; ".join(orphans)))


def expected_exits(fault, log):
    """The exit codes a run that met `fault` may end with: EXPECTED_EXIT's, and 0 for a rank
    stopped once the sweep had finished (docs/clusters.md: a rank frozen while the job ends
    cannot hold it, and the job ends with the sweep's outcome)."""
    finished = fault == "sigstop_rank" and "\nsweep finished: " in log
    return EXPECTED_EXIT[fault] | ({0} if finished else set())


def fault_run(sweep, fault, fault_at, rng, args, counts, notes):
    """Starts the sweep, injects `fault` `fault_at` seconds after its banner (or its launch) and
    waits for it to end; returns (hit, study_at_fault, exit code, the finished rows before)."""
    run = sweep.run(0)
    clock = 0.0 if args.from_launch else run.banner_at()
    hit = clock is not None and not wait_ended(run, clock + fault_at)
    stopped = None
    study_at_fault = os.path.exists(sweep.study)
    reference, _, error = sweep.snapshot("before.h5")
    if error:
        notes.append("live copy before the fault did not open (not counted): " + error)
    if hit:
        stopped = inject(fault, run, rng, sweep.output)
    if stopped and not wait_ended(run, run.elapsed() + STOPPED_TIMEOUT_S):
        notes.append("the job outlived its stopped rank by %d s; the ranks' threads then "
                     "(1: before MPI_Init): %s" % (STOPPED_TIMEOUT_S, threads_of(run.tag)))
    ended = run.wait(0 if stopped else RUN_TIMEOUT_S - run.elapsed())
    if stopped:
        signal_pid(stopped, signal.SIGCONT)
    if not ended:
        counts.hangs += 1
        notes.append("the faulted run hung; killed: %s" % run.log[-2000:])
    elif not hit:
        counts.missed += 1
    elif fault in EXPECTED_EXIT and run.code not in expected_exits(fault, run.log):
        counts.unexpected += 1
        notes.append("exit %s after %s (expected %s): %s" % (
            run.code, fault, sorted(expected_exits(fault, run.log)), run.log[-1500:]))
    reap(run, "the faulted run", counts, notes)
    return hit, study_at_fault, run.code, dict(reference or {})


def check_after_fault(sweep, reference, counts, notes):
    """Counts finished rows the fault changed or lost; adds the rows finished since to
    `reference`."""
    after, _, error = sweep.snapshot("after_fault.h5")
    if error:
        counts.unopenable += 1
        notes.append("the study after the fault did not open: " + error)
    for trial_id, row in (after or {}).items():
        if trial_id in reference and reference[trial_id] != row:
            counts.lost += 1
            notes.append("trial %d's finished row changed by the fault" % trial_id)
        reference[trial_id] = row
    missing = sorted(set(reference) - set(after or {}))
    if after is not None and missing:
        counts.lost += len(missing)
        notes.append("finished trials %s missing after the fault" % missing)


def resume_until_done(sweep, code, counts, notes):
    """Resumes the sweep until it ends with exit 0 (RESUME_TRIES at most); returns (resumes,
    done, the final study's rows and curves)."""
    resumes, done = 0, code == 0
    final = curves = None
    while not done and resumes < RESUME_TRIES:
        resumes += 1
        resume = sweep.run(resumes, resume=True)
        ended = resume.wait(RUN_TIMEOUT_S)
        reap(resume, "resume %d" % resumes, counts, notes)
        if not ended:
            counts.hangs += 1
            notes.append("resume %d hung; killed: %s" % (resumes, resume.log[-2000:]))
        elif resume.code != 0:
            counts.failed_resumes += 1
            notes.append("resume %d exit %s: %s" % (resumes, resume.code, resume.log[-2000:]))
        done = ended and resume.code == 0
        final, curves, error = sweep.snapshot("after_resume_%d.h5" % resumes)
        if error:
            counts.unopenable += 1
            notes.append("the study after resume %d did not open: %s" % (resumes, error))
    if code == 0:
        final, curves, error = sweep.snapshot("final.h5")
        if error:
            counts.unopenable += 1
            notes.append("the finished study did not open: " + error)
    return resumes, done, final, curves


def one_sweep(index, kind, fault, rng, args, work, estimate, program):
    """Runs sweep `index`; returns (Counts, per-sweep fields, notes)."""
    counts = Counts()
    notes = []
    sweep = Sweep(index, kind, rng, args, work, program)
    # The estimate is for 2 groups: more groups finish sooner.
    fault_at = rng.uniform(0.05, 0.95) * estimate * 2 * sweep.ranks_per_trial / sweep.np_count
    started = time.monotonic()
    with output_folder(sweep.output, fault == "disk_full"):
        hit, study_at_fault, code, reference = fault_run(sweep, fault, fault_at, rng, args,
                                                         counts, notes)
        if fault == "disk_full":
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(sweep.output, "filler"))
        check_after_fault(sweep, reference, counts, notes)
        resumes, done, final, curves = resume_until_done(sweep, code, counts, notes)
        if done and final is not None:
            for trial_id, row in reference.items():
                if final.get(trial_id) != row:
                    counts.lost += 1
                    notes.append("finished trial %d %s after the resume" % (
                        trial_id, "missing" if trial_id not in final else "changed"))
        repeats = curve_repeats(curves or {}) + ledger_reruns(sweep.ledger)
        counts.reruns += len(repeats)
        if repeats:
            notes.append("epochs run twice: " + "; ".join(repeats))
    fields = ("kind=%s np=%d rpt=%d fault=%s fault_at_s=%.1f hit=%d study_at_fault=%d exit=%s "
              "resumes=%d seconds=%.1f" % (kind, sweep.np_count, sweep.ranks_per_trial, fault,
                                           fault_at, hit, study_at_fault, code, resumes,
                                           time.monotonic() - started))
    return counts, fields, notes


def wait_ended(run, seconds):
    """Whether the run ended within `seconds` of its start."""
    try:
        run.process.wait(timeout=max(seconds - run.elapsed(), 0.01))
        return True
    except subprocess.TimeoutExpired:
        return False


def time_kinds(args, work, program):
    """Seconds of an uninterrupted 2-rank sweep of each kind, from its banner (or its launch, with
    --from-launch) to its exit."""
    estimates = {}
    for kind in KINDS:
        folder = os.path.join(work, "timing-" + kind)
        os.makedirs(os.path.join(folder, "ledger"))
        config = os.path.join(folder, "sweep.yaml")
        with open(config, "w") as f:
            f.write(sweep_config(kind, 1, 1, program))
        run = Run(["-np", "2", "--oversubscribe", "--bind-to", "none", args.hpo, "sweep",
                   "--config", config, "--output", os.path.join(folder, "out")],
                  "chaos%d-timing-%s" % (args.seed, kind), folder, os.path.join(folder, "ledger"))
        banner = 0.0 if args.from_launch else run.banner_at()
        ended = run.wait(RUN_TIMEOUT_S)
        reap_leftovers(run.tag)
        if not ended or run.code != 0 or banner is None:
            raise SystemExit("the uninterrupted %s sweep failed (exit %s):\n%s" % (
                kind, run.code, run.log[-3000:]))
        estimates[kind] = max(run.elapsed() - banner, MIN_ESTIMATE_S)
        print("bench=chaos timing kind=%s start_s=%.1f seconds=%.1f" % (
            kind, banner, run.elapsed() - banner), flush=True)
        shutil.rmtree(folder)
    return estimates


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hpo", required=True)
    parser.add_argument("--sweeps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", help="folder for the sweeps (default: a new one under /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep every sweep's folder")
    parser.add_argument("--from-launch", action="store_true",
                        help="draw the fault's moment from the launch, start-up included")
    parser.add_argument("--minutes", type=float,
                        help="start no sweep after this many minutes (the summary says how many ran)")
    args = parser.parse_args()
    args.hpo = os.path.abspath(args.hpo)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="hpo-chaos-")
    os.makedirs(work, exist_ok=True)
    program = os.path.join(work, "chaos_program.py")
    with open(program, "w") as f:
        f.write(PROGRAM)

    faults = list(FAULTS)
    why = tmpfs_works()
    if why:
        faults.remove("disk_full")
        print("bench=chaos disk_full skipped: cannot mount a tmpfs here (%s)" % why, flush=True)
    rng = random.Random(args.seed)
    pairs = [(kind, fault) for kind in KINDS for fault in faults]
    estimates = time_kinds(args, work, program)
    total = Counts()
    kept = []
    order = []
    started = time.monotonic()
    ran = 0
    for index in range(args.sweeps):
        if args.minutes and time.monotonic() - started > args.minutes * 60:
            break
        ran += 1
        if not order:
            order = list(pairs)
            rng.shuffle(order)
        kind, fault = order.pop()
        counts, fields, notes = one_sweep(index, kind, fault, random.Random(rng.random()), args,
                                          work, estimates[kind], program)
        total.add(counts)
        print("bench=chaos sweep=%d %s %s load1=%.1f" % (index, fields, counts.line(),
                                                           os.getloadavg()[0]), flush=True)
        for note in notes:
            print("  " + note.replace("\n", "\n    "), flush=True)
        folder = os.path.join(work, "sweep%03d" % index)
        if counts.findings():
            kept.append(folder)
        elif not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    ok = not total.findings()
    print("bench=chaos sweeps=%d faults=%s %s minutes=%.1f check=%s" % (
        ran, ",".join(faults), total.line(), (time.monotonic() - started) / 60,
        "ok" if ok else "FAILED"), flush=True)
    if kept:
        print("bench=chaos kept: " + " ".join(kept))
    elif not args.keep and not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        for unfinished in list(Run.live):  # interrupted: no job outlives the script
            unfinished.kill()

"""Deployment test: hpo's sbatch scripts on a real single-node Slurm cluster.

    python3 tests/deploy/test_slurm.py --hpo build/hpo --scripts slurm [-k NAME]

Starts munged, slurmctld and slurmd by hand in a temporary directory (slurm_cluster.py), submits
the sbatch scripts `hpo render sbatch` writes and checks what they did:

* CpuScript: `hpo-cpu.sbatch` on 4 tasks (2 groups of 2 ranks) runs a small synthetic sweep to
  COMPLETED; the study has run_cap completed trials. Also as a job array (one study per task).
* Preemption: `hpo-preemptible.sbatch` (--requeue, --signal=B:USR1@120, --open-mode=append) is
  sent SIGUSR1 on its batch shell (`scancel --signal=USR1 --batch`, as Slurm's --signal does
  before the time limit) once a trial is in the study. The script passes it to mpirun, the sweep
  checkpoints and exits 3, the script requeues the job, Slurm starts it again (Restarts=1), the
  second run resumes the study and completes it: run_cap trials, every trial finished before the
  signal kept as it was, no checkpoint left. The same for a command sweep (the user's program on
  every rank): the trial interrupted mid-way resumes from the program's own checkpoint and the
  study holds all its steps. And SIGTERM to the batch shell ("save and stop"):
  exit 3, checkpoints kept, no requeue.
* SrunLauncher: `hpo-srun.sbatch` (HPO_LAUNCHER=srun, `srun --mpi=pmix`) runs the small sweep;
  skipped when the script folder has no hpo-srun.sbatch.

--scripts DIR (the rendered slurm/ folder) must hold hpo-cpu.sbatch and hpo-preemptible.sbatch
(hpo-srun.sbatch is optional).

Resources and the log file are given on sbatch's command line (they beat the scripts' #SBATCH
lines): --ntasks=4 --cpus-per-task=1 --partition=debug --output=LOG.

Waits follow progress, not a wall-clock figure: a wait goes on while the job's state, its log, its
output folder or its study's trial count change, and fails when none of them has changed for
--stall seconds (240); --budget (720 s, leaving ctest's TIMEOUT of 900 room for the clean-up) is
the whole run's backstop. A failing wait prints what it saw: each change with its time, the job's
log, the study's trials, the output folder, scontrol/squeue and the daemons' logs. Every test
cancels the jobs it submitted and waits until they have left the queue, whether it passes or fails,
so one failure does not leave later jobs PENDING behind a still-running one; the cluster (daemons,
jobs' processes) is stopped at the end also on failure, Ctrl-C, SIGTERM, or a SIGKILL of the whole
test (see slurm_cluster.py).

Needs root and slurm-wlm + munge (slurmctld, slurmd, munged, sbatch, ...); without them it prints
why and exits 77 (skipped). Takes about a minute on a quiet 2-core machine, 2 to 5 minutes beside
a CPU-bound load (six busy loops, or a 2-rank sweep).
"""

import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "mpi"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import slurm_cluster  # noqa: E402
from hpo_test_support import published_rows, study_attributes  # noqa: E402

QUICK = os.path.join(HERE, "configs", "slurm_quick.yaml")
PREEMPT = os.path.join(HERE, "configs", "slurm_preempt.yaml")
PREEMPT_COMMAND = os.path.join(HERE, "configs", "slurm_preempt_command.yaml")
SCRIPTS = ("hpo-cpu.sbatch", "hpo-preemptible.sbatch")
PARAMS = ["lr", "batch_size", "optimizer", "width"]

# The environment of the jobs (sbatch exports it into them): Open MPI as root, oversubscribed,
# not bound to cores, shared memory without CMA (not allowed here), passive OpenMP waits.
# Unbound: the test node declares more CPUs than the machine has (4 on 2 cores), so a job's ranks
# share the cores with whatever else runs here. Open MPI binds the ranks of a 2-rank job to cores
# 0 and 1 by default, and so does every other 2-rank mpirun: beside a 2-rank sweep, a job's rank
# pinned to the sweep's busy core was measured getting 1% of it, its job making no progress for
# minutes. Unbound, the kernel moves it to whichever core has room.
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_hwloc_base_binding_policy": "none",
    "OMPI_MCA_btl": "self,vader,tcp",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMP_WAIT_POLICY": "passive",
}
RESOURCES = ["--ntasks=4", "--cpus-per-task=1", "--nodes=1", "--partition=debug"]

ARGS = None        # the command line
CLUSTER = None     # one cluster for the whole run (started in main)
SCRIPT_DIR = None  # the sbatch scripts under test
RUN_DIR = None     # the jobs' files (in the cluster's directory, removed with it)


def run_cap(config):
    with open(config) as f:
        return int(re.search(r"^\s*run_cap:\s*(\d+)", f.read(), re.M).group(1))


def h5py_file(path):
    import h5py  # imported late: the skip (exit 77) needs no h5py
    return h5py.File(path, "r")


def read_trials(study):
    """The study's trials as {trial_id: row} (an empty dict while there is no study yet)."""
    try:
        with h5py_file(study) as f:
            return {int(row["trial_id"]): row for row in published_rows(f, "trials")}
    except (OSError, KeyError):
        return {}


def count_trials(study):
    """How many trials the study holds; None when there is no study or it cannot be read now (a
    half-written file, a reader racing a publish: any error is "no news")."""
    if not os.path.exists(study):
        return None
    try:
        with h5py_file(study) as f:
            return len(published_rows(f, "trials"))
    except ImportError:
        raise
    except Exception:  # noqa: BLE001  (h5py raises OSError, KeyError, RuntimeError, ValueError)
        return None


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def folder_state(folder):
    """(files, bytes, the newest modification time) under `folder`: changes whenever a file is
    written."""
    files, size, newest = 0, 0, 0
    for parent, _, names in os.walk(folder):
        for name in names:
            try:
                status = os.stat(os.path.join(parent, name))
            except OSError:
                continue
            files, size, newest = files + 1, size + status.st_size, max(newest, status.st_mtime)
    return files, size, "%s.%03d" % (time.strftime("%H:%M:%S", time.localtime(newest)),
                                     int(newest * 1000) % 1000) if files else None


class JobWatch:
    """What shows that a job is getting on, for SlurmCluster.wait: its log's size, its output
    folder (checkpoints, the study) and the study's trial count; and, for a failed wait, what
    they hold."""

    def __init__(self, log, output=None):
        self.log, self.output = log, output
        self.trials = {}  # the last count read of each study (kept when a read fails)

    def study_files(self):
        if self.output is None:
            return []
        return sorted(glob.glob(os.path.join(self.output, "study.h5"))
                      + glob.glob(os.path.join(self.output, "task_*", "study.h5")))

    def __call__(self):
        seen = {"log bytes": file_size(self.log)}
        if self.output is not None:
            files, size, newest = folder_state(self.output)
            seen["output"] = "%d files, %d bytes" % (files, size)
            seen["output written"] = newest
            for study in self.study_files():
                count = count_trials(study)
                if count is not None:
                    self.trials[study] = count
                if study in self.trials:
                    seen["trials in " + os.path.relpath(study, self.output)] = self.trials[study]
        return seen

    def describe(self):
        """The output folder's files, then the job log's end (last: a report cut short keeps
        it)."""
        lines = []
        if self.output is not None:
            lines.append("---- output %s ----" % self.output)
            found = False
            for parent, _, names in os.walk(self.output):
                for name in sorted(names):
                    path = os.path.join(parent, name)
                    lines.append("  %s (%s bytes)" % (os.path.relpath(path, self.output),
                                                      file_size(path)))
                    found = True
            if not found:
                lines.append("  (nothing yet)")
            for study in self.study_files():
                lines.append("  %s: %s trial(s)" % (os.path.relpath(study, self.output),
                                                    count_trials(study)))
        lines += ["---- job log %s (last 40 lines) ----" % self.log,
                  "".join(read_log(self.log).splitlines(True)[-40:]).rstrip() or "(empty)"]
        return "\n".join(lines)


def progress(message):
    """A time-stamped line on stderr, so a slow or failing run shows where the time went."""
    print("[%s] %s" % (time.strftime("%H:%M:%S"), message), file=sys.stderr, flush=True)


def read_log(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class SlurmCase(unittest.TestCase):
    def setUp(self):
        # A job left by an earlier test (its clean-up failed) would hold the node: say so and
        # cancel it, so this test does not wait behind it.
        left = CLUSTER.queue()
        if left:
            progress("jobs left in the queue before %s: %s; cancelling them"
                     % (self._testMethodName, "; ".join(left)))
            CLUSTER.cancel_all()
        self.tmp = tempfile.mkdtemp(prefix=self._testMethodName[:40] + "-", dir=RUN_DIR)
        os.chmod(self.tmp, 0o755)
        if not ARGS.keep:
            self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        # Cleanups run last in, first out: the jobs are cancelled before their folder goes.
        self.jobs = []
        self.addCleanup(self.cancel_jobs)

    def cancel_jobs(self):
        """Cancels every job this test submitted and waits until they have left the queue,
        whether the test passed or failed (a finished job: nothing to do)."""
        if self.jobs:
            CLUSTER.cancel(self.jobs)

    def submit(self, script, args, options=(), env=None, log_name="%j"):
        """Submits SCRIPT ARGS from self.tmp; returns (job id, log path with %j replaced)."""
        log = os.path.join(self.tmp, "%s-%s.out" % (script.split(".")[0], log_name))
        job_env = dict(MPI_ENV, HPO_BIN=ARGS.hpo, **(env or {}))
        job = CLUSTER.sbatch(os.path.join(SCRIPT_DIR, script), args=args, env=job_env,
                             options=RESOURCES + ["--output=" + log] + list(options), cwd=self.tmp)
        self.jobs.append(job)
        progress("submitted %s as job %s" % (script, job))
        return job, log.replace("%j", job)

    def wait(self, job, log, states=(), output=None, until=None, what=None):
        """CLUSTER.wait for the job, watching its log and output folder (see JobWatch): returns
        once the job is in one of `states` (its job_info) or `until(job_info)` is true (that
        value); fails the test, saying what it saw, when the job ends otherwise or stalls."""
        watch = JobWatch(log, output)
        began = time.monotonic()
        try:
            result = CLUSTER.wait(job, states, until=until, watch=watch, describe=watch.describe,
                                  what=what, stall_s=ARGS.stall)
        except slurm_cluster.SlurmError as error:
            raise self.failureException(str(error)) from None  # its report, once
        progress("job %s: %s after %.0fs" % (job, what or "/".join(sorted(states)),
                                             time.monotonic() - began))
        return result

    def assert_study_complete(self, study, cap, log):
        trials = read_trials(study)
        self.assertEqual(sorted(trials), list(range(cap)), log)
        for trial_id, row in trials.items():
            self.assertEqual(row["status"], b"completed", (trial_id, log))
        output = os.path.dirname(study)
        self.assertEqual(glob.glob(os.path.join(output, "checkpoints", "*.pt")), [], log)
        return trials


class CpuScript(SlurmCase):
    def test_cpu_script_runs_the_sweep_to_completed(self):
        output = os.path.join(self.tmp, "quick")
        job, log = self.submit("hpo-cpu.sbatch", [QUICK, output])
        info = self.wait(job, log, {"COMPLETED"}, output=output)
        text = read_log(log)
        self.assertEqual(info["ExitCode"], "0:0", text)
        self.assertIn("hpo-sbatch: running: mpirun -np 4 ", text)
        self.assertIn("(new)", text)
        self.assertIn("4 ranks in 2 groups of 2", text)
        self.assertIn("sweep finished", text)
        self.assertIn("hpo-sbatch: the sweep is done", text)
        self.assert_study_complete(os.path.join(output, "study.h5"), run_cap(QUICK), text)

    def test_job_array_runs_one_study_per_task(self):
        # Two configs, two array tasks of 2 tasks each (one group): OUTPUT/task_0, OUTPUT/task_1.
        # --ntasks-per-node=2 (the script asks for 4): both tasks fit on the node at once.
        second = os.path.join(self.tmp, "second.yaml")
        with open(QUICK) as f:
            text = f.read()
        with open(second, "w") as f:
            f.write(text.replace("seed: 5", "seed: 6").replace("run_cap: 4", "run_cap: 2"))
        output = os.path.join(self.tmp, "array")
        job, log = self.submit("hpo-cpu.sbatch", [QUICK, second], log_name="%A_%a",
                               options=["--array=0-1", "--ntasks=2", "--ntasks-per-node=2"],
                               env={"HPO_OUTPUT": output})
        for task, config in enumerate([QUICK, second]):
            task_job = "%s_%d" % (job, task)
            task_log = log.replace("%A_%a", task_job)
            info = self.wait(task_job, task_log, {"COMPLETED"},
                             output=os.path.join(output, "task_%d" % task))
            text = read_log(task_log)
            self.assertEqual(info["ExitCode"], "0:0", text)
            self.assertIn("(array task %d)" % task, text)
            self.assertIn("config: " + config, text)
            self.assert_study_complete(os.path.join(output, "task_%d" % task, "study.h5"),
                                       run_cap(config), text)


class Preemption(SlurmCase):
    def test_usr1_checkpoints_requeues_and_the_next_run_completes_the_study(self):
        output = os.path.join(self.tmp, "preempt")
        study = os.path.join(output, "study.h5")
        cap = run_cap(PREEMPT)
        job, log = self.submit("hpo-preemptible.sbatch", [PREEMPT, output])

        # Once a trial is in the study (the other group is in the middle of its trial), send
        # SIGUSR1 to the batch shell, as Slurm's --signal=B:USR1@120 does before the time limit.
        before = self.wait(job, log, output=output, what="a finished trial in the study",
                           until=lambda info: info.get("JobState") == "RUNNING"
                           and read_trials(study))
        self.assertLess(len(before), cap, "the sweep ended before the signal")
        CLUSTER.signal(job, "USR1", batch=True)
        progress("%d trial(s) in the study: sent SIGUSR1 to the batch shell" % len(before))

        # The script requeues the job; Slurm starts it again by itself once its BeginTime
        # (cred_expire + 1 s after the requeue) has passed.
        info = self.wait(job, log, output=output, what="the requeue (Restarts >= 1)",
                         until=lambda info: int(info.get("Restarts", "0")) >= 1 and info)
        progress("job requeued: %s" % info.get("Reason"))
        info = self.wait(job, log, {"COMPLETED"}, output=output)
        text = read_log(log)
        self.assertEqual(info["ExitCode"], "0:0", text)
        self.assertGreaterEqual(int(info["Restarts"]), 1, info)

        # One log across both runs (--open-mode=append): the interrupt, the requeue, the resume.
        first, _, second = text.partition("restarts: 1)")
        self.assertTrue(second, "no second run in the log:\n" + text)
        for expected in ["restarts: 0)", "(new)", "received SIGUSR1",
                         "mpirun: Forwarding signal 10 to job", "sweep interrupted",
                         "checkpoint saved", "interrupted and saved (exit 3)",
                         "requeueing job %s" % job]:
            self.assertIn(expected, first, "first run\n" + text)
        for expected in ["(exists: resuming it)", "resuming the study:", "sweep finished",
                         "the sweep is done"]:
            self.assertIn(expected, second, "second run\n" + text)
        self.assertNotIn("received SIG", second, text)

        after = self.assert_study_complete(study, cap, text)
        for trial_id, row in before.items():  # kept as they were
            for name in PARAMS + ["status", "epochs"]:
                self.assertEqual(row[name], after[trial_id][name], (trial_id, name))
            self.assertEqual(float(row["objective"]), float(after[trial_id]["objective"]))
            self.assertEqual(row.tobytes(), after[trial_id].tobytes(), trial_id)

    def test_usr1_requeue_resumes_a_command_trial_from_its_programs_checkpoint(self):
        # A command sweep (the user's own program on every rank): SIGUSR1 reaches the programs
        # as SIGTERM, the job is requeued, and the interrupted trial continues from the step its
        # program saved in HPO_CHECKPOINT_DIR.
        output = os.path.join(self.tmp, "command")
        study = os.path.join(output, "study.h5")
        cap = run_cap(PREEMPT_COMMAND)
        job, log = self.submit("hpo-preemptible.sbatch", [PREEMPT_COMMAND, output])

        def mid_trial(info):
            """{trial id: saved step} of trials at their second or third step of six (two
            seconds each: the signal reaches them long before they end) and not in the study,
            once a trial is in the study too (else None)."""
            done = read_trials(study)
            if info.get("JobState") != "RUNNING" or not done:
                return None
            saved = {}
            for state in glob.glob(os.path.join(output, "checkpoints", "trial_*",
                                                "state-rank-0.json")):
                trial_id = int(state.split("trial_")[-1].split(os.sep)[0])
                try:
                    with open(state) as f:
                        step = json.load(f)["step"]
                except (OSError, ValueError):
                    continue
                if trial_id not in done and 2 <= step <= 3:
                    saved[trial_id] = step
            return saved or None

        running = self.wait(job, log, output=output, until=mid_trial,
                            what="a trial in the study and another at step 2 or 3")
        before = read_trials(study)
        CLUSTER.signal(job, "USR1", batch=True)
        progress("trials %s at step 2 or 3: sent SIGUSR1 to the batch shell" % sorted(running))

        self.wait(job, log, output=output, what="the requeue (Restarts >= 1)",
                  until=lambda info: int(info.get("Restarts", "0")) >= 1 and info)
        info = self.wait(job, log, {"COMPLETED"}, output=output)
        text = read_log(log)
        self.assertEqual(info["ExitCode"], "0:0", text)
        first, _, second = text.partition("restarts: 1)")
        for expected in ["received SIGUSR1", "interrupted and saved (exit 3)",
                         "requeueing job %s" % job]:
            self.assertIn(expected, first, "first run\n" + text)
        for expected in ["resuming the study:", "sweep finished", "the sweep is done"]:
            self.assertIn(expected, second, "second run\n" + text)

        after = self.assert_study_complete(study, cap, text)
        for trial_id, row in before.items():  # kept as they were
            self.assertEqual(row.tobytes(), after[trial_id].tobytes(), trial_id)
        with h5py_file(study) as f:
            curves = published_rows(f, "curves")
        resumed = 0
        for trial_id in running:
            with open(os.path.join(output, "trials", str(trial_id), "rank-0.log")) as f:
                program_log = f.read()
            self.assertIn("resumed after step", program_log, trial_id)
            resumed += 1
            steps = [int(r["epoch"]) for r in curves if int(r["trial_id"]) == trial_id]
            self.assertEqual(steps, list(range(1, 7)), (trial_id, program_log))
            self.assertEqual(int(after[trial_id]["epochs"]), 6, trial_id)
        self.assertGreaterEqual(resumed, 1, "no trial resumed from its checkpoint:\n" + text)

    def test_term_to_the_batch_shell_saves_and_stops_without_requeue(self):
        # SIGTERM means "save and stop" (a cancel): the sweep checkpoints and exits 3, and the
        # job is not requeued. (A plain `scancel` sends SIGTERM to every process of the job,
        # mpirun included, which then kills the ranks: exit 1. `scancel --batch --signal=TERM`
        # signals only the batch shell, which passes SIGUSR1 on to mpirun.)
        output = os.path.join(self.tmp, "term")
        job, log = self.submit("hpo-preemptible.sbatch", [PREEMPT, output])
        checkpoints = os.path.join(output, "checkpoints", "*.pt")
        self.wait(job, log, output=output, what="a checkpoint",
                  until=lambda info: info.get("JobState") == "RUNNING" and glob.glob(checkpoints))
        CLUSTER.signal(job, "TERM", batch=True)
        progress("a checkpoint is written: sent SIGTERM to the batch shell")
        info = self.wait(job, log, {"FAILED"}, output=output)  # exit code 3 is a FAILED job
        text = read_log(log)
        self.assertEqual(info["ExitCode"], "3:0", text)
        self.assertEqual(info["Restarts"], "0", text)
        for expected in ["received SIGTERM", "mpirun: Forwarding signal 10 to job",
                         "interrupted and saved (exit 3)", "resume it by submitting the same job"]:
            self.assertIn(expected, text)
        self.assertNotIn("requeueing", text)
        self.assertTrue(glob.glob(checkpoints), text)
        with h5py_file(os.path.join(output, "study.h5")) as f:
            self.assertIn("running_trials", study_attributes(f))


class SrunLauncher(SlurmCase):
    def test_srun_script_runs_the_sweep_to_completed(self):
        # hpo-srun.sbatch (HPO_LAUNCHER=srun: srun --mpi=pmix) where the script folder has one.
        if not os.path.isfile(os.path.join(SCRIPT_DIR, "hpo-srun.sbatch")):
            self.skipTest("no hpo-srun.sbatch in " + SCRIPT_DIR)
        output = os.path.join(self.tmp, "srun")
        job, log = self.submit("hpo-srun.sbatch", [QUICK, output])
        info = self.wait(job, log, {"COMPLETED"}, output=output)
        text = read_log(log)
        self.assertEqual(info["ExitCode"], "0:0", text)
        self.assertIn("hpo-sbatch: running: srun --mpi=pmix ", text)
        self.assertIn("4 ranks in 2 groups of 2", text)
        self.assert_study_complete(os.path.join(output, "study.h5"), run_cap(QUICK), text)


def main():
    global ARGS, CLUSTER, SCRIPT_DIR, RUN_DIR
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hpo", required=True, help="the hpo binary")
    parser.add_argument("--scripts", required=True,
                        help="folder with hpo-cpu.sbatch and hpo-preemptible.sbatch (slurm/)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the cluster's directory and the jobs' files (for debugging)")
    parser.add_argument("--stall", type=float, default=slurm_cluster.STALL_S,
                        help="a wait fails when its job shows no progress for this many seconds "
                             "(default %(default)s)")
    parser.add_argument("--budget", type=float, default=720,
                        help="no wait goes on past this many seconds after the start, a backstop "
                             "that leaves ctest's TIMEOUT of 900 room for the clean-up "
                             "(default %(default)s)")
    ARGS, rest = parser.parse_known_args()
    ARGS.hpo = os.path.abspath(ARGS.hpo)

    missing = slurm_cluster.missing_requirements()
    if missing:
        print("SKIP: no Slurm test cluster here: " + "; ".join(missing))
        return 77
    if not os.access(ARGS.hpo, os.X_OK):
        print("error: --hpo %s is not an executable" % ARGS.hpo, file=sys.stderr)
        return 2

    SCRIPT_DIR = os.path.abspath(ARGS.scripts)
    absent = [name for name in SCRIPTS if not os.path.isfile(os.path.join(SCRIPT_DIR, name))]
    if absent:
        print("error: %s lacks %s" % (SCRIPT_DIR, ", ".join(absent)), file=sys.stderr)
        return 2

    # The cluster stops (jobs cancelled, daemons and the jobs' processes ended) however this
    # ends: pass, fail, Ctrl-C, SIGTERM (SlurmCluster turns it into KeyboardInterrupt), or a
    # SIGKILL of the whole process tree (its watchdog).
    started = time.monotonic()
    try:
        with slurm_cluster.SlurmCluster(cpus=4, keep=ARGS.keep,
                                        deadline=started + ARGS.budget) as cluster:
            CLUSTER = cluster
            # Every file of the run lives in the cluster's directory, removed with it.
            RUN_DIR = cluster.path("jobs")
            print("Slurm test cluster in %s (node %s); scripts from %s"
                  % (cluster.root, cluster.node, SCRIPT_DIR), flush=True)
            program = unittest.main(argv=[sys.argv[0]] + rest, verbosity=2, exit=False)
    except slurm_cluster.SlurmError as error:
        print("error: %s" % error, file=sys.stderr)
        return 1
    except KeyboardInterrupt as interrupt:
        print("interrupted (%s) after %.0fs: the cluster is stopped"
              % (str(interrupt) or "SIGINT", time.monotonic() - started), file=sys.stderr)
        return 1
    print("took %.0fs" % (time.monotonic() - started))
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

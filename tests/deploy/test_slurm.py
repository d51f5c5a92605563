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
  signal kept as it was, no checkpoint left. And SIGTERM to the batch shell ("save and stop"):
  exit 3, checkpoints kept, no requeue.
* SrunLauncher: `hpo-srun.sbatch` (HPO_LAUNCHER=srun, `srun --mpi=pmix`) runs the small sweep;
  skipped when the script folder has no hpo-srun.sbatch.

--scripts DIR (the rendered slurm/ folder) must hold hpo-cpu.sbatch and hpo-preemptible.sbatch
(hpo-srun.sbatch is optional).

Resources and the log file are given on sbatch's command line (they beat the scripts' #SBATCH
lines): --ntasks=4 --cpus-per-task=1 --partition=debug --output=LOG.

Needs root and slurm-wlm + munge (slurmctld, slurmd, munged, sbatch, ...); without them it prints
why and exits 77 (skipped). Takes about 1.5 minutes on 2 cores.
"""

import argparse
import glob
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import slurm_cluster  # noqa: E402

QUICK = os.path.join(HERE, "configs", "slurm_quick.yaml")
PREEMPT = os.path.join(HERE, "configs", "slurm_preempt.yaml")
SCRIPTS = ("hpo-cpu.sbatch", "hpo-preemptible.sbatch")
PARAMS = ["lr", "batch_size", "optimizer", "width"]

# The environment of the jobs (sbatch exports it into them): Open MPI as root, oversubscribed,
# shared memory without CMA (not allowed here), passive OpenMP waits.
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
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
            return {int(row["trial_id"]): row for row in f["trials"][:]}
    except (OSError, KeyError):
        return {}


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
        self.tmp = tempfile.mkdtemp(prefix=self._testMethodName[:40] + "-", dir=RUN_DIR)
        os.chmod(self.tmp, 0o755)

    def tearDown(self):
        if not ARGS.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def submit(self, script, args, options=(), env=None, log_name="%j"):
        """Submits SCRIPT ARGS from self.tmp; returns (job id, log path with %j replaced)."""
        log = os.path.join(self.tmp, "%s-%s.out" % (script.split(".")[0], log_name))
        job_env = dict(MPI_ENV, HPO_BIN=ARGS.hpo, **(env or {}))
        job = CLUSTER.sbatch(os.path.join(SCRIPT_DIR, script), args=args, env=job_env,
                             options=RESOURCES + ["--output=" + log] + list(options), cwd=self.tmp)
        progress("submitted %s as job %s" % (script, job))
        return job, log.replace("%j", job)

    def wait(self, job, log, states, timeout):
        try:
            return CLUSTER.wait(job, states, timeout=timeout)
        except slurm_cluster.SlurmError as error:
            self.fail("%s\n---- job log %s ----\n%s" % (error, log, read_log(log)))

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
        info = self.wait(job, log, {"COMPLETED"}, timeout=150)
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
        second = os.path.join(self.tmp, "second.yaml")
        with open(QUICK) as f:
            text = f.read()
        with open(second, "w") as f:
            f.write(text.replace("seed: 5", "seed: 6").replace("run_cap: 4", "run_cap: 2"))
        output = os.path.join(self.tmp, "array")
        job, log = self.submit("hpo-cpu.sbatch", [QUICK, second], log_name="%A_%a",
                               options=["--array=0-1", "--ntasks=2"], env={"HPO_OUTPUT": output})
        for task, config in enumerate([QUICK, second]):
            task_job = "%s_%d" % (job, task)
            task_log = log.replace("%A_%a", task_job)
            info = self.wait(task_job, task_log, {"COMPLETED"}, timeout=150)
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
        self.wait(job, log, {"RUNNING"}, timeout=60)

        # Once a trial is in the study (the other group is in the middle of its trial), send
        # SIGUSR1 to the batch shell, as Slurm's --signal=B:USR1@120 does before the time limit.
        deadline = time.monotonic() + 150
        before = {}
        while not before:
            if time.monotonic() > deadline:
                self.fail("no trial finished in time:\n" + read_log(log))
            self.assertEqual(CLUSTER.state(job), "RUNNING", read_log(log))
            before = read_trials(study)
            time.sleep(0.2)
        self.assertLess(len(before), cap, "the sweep ended before the signal")
        CLUSTER.signal(job, "USR1", batch=True)
        progress("%d trial(s) in the study: sent SIGUSR1 to the batch shell" % len(before))

        # The script requeues the job; Slurm starts it again by itself once its BeginTime
        # (cred_expire + 1 s after the requeue) has passed.
        deadline = time.monotonic() + 90
        while int(CLUSTER.job_info(job).get("Restarts", "0")) < 1:
            if time.monotonic() > deadline:
                self.fail("the job was not requeued:\n%s\n%s" % (CLUSTER.job_info(job),
                                                                 read_log(log)))
            time.sleep(0.2)
        progress("job requeued: %s" % CLUSTER.job_info(job).get("Reason"))
        info = self.wait(job, log, {"COMPLETED"}, timeout=180)
        progress("job completed")
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

    def test_term_to_the_batch_shell_saves_and_stops_without_requeue(self):
        # SIGTERM means "save and stop" (a cancel): the sweep checkpoints and exits 3, and the
        # job is not requeued. (A plain `scancel` sends SIGTERM to every process of the job,
        # mpirun included, which then kills the ranks: exit 1. `scancel --batch --signal=TERM`
        # signals only the batch shell, which passes SIGUSR1 on to mpirun.)
        output = os.path.join(self.tmp, "term")
        job, log = self.submit("hpo-preemptible.sbatch", [PREEMPT, output])
        self.wait(job, log, {"RUNNING"}, timeout=60)
        checkpoints = os.path.join(output, "checkpoints", "*.pt")
        deadline = time.monotonic() + 150
        while not glob.glob(checkpoints):
            if time.monotonic() > deadline:
                self.fail("no checkpoint in time:\n" + read_log(log))
            self.assertEqual(CLUSTER.state(job), "RUNNING", read_log(log))
            time.sleep(0.2)
        CLUSTER.signal(job, "TERM", batch=True)
        progress("a checkpoint is written: sent SIGTERM to the batch shell")
        info = self.wait(job, log, {"FAILED"}, timeout=120)  # exit code 3 is a FAILED job
        text = read_log(log)
        self.assertEqual(info["ExitCode"], "3:0", text)
        self.assertEqual(info["Restarts"], "0", text)
        for expected in ["received SIGTERM", "mpirun: Forwarding signal 10 to job",
                         "interrupted and saved (exit 3)", "resume it by submitting the same job"]:
            self.assertIn(expected, text)
        self.assertNotIn("requeueing", text)
        self.assertTrue(glob.glob(checkpoints), text)
        with h5py_file(os.path.join(output, "study.h5")) as f:
            self.assertIn("running_trials", f.attrs)


class SrunLauncher(SlurmCase):
    def test_srun_script_runs_the_sweep_to_completed(self):
        # hpo-srun.sbatch (HPO_LAUNCHER=srun: srun --mpi=pmix) where the script folder has one.
        if not os.path.isfile(os.path.join(SCRIPT_DIR, "hpo-srun.sbatch")):
            self.skipTest("no hpo-srun.sbatch in " + SCRIPT_DIR)
        output = os.path.join(self.tmp, "srun")
        job, log = self.submit("hpo-srun.sbatch", [QUICK, output])
        info = self.wait(job, log, {"COMPLETED"}, timeout=150)
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

    # A test runner may end the test with SIGTERM: stop the cluster on the way out (once).
    def interrupted(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, interrupted)

    started = time.monotonic()
    try:
        with slurm_cluster.SlurmCluster(cpus=4, keep=ARGS.keep) as cluster:
            CLUSTER = cluster
            # Every file of the run lives in the cluster's directory, removed with it.
            RUN_DIR = cluster.path("jobs")
            print("Slurm test cluster in %s (node %s); scripts from %s"
                  % (cluster.root, cluster.node, SCRIPT_DIR), flush=True)
            program = unittest.main(argv=[sys.argv[0]] + rest, verbosity=2, exit=False)
    except slurm_cluster.SlurmError as error:
        print("error: %s" % error, file=sys.stderr)
        return 1
    print("took %.0fs" % (time.monotonic() - started))
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

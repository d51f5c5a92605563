"""A two-node Slurm cluster on the network-namespace test bed: hpo's sbatch script across both
nodes, and a node lost in the middle of a sweep. Run by ctest as:
python3 test_slurm_two_nodes.py --hpo PATH --scripts SLURM_DIR [-k SUITE]; exits 77 (skip) where
network namespaces cannot be made or Slurm is not installed.

The cluster (tests/deploy/slurm_cluster.py with a TestBed): one slurmd per host namespace
(`slurmd -N HOST`, NodeName=HOST NodeAddr=its subnet address), slurmctld on the bed's switch (an
address of its own on the bridge, so losing a host does not take the controller away), munged in
the machine's namespace (its socket is a file, which every namespace sees), the client commands
run in the switch's namespace. Inside a job, Open MPI's mpirun reads the two nodes from Slurm and
starts its daemon on the second one with srun; hosts tell themselves apart by their UTS host names.

* TwoNodes: slurm/hpo-cpu.sbatch with --nodes=2 --ntasks-per-node=2 (4 ranks, a group of 2 on
  each node) runs a small sweep to COMPLETED; mpirun's map puts ranks 2 and 3 on the second node,
  hpo ranks are seen running in that node's namespace, both groups finish trials.
* NodeCutOff, NodeKilled: the same script with --nodes=2 on a partition of three nodes and a slower sweep;
  once a trial is in the study, the second node is lost: its link cut (rank 0 ends the job with
  exit 4 after peer_timeout_s, naming the lost host; hpo-mpirun then ends mpirun, left waiting on
  the lost node's daemon), or every process on it killed, slurmd included (mpirun sees its daemon
  go and ends the job, which hpo-mpirun reports as exit 4). The script requeues the job, Slurm
  marks the node DOWN (SlurmdTimeout) and starts the job again on the first and third nodes: it
  resumes the study and completes it with run_cap trials, no id twice, every trial finished
  before the loss kept as it was.
"""

import argparse
import glob
import os
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DEPLOY = os.path.join(HERE, "..", "deploy")
sys.path.insert(0, os.path.join(HERE, "..", "mpi"))
sys.path.insert(0, DEPLOY)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import netns_testbed  # noqa: E402
import slurm_cluster  # noqa: E402
from hpo_test_support import published_rows  # noqa: E402
from netns_testbed import TestBed  # noqa: E402

ARGS = None
QUICK = os.path.join(DEPLOY, "configs", "slurm_quick.yaml")
WRAPPER = os.path.abspath(os.path.join(HERE, "..", "..", "scripts", "hpo-mpirun"))
PEER_TIMEOUT_S = 6
# HPO_MPIRUN_ABORT_GRACE_S: mpirun is killed this long after hpo ends the job. With a node cut
# off, mpirun waits on its daemon there and the grace runs out every time, so it is kept short.
ABORT_GRACE_S = 3
# The jobs' environment (sbatch exports it into them): Open MPI as root, oversubscribed, unbound
# (the nodes share the machine's cores), TCP between the nodes.
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


def lost_node_config(run_cap):
    """Trials of about a second an epoch on 2 quiet cores (a few on busy ones), checkpointing every
    epoch, 2 ranks each; a short peer timeout."""
    return ("sweep:\n"
            "  method: random\n"
            "  metric: {name: val_accuracy, goal: maximize}\n"
            "  run_cap: %d\n"
            "  parameters:\n"
            "    lr: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
            "    batch_size: {values: [32, 64]}\n"
            "    optimizer: {values: [sgd, adam]}\n"
            "    width: {values: [192, 256]}\n"
            "task: synthetic\n"
            "synthetic: {train_samples: 4096, val_samples: 512, test_samples: 512,"
            " features: 64, classes: 4}\n"
            "epochs: 6\n"
            "checkpoint: {interval: 1}\n"
            "ranks_per_trial: 2\n"
            "peer_timeout_s: %d\n"
            "seed: 17\n") % (run_cap, PEER_TIMEOUT_S)


def progress(message):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), message), file=sys.stderr, flush=True)


def read_log(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def read_trials(study):
    """The study's /trials rows as a list (an empty one while there is no readable study)."""
    import h5py  # late: the skip (exit 77) needs no h5py
    try:
        with h5py.File(study, "r") as f:
            return list(published_rows(f, "trials"))
    except (OSError, KeyError):
        return []


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return None


class TwoNodeCase(unittest.TestCase):
    """Each test gets a bed of HOSTS hosts and a cluster of one node per host; both go at the end,
    passed or failed (processes, namespaces, files)."""
    HOSTS = 2
    # SlurmdTimeout: how soon slurmctld takes a silent slurmd's node for DOWN. slurmctld pings a
    # node that has not answered for a third of it, in passes a third of it apart (12 s apart
    # while the ping of a silent node waits out MessageTimeout, 10 s), and sets a node DOWN whose
    # last answer was older than SlurmdTimeout at the pass before: 2/3 of it after the node went
    # silent at the earliest, up to SlurmdTimeout and two passes (measured: 27 s after a cut with
    # 36 s, 41 s with 30 s, 27 and 29 s after a kill with 18 s). A lost node's suite sets it so
    # that the earliest DOWN comes well after the job has ended by itself (exit 4) and the
    # script has requeued it; a node DOWN first would have Slurm requeue the job itself, killing
    # the script. It is most of each lost node's wait.
    SLURMD_TIMEOUT_S = 30

    def setUp(self):
        self.bed = TestBed(hosts=self.HOSTS, slots=2)
        self.bed.__enter__()
        self.addCleanup(self.bed.close)
        started = time.monotonic()
        self.cluster = slurm_cluster.SlurmCluster(
            cpus=4, bed=self.bed, slurmd_timeout_s=self.SLURMD_TIMEOUT_S,
            deadline=time.monotonic() + ARGS.budget)
        self.cluster.start()
        self.addCleanup(self.cluster.stop)  # runs before the bed's close (last in, first out)
        # The jobs' files live in the cluster's folder: removed with it, also by its watchdog
        # when this process is killed.
        self.tmp = tempfile.mkdtemp(prefix=self._testMethodName[:30] + "-",
                                    dir=self.cluster.path("jobs"))
        os.chmod(self.tmp, 0o755)
        progress("cluster up in %.0fs: nodes %s, controller %s"
                 % (time.monotonic() - started, self.cluster.nodes, self.cluster.controller))

    def submit(self, config, output, options):
        log = os.path.join(self.tmp, "job-%j.out")
        job = self.cluster.sbatch(
            os.path.join(ARGS.scripts, "hpo-cpu.sbatch"), args=[config, output],
            env=dict(MPI_ENV, HPO_BIN=ARGS.hpo, HPO_MPIRUN_ARGS="--display-map",
                     HPO_MPIRUN_WRAPPER=WRAPPER,
                     HPO_MPIRUN_ABORT_GRACE_S=str(ABORT_GRACE_S)),
            options=["--partition=debug", "--cpus-per-task=1", "--open-mode=append",
                     "--output=" + log] + list(options), cwd=self.tmp)
        self.addCleanup(self.cluster.cancel, [job])
        progress("submitted hpo-cpu.sbatch %s as job %s" % (" ".join(options), job))
        return job, log.replace("%j", job)

    def wait(self, job, log, study, states=(), until=None, what=None):
        def watch():
            return {"log bytes": file_size(log), "trials": len(read_trials(study))}

        def describe():
            return "---- job log %s ----\n%s\n---- study: %d trial(s)" % (
                log, read_log(log)[-6000:], len(read_trials(study)))

        began = time.monotonic()
        try:
            result = self.cluster.wait(job, states, until=until, watch=watch, describe=describe,
                                       what=what, stall_s=ARGS.stall)
        except slurm_cluster.SlurmError as error:
            raise self.failureException(str(error)) from None
        progress("job %s: %s after %.0fs" % (job, what or "/".join(sorted(states)),
                                             time.monotonic() - began))
        return result

    def running_on(self, host):
        """The hpo ranks running in host index `host`'s namespace."""
        return [line for line in self.bed.processes(host) if " sweep --config " in line
                and "mpirun" not in line and "orted" not in line]

    def assert_study_complete(self, study, cap, log):
        trials = read_trials(study)
        ids = [int(row["trial_id"]) for row in trials]
        self.assertEqual(len(ids), len(set(ids)), "a trial id twice: %s\n%s" % (ids, log))
        self.assertEqual(sorted(ids), list(range(cap)), log)
        for row in trials:
            self.assertEqual(row["status"], b"completed", (int(row["trial_id"]), log))
        self.assertEqual(glob.glob(os.path.join(os.path.dirname(study), "checkpoints", "*.pt")),
                         [], log)
        return {int(row["trial_id"]): row for row in trials}


class TwoNodes(TwoNodeCase):
    def test_cpu_script_on_two_nodes_runs_the_sweep_across_both(self):
        output = os.path.join(self.tmp, "quick")
        study = os.path.join(output, "study.h5")
        job, log = self.submit(QUICK, output, ["--nodes=2", "--ntasks-per-node=2"])
        names = self.bed.names
        seen = {}

        def ranks_on_both(info):
            for host in (0, 1):
                if self.running_on(host):
                    seen[host] = True
            return info if info.get("JobState") == "COMPLETED" else None

        info = self.wait(job, log, study, until=ranks_on_both, what="COMPLETED")
        text = read_log(log)
        self.assertEqual(info["ExitCode"], "0:0", text)
        self.assertEqual(info["NodeList"], "%s[0-1]" % names[0][:-1], text)
        self.assertIn("4 tasks on %s[0-1]" % names[0][:-1], text)
        self.assertIn("hpo-sbatch: running: %s -np 4 " % WRAPPER, text)
        # mpirun's map: two ranks on each node.
        for host in (0, 1):
            self.assertRegex(text, r"Data for node: %s\s+Num slots: 2\s.*Num procs: 2"
                             % names[host], text)
        self.assertIn("4 ranks in 2 groups of 2", text)
        self.assertIn("sweep finished", text)
        self.assertTrue(seen.get(1), "no hpo rank seen running on %s:\n%s" % (names[1], text))
        trials = self.assert_study_complete(study, 4, text)
        # One group per node: group 1 is ranks 2 and 3, on the second node.
        groups = sorted({int(row["group"]) for row in trials.values()})
        self.assertEqual(groups, [0, 1], text)


class LostNodeCase(TwoNodeCase):
    HOSTS = 3  # a partition of three nodes: the job's two, and one to replace a lost one

    def lose_node_and_finish(self, lose, expected_first):
        """Runs the sweep on nodes 0 and 1, calls lose() once a trial is in the study, and checks
        that the job requeues itself, runs again on nodes 0 and 2, and completes the study with
        every earlier trial kept. `expected_first`: what the first run's log must also hold."""
        cap = 5  # the second run trains what is left of it, most of the test's time after the wait
        config = os.path.join(self.tmp, "sweep.yaml")
        with open(config, "w") as f:
            f.write(lost_node_config(cap))
        output = os.path.join(self.tmp, "lost")
        study = os.path.join(output, "study.h5")
        names = self.bed.names
        prefix = names[0][:-1]
        job, log = self.submit(config, output, ["--nodes=2", "--ntasks-per-node=2"])

        def trial_done_and_both_busy(info):
            if (info.get("JobState") == "RUNNING" and read_trials(study)
                    and self.running_on(0) and self.running_on(1)):
                return info
            return None

        info = self.wait(job, log, study, until=trial_done_and_both_busy,
                         what="a trial in the study, ranks running on both nodes")
        self.assertEqual(info["NodeList"], "%s[0-1]" % prefix, info)
        before = {int(row["trial_id"]): row for row in read_trials(study)}
        self.assertLess(len(before), cap, "the sweep ended before the node was lost")
        lose()
        lost_at = time.monotonic()
        progress("%d trial(s) in the study: lost %s" % (len(before), names[1]))

        info = self.wait(job, log, study, what="the requeue (Restarts >= 1)",
                         until=lambda info: int(info.get("Restarts", "0")) >= 1 and info)
        progress("requeued %.0fs after the loss: %s %s" % (time.monotonic() - lost_at,
                                                         info.get("JobState"), info.get("Reason")))
        # Slurm completes the requeue once the lost node is marked DOWN (SlurmdTimeout), holds
        # the job back for cred_expire, then starts it on two nodes it has.
        info = self.wait(job, log, study, what="the second run",
                         until=lambda info: info.get("JobState") in ("RUNNING", "COMPLETED")
                         and int(info.get("Restarts", "0")) >= 1 and info)
        progress("second run started %.0fs after the loss on %s" % (time.monotonic() - lost_at,
                                                                   info.get("NodeList")))
        info = self.wait(job, log, study, {"COMPLETED"})
        progress("completed %.0fs after the loss" % (time.monotonic() - lost_at))
        text = read_log(log)
        self.assertEqual(info["ExitCode"], "0:0", text)
        self.assertEqual(int(info["Restarts"]), 1, info)
        self.assertEqual(info["NodeList"], "%s[0,2]" % prefix, text)  # the lost node replaced
        node = self.cluster.run(["scontrol", "show", "node", "-o", names[1]])
        self.assertIn("State=DOWN", node)

        first, _, second = text.partition("restarts: 1)")
        self.assertTrue(second, "no second run in the log:\n" + text)
        for expected in ["4 tasks on %s[0-1]" % prefix, "(new)", "the sweep lost a host (exit 4)",
                         "requeueing job %s" % job] + expected_first:
            self.assertIn(expected, first, "first run\n" + text)
        for expected in ["4 tasks on %s[0,2]" % prefix, "(exists: resuming it)",
                         "Data for node: %s\t" % names[2], "4 ranks in 2 groups of 2",
                         "resuming the study:", "sweep finished", "the sweep is done"]:
            self.assertIn(expected, second, "second run\n" + text)

        after = self.assert_study_complete(study, cap, text)
        for trial_id, row in before.items():  # kept as they were
            self.assertEqual(row.tobytes(), after[trial_id].tobytes(), trial_id)
        return text


class NodeCutOff(LostNodeCase):
    # The job ends the peer timeout plus the grace after the cut (requeued 9 s after it; 16 s
    # with a grace of 10 s), the node goes DOWN 18 s after it at the earliest.
    SLURMD_TIMEOUT_S = 27

    def test_a_node_cut_off_mid_sweep_requeues_the_job_which_finishes_on_another_node(self):
        names = self.bed.names
        text = self.lose_node_and_finish(lambda: self.bed.cut(1), [
            "hpo: ending the job with exit code 4",
            "hpo-mpirun: mpirun has not ended %d s after hpo ended the job" % ABORT_GRACE_S])
        self.assertRegex(text, r"lost contact with ranks? [0-9, ]+ on %s " % names[1])


class NodeKilled(LostNodeCase):
    # mpirun ends the job about 2 s after the kill (requeued 2 to 4 s after it); the node goes
    # DOWN 16 s after it at the earliest, room for a busy machine's slower requeue.
    SLURMD_TIMEOUT_S = 24

    def test_a_node_whose_processes_die_mid_sweep_requeues_the_job_likewise(self):
        # kill -9 of everything on the node, its slurmd included: mpirun sees its daemon there
        # go first (exit 205), which hpo-mpirun reports as a lost host (4).
        self.lose_node_and_finish(lambda: self.bed.kill_all(1), [
            "ORTE has lost communication with a remote daemon",
            "hpo-mpirun: mpirun lost a host's daemon and ended the job (exit 205)"])


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hpo", required=True, help="the hpo binary")
    parser.add_argument("--scripts", required=True, help="the folder of hpo-cpu.sbatch (slurm/)")
    parser.add_argument("--stall", type=float, default=slurm_cluster.STALL_S,
                        help="a wait fails when its job shows no progress for this many seconds")
    parser.add_argument("--budget", type=float, default=480,
                        help="no wait of a test goes on past this many seconds after its start")
    ARGS, rest = parser.parse_known_args()
    ARGS.hpo = os.path.abspath(ARGS.hpo)
    ARGS.scripts = os.path.abspath(ARGS.scripts)
    reasons = slurm_cluster.missing_requirements()
    if shutil.which("nsenter") is None:
        reasons.append("nsenter (util-linux) not found")
    reason = netns_testbed.unavailable()
    if reason:
        reasons.append("network namespaces: " + reason)
    if reasons:
        print("SKIP: a two-node Slurm cluster cannot run here: " + "; ".join(reasons))
        return netns_testbed.SKIP
    program = unittest.main(argv=[sys.argv[0]] + rest, verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

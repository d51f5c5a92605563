"""Sweeps across several "hosts": network namespaces on one machine (netns_testbed.py), each a node
to Open MPI, all sharing the file system. Run by ctest as:
python3 test_sweeps_across_hosts.py --hpo PATH [-k SUITE]; exits 77 (skip) where network namespaces
cannot be made (not root, no CAP_NET_ADMIN, no iproute2 or unshare).

Each test makes its own hosts, runs one mpirun per sweep in a session of its own (killed with all it
started after a generous time-out) and removes the hosts whether it passes or fails.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mpi"))
from hpo_test_support import parse_command_line  # noqa: E402
import netns_testbed  # noqa: E402
from netns_testbed import TestBed  # noqa: E402

HPO = None  # set from the command line
# Whether HPO is the CUDA build, which refuses cuda_visible_devices on hosts without a GPU.
CUDA_BUILD = False
PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch and h5py
PROGRAM = os.path.join(HERE, "programs", "host_report.py")
TIMEOUT = 240  # one sweep; each takes 1 to 5 s on an idle 2-core machine
# Rank 0's start-up warning for a job across hosts under plain mpirun (launch_warning.cpp).
PLAIN_MPIRUN_WARNING = "spans several hosts under plain mpirun"


def synthetic_config(ranks_per_trial, epochs=1, train_samples=512):
    """A tiny grid of 4 trials of the built-in synthetic task."""
    return ("sweep:\n"
            "  method: grid\n"
            "  metric: {name: val_loss, goal: minimize}\n"
            "  parameters:\n"
            "    optimizer: {values: [sgd, adam]}\n"
            "    lr: {values: [0.01, 0.03]}\n"
            "    width: {value: 16}\n"
            "task: synthetic\n"
            "synthetic: {train_samples: %d, val_samples: 128, test_samples: 128, features: 8,"
            " classes: 3, noise: 0.5}\n"
            "epochs: %d\n"
            "checkpoint: {interval: 1}\n"
            "ranks_per_trial: %d\n"
            "seed: 5\n") % (train_samples, epochs, ranks_per_trial)


def command_config(ranks_per_trial, trials=2, dist=True, extra=""):
    """A grid of `trials` command trials of programs/host_report.py."""
    return ("sweep:\n"
            "  program: %s\n"
            "  method: grid\n"
            "  metric: {name: total, goal: maximize}\n"
            "  parameters:\n"
            "    trial: {values: [%s]}\n"
            "    dist: {value: %s}\n"
            "ranks_per_trial: %d\n"
            "interpreter: %s\n"
            "terminate_grace_s: 5\n"
            "trial_timeout_s: 200\n"
            "seed: 1\n%s") % (PROGRAM, ", ".join(str(t) for t in range(trials)),
                              "true" if dist else "false", ranks_per_trial, PYTHON, extra)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def read_trials(study):
    import h5py
    with h5py.File(study, "r") as f:
        trials = {int(row["trial_id"]): row for row in f["trials"][:]}
        attrs = {k: f.attrs[k] for k in f.attrs}
    return trials, attrs


class AcrossHosts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hpo-multinode-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def sweep(self, bed, np, name, config, watch=None, returncode=0):
        """Runs `hpo sweep` across the bed's hosts, expecting `returncode`; returns the output
        folder. `watch(output)` is called every few milliseconds while the job runs (from a
        thread)."""
        path = os.path.join(self.tmp, name + ".yaml")
        with open(path, "w") as f:
            f.write(config)
        output = os.path.join(self.tmp, "out-" + name)
        stop = threading.Event()
        watcher = None
        if watch is not None:
            def loop():
                while not stop.is_set():
                    watch(output)
                    stop.wait(0.005)
            watcher = threading.Thread(target=loop, daemon=True)
            watcher.start()
        try:
            done = bed.mpirun([HPO, "sweep", "--config", path, "--output", output], np=np,
                              timeout=TIMEOUT, cwd=self.tmp)
        finally:
            stop.set()
            if watcher is not None:
                watcher.join()
        self.assertEqual(done.returncode, returncode, done.describe())
        self.log = done.output
        return output

    def assert_all_completed(self, output, count):
        trials, attrs = read_trials(os.path.join(output, "study.h5"))
        self.assertEqual(len(trials), count, self.log)
        for row in trials.values():
            self.assertEqual(text(row["status"]), "completed", (row, self.log))
        return trials, attrs

    def host_reports(self, output):
        """{trial_id: [report of rank 0, rank 1, ...]} from the programs' host-rank-R.json."""
        reports = {}
        for path in glob.glob(os.path.join(output, "trials", "*", "host-rank-*.json")):
            trial = int(os.path.basename(os.path.dirname(path)))
            with open(path) as f:
                report = json.load(f)
            reports.setdefault(trial, {})[int(report["env"]["RANK"])] = report
        return {t: [r[k] for k in sorted(r)] for t, r in reports.items()}


class GroupsInsideHosts(AcrossHosts):
    def test_two_rank_groups_on_two_hosts_write_the_study_checkpoints_and_best_model(self):
        """2 hosts x 2 ranks, groups of 2 (one per host): the sweep ends, every trial completed,
        both groups ran trials, and the study, the leaders' per-trial checkpoints (seen while the
        job runs: each is deleted once its trial's result is in the study) and the best model are
        in the output folder every host shares."""
        seen = set()

        def watch(output):
            for path in glob.glob(os.path.join(output, "checkpoints", "trial_*")):
                seen.add(os.path.basename(path))

        with TestBed(hosts=2, slots=2) as bed:
            output = self.sweep(bed, 4, "inside", synthetic_config(2, epochs=3, train_samples=4096),
                                watch)
        trials, attrs = self.assert_all_completed(output, 4)
        self.assertEqual(int(attrs["world_size"]), 4)
        # Plain mpirun across hosts: rank 0 advises scripts/hpo-mpirun, once.
        self.assertEqual(self.log.count(PLAIN_MPIRUN_WARNING), 1, self.log)
        groups = {int(row["group"]) for row in trials.values()}
        self.assertEqual(groups, {0, 1}, trials)
        checkpointed = {int(name.split("_")[1].split(".")[0]) for name in seen}
        self.assertEqual({int(trials[t]["group"]) for t in checkpointed}, {0, 1},
                         "checkpoints seen: %s" % sorted(seen))
        self.assertEqual(os.listdir(os.path.join(output, "checkpoints")), [])
        best = text(attrs["best_model"])
        self.assertEqual(best, os.path.join(output, "models",
                                            "trial_%d.pt" % int(attrs["best_trial_id"])))
        self.assertTrue(os.path.getsize(best) > 0)
        self.assertTrue(os.path.exists(os.path.join(output, "models", "best.yaml")))


class GroupsSpanningHosts(AcrossHosts):
    def single_host_objectives(self, np, ranks_per_trial):
        with TestBed(hosts=1, slots=np) as bed:
            output = self.sweep(bed, np, "one-host", synthetic_config(ranks_per_trial))
        trials, _ = self.assert_all_completed(output, 4)
        self.assertNotIn(PLAIN_MPIRUN_WARNING, self.log)  # one host: nothing to advise
        return {t: float(row["objective"]) for t, row in trials.items()}

    def assert_same_objectives(self, trials, reference):
        for trial_id, row in trials.items():
            self.assertAlmostEqual(float(row["objective"]), reference[trial_id], places=4,
                                   msg="trial %d: %s" % (trial_id, self.log))

    def test_a_four_rank_group_over_two_hosts_trains_as_on_one_host(self):
        """2 hosts x 2 ranks, groups of 4: every trial's DDP world spans both hosts (allreduce over
        TCP between namespaces); each trial completes with the objective it has when all four
        ranks share one host."""
        with TestBed(hosts=2, slots=2) as bed:
            output = self.sweep(bed, 4, "four", synthetic_config(4))
        trials, _ = self.assert_all_completed(output, 4)
        self.assertEqual({int(row["group"]) for row in trials.values()}, {0})
        self.assert_same_objectives(trials, self.single_host_objectives(4, 4))

    def test_packing_splits_groups_of_three_over_three_hosts(self):
        """3 hosts x 2 ranks, groups of 3: ranks are packed host by host (group_layout.cpp), so
        group 0 is host 0's two ranks and one of host 1's, group 1 the other of host 1's and host
        2's two. Both groups complete their trials with the objectives of a one-host run."""
        with TestBed(hosts=3, slots=2) as bed:
            output = self.sweep(bed, 6, "three", synthetic_config(3))
        trials, _ = self.assert_all_completed(output, 4)
        self.assertEqual({int(row["group"]) for row in trials.values()}, {0, 1})
        self.assert_same_objectives(trials, self.single_host_objectives(6, 3))


class CommandTrialsAcrossHosts(AcrossHosts):
    def test_a_gloo_group_over_two_hosts_meets_at_the_leaders_address(self):
        """2 hosts x 1 rank, a command trial group of 2 spanning them, host names resolvable on
        every host (as a cluster's DNS makes them): torch.distributed (gloo, env://) allreduces
        across the hosts (1 + 2 = 3); MASTER_ADDR resolves on both hosts to the leader's address
        on the test subnet, and LOCAL_RANK / LOCAL_WORLD_SIZE count per host (0 / 1 on each)."""
        with TestBed(hosts=2, slots=1, resolve_names=True) as bed:
            output = self.sweep(bed, 2, "gloo", command_config(2))
            leader_address = bed.addresses[0]
            names = bed.names
        trials, _ = self.assert_all_completed(output, 2)
        for row in trials.values():
            self.assertEqual(float(row["objective"]), 3.0, row)
        reports = self.host_reports(output)
        self.assertEqual(sorted(reports), sorted(trials))
        for ranks in reports.values():
            self.assertEqual([r["hostname"] for r in ranks], names)
            for r in ranks:
                env = r["env"]
                self.assertNotEqual(env["MASTER_ADDR"], "127.0.0.1", r)
                self.assertEqual(r["master_resolves_to"], leader_address, r)
                self.assertEqual((env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"]), ("0", "1"), r)
                self.assertEqual(env["GROUP_WORLD_SIZE"], "2", r)
            self.assertEqual([r["env"]["GROUP_RANK"] for r in ranks], ["0", "1"])


class MasterAddrWithoutNameService(AcrossHosts):
    """Hosts that know each other by address only."""

    def test_master_addr_is_the_leaders_address_where_names_do_not_resolve(self):
        """2 hosts x 1 rank, no name service for the hosts (as on clusters whose nodes know each
        other only by address, or where a node's own name maps to 127.0.1.1): MASTER_ADDR must be
        the leader's address on the network the group talks over, so gloo meets there."""
        with TestBed(hosts=2, slots=1) as bed:
            output = self.sweep(bed, 2, "noname", command_config(2, trials=1))
            leader_address = bed.addresses[0]
        reports = self.host_reports(output)
        for ranks in reports.values():
            for r in ranks:
                self.assertEqual(r["env"]["MASTER_ADDR"], leader_address, r)
        trials, _ = self.assert_all_completed(output, 1)
        self.assertEqual(float(trials[0]["objective"]), 3.0)


class HostsSharingAHostName(AcrossHosts):
    """Hosts that Open MPI runs as separate nodes but that share one host name."""

    def test_local_ranks_follow_mpis_nodes_not_host_names(self):
        """2 hosts x 1 rank that keep the machine's hostname (containers that keep their node's
        name): Open MPI still runs them as two nodes, so the trial group spans two hosts and its
        program must see LOCAL_RANK 0 / LOCAL_WORLD_SIZE 1 on each, GROUP_WORLD_SIZE 2 and a
        MASTER_ADDR other than 127.0.0.1, as CUDA_VISIBLE_DEVICES (from MPI's node split) does."""
        # The CUDA build refuses cuda_visible_devices without a GPU (NodeLocalRanks checks that).
        extra = "" if CUDA_BUILD else "cuda_visible_devices: true\n"
        with TestBed(hosts=2, slots=1, own_hostnames=False) as bed:
            output = self.sweep(bed, 2, "samename", command_config(
                2, trials=1, dist=False, extra=extra))
        self.assert_all_completed(output, 1)
        for ranks in self.host_reports(output).values():
            self.assertEqual(ranks[0]["hostname"], ranks[1]["hostname"])
            for r in ranks:
                if not CUDA_BUILD:
                    self.assertEqual(r["env"]["CUDA_VISIBLE_DEVICES"], "0", r)  # MPI: 2 nodes
                self.assertEqual((r["env"]["LOCAL_RANK"], r["env"]["LOCAL_WORLD_SIZE"],
                                  r["env"]["GROUP_WORLD_SIZE"]), ("0", "1", "2"), r)
                self.assertNotEqual(r["env"]["MASTER_ADDR"], "127.0.0.1", r)


class NodeLocalRanks(AcrossHosts):
    def test_groups_inside_hosts_number_their_ranks_per_host(self):
        """2 hosts x 2 ranks, groups of 2: each group is one host's two ranks, so its program sees
        LOCAL_RANK 0 and 1, LOCAL_WORLD_SIZE 2, one host (GROUP_WORLD_SIZE 1) and MASTER_ADDR
        127.0.0.1; gloo meets there; both hosts run trials."""
        with TestBed(hosts=2, slots=2) as bed:
            output = self.sweep(bed, 4, "local", command_config(2, trials=4))
            names = bed.names
        trials, _ = self.assert_all_completed(output, 4)
        for row in trials.values():
            self.assertEqual(float(row["objective"]), 3.0, row)
        hosts_used = set()
        for ranks in self.host_reports(output).values():
            self.assertEqual(ranks[0]["hostname"], ranks[1]["hostname"], ranks)
            hosts_used.add(ranks[0]["hostname"])
            self.assertEqual([(r["env"]["LOCAL_RANK"], r["env"]["LOCAL_WORLD_SIZE"],
                               r["env"]["GROUP_RANK"], r["env"]["GROUP_WORLD_SIZE"],
                               r["env"]["MASTER_ADDR"]) for r in ranks],
                             [("0", "2", "0", "1", "127.0.0.1"), ("1", "2", "0", "1", "127.0.0.1")])
        self.assertEqual(hosts_used, set(names))

    def test_a_split_group_counts_local_ranks_on_each_of_its_hosts(self):
        """3 hosts x 2 ranks, groups of 3 (the packing rule splits both): group 0 is ranks 0, 1 on
        host 0 (LOCAL_RANK 0, 1 of 2) and rank 2 on host 1 (0 of 1); group 1 is rank 0 on host 1
        (0 of 1) and ranks 1, 2 on host 2 (0, 1 of 2); GROUP_RANK numbers the hosts in order."""
        with TestBed(hosts=3, slots=2) as bed:
            output = self.sweep(bed, 6, "split", command_config(3, trials=4, dist=False))
            h = bed.names
        self.assert_all_completed(output, 4)
        expected = [
            [(h[0], "0", "2", "0", "2"), (h[0], "1", "2", "0", "2"), (h[1], "0", "1", "1", "2")],
            [(h[1], "0", "1", "0", "2"), (h[2], "0", "2", "1", "2"), (h[2], "1", "2", "1", "2")]]
        seen = set()
        for trial, ranks in self.host_reports(output).items():
            got = [(r["hostname"], r["env"]["LOCAL_RANK"], r["env"]["LOCAL_WORLD_SIZE"],
                    r["env"]["GROUP_RANK"], r["env"]["GROUP_WORLD_SIZE"]) for r in ranks]
            self.assertIn(got, expected, "trial %d" % trial)
            seen.add(expected.index(got))
        self.assertEqual(seen, {0, 1})

    def test_cuda_visible_devices_follows_the_node_local_rank_on_every_host(self):
        """No GPU here and no way to fake a GPU count, but `cuda_visible_devices: true` shows the
        GPU hpo picks per rank: node-local rank / trials_per_gpu, counted on each host on its own
        (the CPU build). The CUDA build refuses it instead, once, naming a host without a GPU.
        2 hosts x 2 one-rank groups: GPUs 0 and 1 on each host with trials_per_gpu 1, GPU 0 for
        both with trials_per_gpu 2. (Open MPI's node-local rank of the hpo rank that started the
        program is read from the program's parent.)"""
        if CUDA_BUILD:
            with TestBed(hosts=2, slots=2) as bed:
                self.sweep(bed, 4, "refused", command_config(
                    1, trials=8, dist=False, extra="cuda_visible_devices: true\n"), returncode=2)
                names = bed.names
            refusals = [line for line in self.log.splitlines() if "asks for GPUs" in line]
            self.assertEqual(len(refusals), 1, self.log)
            self.assertTrue(any(name + " has no GPU" in refusals[0] for name in names), self.log)
            return
        for per_gpu in (1, 2):
            with TestBed(hosts=2, slots=2) as bed:
                output = self.sweep(bed, 4, "gpu%d" % per_gpu, command_config(
                    1, trials=8, dist=False,
                    extra="cuda_visible_devices: true\ntrials_per_gpu: %d\n" % per_gpu))
                names = bed.names
            self.assert_all_completed(output, 8)
            ranks_seen = set()
            for ranks in self.host_reports(output).values():
                r = ranks[0]
                local = int(r["launcher"]["OMPI_COMM_WORLD_LOCAL_RANK"])
                self.assertEqual(r["env"]["CUDA_VISIBLE_DEVICES"], str(local // per_gpu), r)
                ranks_seen.add((r["hostname"], local))
            # Each one-rank group took at least one of the 8 trials.
            self.assertEqual(ranks_seen, {(n, l) for n in names for l in (0, 1)})


if __name__ == "__main__":
    HPO, argv = parse_command_line()
    CUDA_BUILD = "CUDA build" in subprocess.run([HPO, "--version"], capture_output=True,
                                                text=True).stdout
    sys.dont_write_bytecode = True
    reason = netns_testbed.unavailable()
    if reason:
        print("SKIP: multi-host tests need network namespaces: " + reason)
        sys.exit(netns_testbed.SKIP)
    unittest.main(argv=argv, verbosity=2)

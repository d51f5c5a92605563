#!/usr/bin/env python3
"""Deployment tests: the Kubernetes manifests of k8s-mpi/ and the ones `hpo render mpijob` prints.

Usage: test_manifests.py --crd CRD.yaml [--hpo PATH] [--manifests DIR] [unittest arguments, -k ...]

* ManifestsValidate: every YAML file under DIR (default: k8s-mpi/ of this checkout) passes
  mpijob_rules.py (the MPIJob CRD's schema, the MPI operator's rules, the core rules of ConfigMaps
  and claims), and every MPIJob there keeps the launcher contract (`check_mpijob_contract`).
* ValidatorRejects: mutations of a valid MPIJob, ConfigMap and claim, each rejected with the
  expected message at the expected JSON path (the validator can fail), through the module and
  through its command line.
* LauncherRunsLocally: the launcher command of DIR/mpijob-cpu.yaml, run on this machine through
  the repository's scripts/hpo-mpirun, with the pod's paths replaced by temporary ones, a hostfile
  of this host and the sweep shrunk to 2 short trials (`shrink_config`); it must exit 0 with those
  2 trials in the study, and exit 0 again when started a second time, as a restarted launcher is.
  Skipped while DIR has no mpijob-cpu.yaml.
* RenderRoundTrip: `hpo render mpijob` for the example configs, checked by `check_rendered`
  (skipped, with a note, while this hpo has no `render` command). That the checked-in examples are
  what `hpo render` prints today is check_rendered_files.py's job.

Exit status: unittest's (0 pass, 1 fail); 77, ctest's skip code, when CRD.yaml does not exist.
Cases that need --hpo are skipped without it.
"""

import argparse
import copy
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import h5py
import yaml

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import mpijob_rules  # noqa: E402  (beside this file)

SKIP = 77

# Set by main() from the command line.
VALIDATOR = None
HPO = None
MANIFESTS = REPO / "k8s-mpi"
ARGS = None

# The paths the launcher command uses inside the pod (the operator's hostfile, the ConfigMap's
# mount, the claim's mount) and the launcher's signal-forwarding wrapper.
POD_HOSTFILE = "/etc/mpi/hostfile"
POD_CONFIG_DIR = "/etc/hpo/"
POD_CONFIG = POD_CONFIG_DIR + "sweep.yaml"
POD_STUDY_DIR = "/study/"
WRAPPER = "hpo-mpirun"

# The environment of the local launcher run: root allowed, shared memory and TCP only, one
# passive OpenMP thread per rank (as the MPI tests run), and idle ranks that yield their core.
# Open MPI yields by itself only when it knows a host is oversubscribed; the hostfile here gives
# this host a slot per rank however few cores it has, so without it the ranks that wait (every
# one but rank 0 while it tests the best trial) would spin and take most of rank 0's CPU on 2
# cores (about twice the run's time and CPU, measured).
LOCAL_MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl": "self,vader,tcp",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    "OMP_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "passive",
}

# The sweep the local launcher run trains: the manifest's config with these budgets.
SHRUNK_RUN_CAP = 2
# The preemption runs' sweep: 4 trials (two rounds on the two groups) of 2 epochs, so that a
# trial signalled after its first epoch's checkpoint has an epoch left to resume.
PREEMPT_RUN_CAP, PREEMPT_EPOCHS = 4, 2

# `hpo render mpijob` invocations checked by RenderRoundTrip: (config, extra arguments).
ECR_IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hpo-mpi:cuda"
RENDER_CASES = [
    ("configs/quickstart.yaml", ["--workers", "2", "--image", "hpo-mpi:cpu",
                                 "--claim", "hpo-study"]),
    ("configs/fashion_mnist.yaml", ["--instance-type", "p4d.24xlarge", "--workers", "2",
                                    "--image", ECR_IMAGE, "--claim", "hpo-study"]),
    ("configs/fashion_mnist.yaml", ["--instance-type", "p5.48xlarge", "--workers", "2",
                                    "--image", ECR_IMAGE, "--claim", "hpo-study"]),
]


# --- Helpers shared by the cases ------------------------------------------------------------

def load_documents(text):
    return [document for document in yaml.safe_load_all(text) if document is not None]


def only(documents, kind):
    """The single document of `kind` in `documents`."""
    found = [document for document in documents if document.get("kind") == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def launcher_container(job):
    return job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]


def option_value(command, option):
    """The word after `option` in `command` (the first occurrence)."""
    assert option in command, f"{option} missing from the launcher command {command}"
    return command[command.index(option) + 1]


def check_mpijob_contract(documents):
    """Checks what the rest of the project relies on in an MPIJob and its ConfigMap; returns
    (job, config_map, ranks, ranks_per_trial). Raises AssertionError naming what is wrong.

    The launcher runs `hpo-mpirun --hostfile /etc/mpi/hostfile -np N ... hpo sweep --config
    /etc/hpo/sweep.yaml --output /study/NAME --resume` and restarts on failure (each start
    resumes); N = Worker replicas x slotsPerWorker (one rank per slot of the operator's hostfile),
    a multiple of the config's ranks_per_trial; the pods that run ranks (the workers) mount the
    ConfigMap at /etc/hpo and a claim at /study.
    """
    job = only(documents, "MPIJob")
    config_map = only(documents, "ConfigMap")
    name = job["metadata"]["name"]
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert launcher["restartPolicy"] == "OnFailure", "the launcher must restart on failure"

    command = launcher_container(job)["command"]
    assert command[0] == WRAPPER, f"the launcher command starts with {command[0]!r}, not {WRAPPER}"
    assert option_value(command, "--hostfile") == POD_HOSTFILE, "not the operator's hostfile"
    tail = ["hpo", "sweep", "--config", POD_CONFIG, "--output", POD_STUDY_DIR + name, "--resume"]
    assert command[-len(tail):] == tail, \
        f"the launcher command ends {command[-len(tail):]}, not {tail}"

    ranks = int(option_value(command, "-np"))
    workers, slots = worker["replicas"], job["spec"]["slotsPerWorker"]
    assert workers * slots == ranks, \
        f"{workers} workers x {slots} slotsPerWorker = {workers * slots} slots, but -np {ranks}"
    config = yaml.safe_load(config_map["data"]["sweep.yaml"])
    ranks_per_trial = config.get("ranks_per_trial", 1)
    assert ranks % ranks_per_trial == 0, \
        f"-np {ranks} is not a multiple of the config's ranks_per_trial {ranks_per_trial}"

    pod = worker["template"]["spec"]
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    mounts = {mount["mountPath"]: volumes.get(mount["name"], {})
              for container in pod["containers"] for mount in container.get("volumeMounts", [])}
    assert mounts.get(POD_CONFIG_DIR.rstrip("/"), {}).get("configMap", {}).get("name") == \
        config_map["metadata"]["name"], "the workers do not mount the ConfigMap at /etc/hpo"
    assert "persistentVolumeClaim" in mounts.get(POD_STUDY_DIR.rstrip("/"), {}), \
        "the workers do not mount a claim at /study"
    return job, config_map, ranks, ranks_per_trial


def render_mpijob(hpo, args, cwd=None):
    """The text `hpo render mpijob ARGS` prints. Raises unittest.SkipTest while `hpo` has no
    render command (exit 2, 'render' unknown), AssertionError when rendering fails."""
    done = subprocess.run([hpo, "render", "mpijob", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd)
    if done.returncode == 2 and "unknown command 'render'" in done.stderr:
        raise unittest.SkipTest(f"{hpo} has no `render` command yet")
    assert done.returncode == 0, f"hpo render exited {done.returncode}: {done.stderr}"
    return done.stdout


def check_rendered(hpo, config, args):
    """Renders `config` with `hpo render mpijob --config CONFIG ARGS`, validates the output with
    mpijob_rules and checks the launcher contract and the slot arithmetic. Returns the documents.

    Raises unittest.SkipTest while `hpo` has no render command (exit 2, 'render' unknown), and
    AssertionError for anything wrong with the output.
    """
    text = render_mpijob(hpo, ["--config", str(config), *args])
    problems = VALIDATOR.check_text(text, f"render of {config}")
    assert not problems, "\n".join(map(str, problems))

    documents = load_documents(text)
    job, config_map, ranks, ranks_per_trial = check_mpijob_contract(documents)
    assert config_map["data"]["sweep.yaml"] == pathlib.Path(config).read_text(), \
        "the ConfigMap's sweep.yaml is not the config file's text"
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    if "--workers" in args:
        assert worker["replicas"] == int(option_value(args, "--workers"))
    if "--claim" in args:
        claims = [volume["persistentVolumeClaim"]["claimName"]
                  for volume in worker["template"]["spec"]["volumes"]
                  if "persistentVolumeClaim" in volume]
        assert claims == [option_value(args, "--claim")], f"claims {claims}"
    print(f"  {config} {' '.join(args)}: {ranks} ranks, "
          f"{ranks // ranks_per_trial} groups of {ranks_per_trial}", file=sys.stderr)
    return documents


def manifest_files():
    return sorted(path for path in MANIFESTS.rglob("*") if path.suffix in (".yaml", ".yml"))


# --- (a) the manifests in the tree -----------------------------------------------------------

class ManifestsValidate(unittest.TestCase):
    def test_every_manifest_passes_the_rules(self):
        files = manifest_files()
        self.assertTrue(files, f"no *.yaml under {MANIFESTS}")
        for path in files:
            with self.subTest(file=str(path)):
                problems = VALIDATOR.check_file(path)
                self.assertEqual(problems, [], "\n".join(map(str, problems)))

    def test_every_mpijob_keeps_the_launcher_contract(self):
        for path in manifest_files():
            documents = load_documents(path.read_text())
            if any(document.get("kind") == "MPIJob" for document in documents):
                with self.subTest(file=str(path)):
                    check_mpijob_contract(documents)


# --- (b) the validator rejects what the cluster would ----------------------------------------

def sample_documents():
    """A valid ConfigMap + MPIJob pair in the shape `hpo render mpijob` prints for a GPU node."""
    name = "hpo-sweep"
    config_map = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"{name}-sweep", "labels": {"app": name}},
        "data": {"sweep.yaml": "sweep: {method: grid}\nranks_per_trial: 2\n"},
    }
    quantities = {"cpu": "90", "memory": "1000Gi", "nvidia.com/gpu": "8",
                  "vpc.amazonaws.com/efa": "4", "hugepages-2Mi": "5120Mi"}
    job = {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {
            "slotsPerWorker": 8,
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 6},
            "sshAuthMountPath": "/root/.ssh",
            "mpiImplementation": "OpenMPI",
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {
                    "containers": [{
                        "name": "launcher", "image": "hpo-mpi:cuda",
                        "command": [WRAPPER, "--hostfile", POD_HOSTFILE, "-np", "16",
                                    "hpo", "sweep", "--config", POD_CONFIG,
                                    "--output", POD_STUDY_DIR + name, "--resume"]}]}}},
                "Worker": {"replicas": 2, "restartPolicy": "Never", "template": {"spec": {
                    "nodeSelector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                     "effect": "NoSchedule"}],
                    "containers": [{
                        "name": "worker", "image": "hpo-mpi:cuda",
                        "command": ["/usr/sbin/sshd", "-De"],
                        "env": [{"name": "FI_PROVIDER", "value": "efa"}],
                        "resources": {"requests": dict(quantities), "limits": dict(quantities)},
                        "volumeMounts": [{"name": "sweep-config", "mountPath": "/etc/hpo"},
                                         {"name": "study", "mountPath": "/study"},
                                         {"name": "dshm", "mountPath": "/dev/shm"}]}],
                    "volumes": [{"name": "sweep-config", "configMap": {"name": f"{name}-sweep"}},
                                {"name": "study",
                                 "persistentVolumeClaim": {"claimName": "hpo-study"}},
                                {"name": "dshm",
                                 "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}],
                }}},
            },
        },
    }
    return config_map, job


def sample_claim():
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "hpo-study"},
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "fsx-sc",
                     "resources": {"requests": {"storage": "1200Gi"}}}}


WORKER = ("spec", "mpiReplicaSpecs", "Worker")
WORKER_POD = WORKER + ("template", "spec")
WORKER_RESOURCES = WORKER_POD + ("containers", 0, "resources")
RESOURCES_PATH = "$.spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources"


def at(document, parts):
    for part in parts:
        document = document[part]
    return document


def set_at(parts, value):
    return lambda document: at(document, parts[:-1]).__setitem__(parts[-1], value)


def delete_at(parts):
    return lambda document: at(document, parts[:-1]).pop(parts[-1])


def rename_job(name):
    def mutate(job):
        job["metadata"]["name"] = name
    return mutate


def add_replica_type(job):
    replica_specs = job["spec"]["mpiReplicaSpecs"]
    replica_specs["Driver"] = copy.deepcopy(replica_specs["Worker"])


def add_second_worker_container(job):
    containers = at(job, WORKER_POD + ("containers",))
    containers.append(copy.deepcopy(containers[0]))


# (what, which document, mutation, JSON path of the expected problem, words of its message).
# The longest name whose DNS-1035 label is fine but whose last worker's hostname
# (NAME-worker-1) has 64 characters, one too many.
LONG_NAME = "h" * (64 - len("-worker-1"))
REJECTIONS = [
    ("launcher replicas 2", "job", set_at(("spec", "mpiReplicaSpecs", "Launcher", "replicas"), 2),
     "$.spec.mpiReplicaSpecs.Launcher.replicas", "must be 1"),
    ("worker replicas 0", "job", set_at(WORKER + ("replicas",), 0),
     "$.spec.mpiReplicaSpecs.Worker.replicas", "greater than or equal to 1"),
    ("restartPolicy Always", "job", set_at(WORKER + ("restartPolicy",), "Always"),
     "$.spec.mpiReplicaSpecs.Worker.restartPolicy", "must be one of Never, OnFailure"),
    ("name Hpo_Sweep", "job", rename_job("Hpo_Sweep"),
     "$.metadata.name", "not a valid DNS-1035 label"),
    ("worker hostname over 63 characters", "job", rename_job(LONG_NAME),
     "$.metadata.name",
     f"'{LONG_NAME}-worker-1' is not a valid DNS-1123 label: must be no more than 63"),
    ("slotsPerWorker missing", "job", delete_at(("spec", "slotsPerWorker")),
     "$.spec.slotsPerWorker", "required"),
    ("unknown replica type", "job", add_replica_type,
     "$.spec.mpiReplicaSpecs.Driver", "unknown replica type"),
    ("containers: \"x\"", "job", set_at(WORKER_POD + ("containers",), "x"),
     "$.spec.mpiReplicaSpecs.Worker.template.spec.containers", "is not of type 'array'"),
    ("no container", "job", set_at(WORKER_POD + ("containers",), []),
     "$.spec.mpiReplicaSpecs.Worker.template.spec.containers", "at least one container"),
    ("no Launcher", "job", delete_at(("spec", "mpiReplicaSpecs", "Launcher")),
     "$.spec.mpiReplicaSpecs.Launcher", "must have Launcher replica spec"),
    ("cleanPodPolicy missing", "job", delete_at(("spec", "runPolicy", "cleanPodPolicy")),
     "$.spec.runPolicy.cleanPodPolicy", "required"),
    ("negative backoffLimit", "job", set_at(("spec", "runPolicy", "backoffLimit"), -1),
     "$.spec.runPolicy.backoffLimit", "greater than or equal to 0"),
    ("sshAuthMountPath empty", "job", set_at(("spec", "sshAuthMountPath"), ""),
     "$.spec.sshAuthMountPath", "required"),
    ("mpiImplementation MVAPICH", "job", set_at(("spec", "mpiImplementation"), "MVAPICH"),
     "$.spec.mpiImplementation", "must be one of OpenMPI, Intel, MPICH"),
    ("a misspelt field", "job", set_at(("spec", "slotPerWorker"), 8),
     "$.spec.slotPerWorker", "unknown field"),
    ("slotsPerWorker as a string", "job", set_at(("spec", "slotsPerWorker"), "8"),
     "$.spec.slotsPerWorker", "is not of type 'integer'"),
    ("GPU limit below the request", "job",
     set_at(WORKER_RESOURCES + ("limits", "nvidia.com/gpu"), "4"),
     RESOURCES_PATH + ".requests['nvidia.com/gpu']", "cannot be overcommitted"),
    ("EFA requested without a limit", "job",
     delete_at(WORKER_RESOURCES + ("limits", "vpc.amazonaws.com/efa")),
     RESOURCES_PATH + ".limits['vpc.amazonaws.com/efa']", "needs a limit"),
    ("memory 16GB", "job", set_at(WORKER_RESOURCES + ("requests", "memory"), "16GB"),
     RESOURCES_PATH + ".requests.memory", "not a Kubernetes quantity"),
    ("cpu 0.5 unquoted", "job", set_at(WORKER_RESOURCES + ("requests", "cpu"), 0.5),
     RESOURCES_PATH + ".requests.cpu", "must be an integer or a string"),
    ("two containers named worker", "job", add_second_worker_container,
     "$.spec.mpiReplicaSpecs.Worker.template.spec.containers[1]",
     "duplicate entry {'name': 'worker'}"),
    ("MPIJob v1", "job", set_at(("apiVersion",), "kubeflow.org/v1"),
     "$.apiVersion", "must be 'kubeflow.org/v2beta1'"),
    ("ConfigMap value a number", "config_map", set_at(("data", "ranks"), 16),
     "$.data.ranks", "must be a string"),
    ("ConfigMap name with '_'", "config_map", set_at(("metadata", "name"), "hpo_sweep"),
     "$.metadata.name", "not a valid DNS-1123 subdomain"),
    ("claim without a class", "claim", delete_at(("spec", "storageClassName")),
     "$.spec.storageClassName", "required"),
    ("claim size 'lots'", "claim", set_at(("spec", "resources", "requests", "storage"), "lots"),
     "$.spec.resources.requests.storage", "must be a positive quantity"),
    ("claim access mode ReadWriteAll", "claim", set_at(("spec", "accessModes"), ["ReadWriteAll"]),
     "$.spec.accessModes[0]", "must be one of"),
]


class ValidatorRejects(unittest.TestCase):
    def samples(self):
        config_map, job = sample_documents()
        return {"config_map": config_map, "job": job, "claim": sample_claim()}

    def test_the_samples_are_valid(self):
        config_map, job = sample_documents()
        self.assertEqual(VALIDATOR.check_text(yaml.safe_dump_all([config_map, job]), "sample"), [])
        self.assertEqual(VALIDATOR.check_document(sample_claim()), [])
        check_mpijob_contract([config_map, job])

    def test_each_mutation_is_rejected_with_its_message(self):
        for what, target, mutate, path, words in REJECTIONS:
            with self.subTest(what):
                document = self.samples()[target]
                mutate(document)
                problems = VALIDATOR.check_document(document, "sample.yaml")
                self.assertTrue(any(p.path == path and words in p.message for p in problems),
                                f"no problem at {path} saying {words!r}; got:\n" +
                                "\n".join(map(str, problems)))

    def test_conflicts_between_documents(self):
        config_map, job = sample_documents()
        config_map["metadata"]["name"] = "hpo-sweep-config"  # the operator's own ConfigMap name
        problems = VALIDATOR.check_text(yaml.safe_dump_all([config_map, job, config_map]), "f.yaml")
        messages = [str(p) for p in problems]
        self.assertTrue(any("document 0: $.metadata.name: 'hpo-sweep-config' is the name the MPI "
                            "operator gives" in m for m in messages), messages)
        self.assertTrue(any("document 2: $.metadata.name: ConfigMap 'hpo-sweep-config' is also "
                            "document 0" in m for m in messages), messages)

    def test_duplicate_yaml_keys(self):
        problems = VALIDATOR.check_text("apiVersion: v1\nkind: ConfigMap\nkind: Secret\n", "d.yaml")
        self.assertEqual([str(p) for p in problems],
                         ["d.yaml: document 0: $: not valid YAML at line 3, column 1: "
                          "found duplicate key 'kind'"])

    def test_command_line_exit_codes(self):
        config_map, job = sample_documents()
        with tempfile.TemporaryDirectory(prefix="hpo-manifests-") as tmp:
            good, bad = pathlib.Path(tmp, "good.yaml"), pathlib.Path(tmp, "bad.yaml")
            good.write_text(yaml.safe_dump_all([config_map, job]))
            job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
            bad.write_text(yaml.safe_dump_all([config_map, job]))
            command = [sys.executable, str(HERE / "mpijob_rules.py"), "--crd", ARGS.crd]
            done = subprocess.run(command + [str(good)], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            done = subprocess.run(command + [str(good), str(bad)], capture_output=True, text=True)
            self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
            self.assertEqual(done.stdout.splitlines(),
                             [f"{bad}: document 1: $.spec.mpiReplicaSpecs.Launcher.replicas: "
                              "must be 1, not 2"])


# --- (c) the CPU example's launcher command, run here ----------------------------------------

def shrink_config(text, run_cap=None, epochs=1):
    """The config with a budget that runs here in seconds, everything else as it is.

    Only budgets change: run_cap trials (default 2; a grid is capped), `epochs` epochs (default 1),
    a few thousand samples; the
    early-stopping rules go (their rungs need more epochs) and so does the metric target (it could
    end the sweep before both trials). The task, the search space, ranks_per_trial and the seed
    stay, so this checks the config the ConfigMap carries with this build of hpo.
    """
    config = yaml.safe_load(text)
    sweep = config["sweep"]
    sweep["run_cap"] = run_cap or SHRUNK_RUN_CAP
    sweep.pop("early_terminate", None)
    sweep.get("metric", {}).pop("target", None)
    config.pop("median_stopping", None)
    config["epochs"] = epochs
    if config.get("task") == "synthetic":
        sizes = config.setdefault("synthetic", {})
        for key, size in (("train_samples", 1024), ("val_samples", 256), ("test_samples", 256)):
            sizes[key] = min(sizes.get(key, size), size)
    else:
        config["train_samples"] = 2048
        config["validation_samples"] = 512
    return yaml.safe_dump(config, sort_keys=False)


def local_launcher_command(command, hpo, wrapper, root):
    """The pod's launcher command made to run here: the pod's paths replaced by those under
    `root`, hpo-mpirun by `wrapper` and the hpo that mpirun starts by `hpo`."""
    local = []
    for index, word in enumerate(command):
        if index == 0 and word == WRAPPER:
            word = str(wrapper)
        elif word == POD_HOSTFILE:
            word = str(root / "hostfile")
        elif word.startswith(POD_CONFIG_DIR):
            word = str(root / "etc-hpo" / word[len(POD_CONFIG_DIR):])
        elif word.startswith(POD_STUDY_DIR):
            word = str(root / "study" / word[len(POD_STUDY_DIR):])
        elif os.path.basename(word) == "hpo" and command[index + 1:index + 2] == ["sweep"]:
            word = hpo
        local.append(word)
    return local


def end_session(process):
    """Kills what is left of the process session `process` leads (mpirun, its ranks, the
    programs they started), whether `process` itself has exited or not, and reaps `process`."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate()


class LauncherRunsLocally(unittest.TestCase):
    def start(self, command, env):
        """Starts `command` in a session of its own, ended by the test's clean-up whether the test
        passes or fails (no rank outlives a failed assertion)."""
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env=env, start_new_session=True)
        self.addCleanup(end_session, process)
        return process

    def run_to_end(self, command, env):
        """Runs `command` (as start) to its end; returns (exit code, output)."""
        process = self.start(command, env)
        output, _ = process.communicate(timeout=600)
        return process.returncode, output

    def launcher_here(self, shrink_args=()):
        """(command, env, study path, run_cap) of the CPU example's launcher, made to run here
        with its config shrunk (shrink_config) and written where the command expects it."""
        if HPO is None:
            self.skipTest("needs --hpo")
        manifest = MANIFESTS / "mpijob-cpu.yaml"
        if not manifest.is_file():
            self.skipTest(f"{manifest} does not exist yet")
        documents = load_documents(manifest.read_text())
        job, config_map, ranks, _ = check_mpijob_contract(documents)
        launcher = launcher_container(job)

        root = pathlib.Path(tempfile.mkdtemp(prefix="hpo-launcher-"))
        self.addCleanup(shutil.rmtree, root, ignore_errors=True)
        (root / "etc-hpo").mkdir()
        (root / "study").mkdir()
        shrunk = shrink_config(config_map["data"]["sweep.yaml"], *shrink_args)
        (root / "etc-hpo" / "sweep.yaml").write_text(shrunk)
        # The operator's hostfile lists every worker with slotsPerWorker slots; here one host
        # holds them all.
        (root / "hostfile").write_text(f"localhost slots={ranks}\n")
        wrapper = REPO / "scripts" / WRAPPER
        command = local_launcher_command(launcher["command"], HPO, wrapper, root)
        env = dict(os.environ)
        env.update({variable["name"]: variable.get("value", "")
                    for variable in launcher.get("env", [])})
        env.update(LOCAL_MPI_ENV)
        study = root / "study" / job["metadata"]["name"] / "study.h5"
        return command, env, study, yaml.safe_load(shrunk)["sweep"]["run_cap"]

    def preempt_and_resume(self, pod):
        """SIGTERM to the `pod` ("launcher" or "worker") mid-epoch, then the launcher's restart.

        launcher: the pod's SIGTERM reaches hpo-mpirun, which passes it on to mpirun as SIGUSR1.
        worker: the worker's command (hpo-worker, with a stand-in for sshd since the ranks run
        here under mpirun) sends SIGUSR1 to the ranks itself. Either way the ranks checkpoint, the
        launcher exits 3, and the restarted launcher (same command, restartPolicy OnFailure)
        resumes and finishes with every trial once and every epoch trained once."""
        command, env, study, run_cap = self.launcher_here(
            shrink_args=(PREEMPT_RUN_CAP, PREEMPT_EPOCHS))
        launcher = self.start(command, env)
        worker = None
        if pod == "worker":
            worker_env = dict(env, HPO_RANK_MATCH=str(study.parent), HPO_WORKER_GRACE_S="60")
            worker = self.start([str(REPO / "scripts" / "hpo-worker"), "sleep", "600"],
                                worker_env)
        # Into the first epochs: a trial has saved its first checkpoint (the waits follow the
        # sweep's progress; 300 s without one fails, on however busy a machine).
        checkpoints = study.parent / "checkpoints"
        deadline = time.monotonic() + 300
        while launcher.poll() is None and time.monotonic() < deadline and not (
                checkpoints.is_dir() and any(checkpoints.glob("*.pt"))):
            time.sleep(0.2)
        self.assertIsNone(launcher.poll(), "the sweep ended before the signal")
        self.assertTrue(any(checkpoints.glob("*.pt")), "no checkpoint within 300 s")
        (worker or launcher).send_signal(signal.SIGTERM)
        output, _ = launcher.communicate(timeout=180)
        self.assertEqual(launcher.returncode, 3, output)
        self.assertIn("interrupted", output)
        if worker:
            worker_output, _ = worker.communicate(timeout=120)
            self.assertEqual(worker.returncode, 0, worker_output)
            self.assertIn("hpo-worker: SIGTERM: asking the ranks on this pod to checkpoint",
                          worker_output)
        else:
            self.assertIn("hpo-mpirun: received SIGTERM", output)
        with h5py.File(study, "r") as study_file:
            before = study_file["trials"][:]
        self.assertLess(len(before), run_cap)
        self.assertTrue(any((study.parent / "checkpoints").iterdir()), "no checkpoint saved")
        returncode, output = self.run_to_end(command, env)
        self.assertEqual(returncode, 0, output)
        with h5py.File(study, "r") as study_file:
            after = study_file["trials"][:]
            epochs = study_file["curves"][:]["trial_id"]
        self.assertEqual(sorted(after["trial_id"].tolist()), list(range(run_cap)))
        self.assertTrue(all(status == b"completed" for status in after["status"]), after)
        for row in before:  # finished before the signal: kept as they were
            self.assertIn(row.tobytes(), [r.tobytes() for r in after])
        # Every trial trained each of its epochs once (resumed trials continued, not restarted).
        for trial in range(run_cap):
            self.assertEqual((epochs == trial).sum(), PREEMPT_EPOCHS, f"trial {trial}")

    def test_launcher_sigterm_saves_and_the_restarted_launcher_resumes(self):
        self.preempt_and_resume("launcher")

    def test_worker_sigterm_has_its_ranks_checkpoint(self):
        self.preempt_and_resume("worker")

    def test_cpu_launcher_command_runs_the_sweep_and_restarts_cleanly(self):
        command, env, study, _ = self.launcher_here()
        for start in ("first start", "restart after the sweep finished"):
            began = time.monotonic()
            returncode, output = self.run_to_end(command, env)
            print(f"\n  {start}: exit {returncode} in {time.monotonic() - began:.1f}s",
                  file=sys.stderr)
            self.assertEqual(returncode, 0, f"{command}\n{output}")
            with h5py.File(study, "r") as study_file:
                trials = study_file["trials"][:]
            self.assertEqual(sorted(trials["trial_id"].tolist()), list(range(SHRUNK_RUN_CAP)))
            self.assertTrue(all(status == b"completed" for status in trials["status"]), trials)


# --- (d) hpo render mpijob, round trip ---------------------------------------------------------

class RenderRoundTrip(unittest.TestCase):
    def setUp(self):
        if HPO is None:
            self.skipTest("needs --hpo")

    def test_rendered_jobs_validate_and_their_slots_add_up(self):
        for config, args in RENDER_CASES:
            with self.subTest(config=config, args=" ".join(args)):
                check_rendered(HPO, REPO / config, args)


def main():
    global VALIDATOR, HPO, MANIFESTS, ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crd", required=True, help="the MPIJob CustomResourceDefinition")
    parser.add_argument("--hpo", help="the hpo executable (the launcher run and render cases)")
    parser.add_argument("--manifests", default=str(REPO / "k8s-mpi"),
                        help="the folder of manifests to check (default: k8s-mpi)")
    ARGS, rest = parser.parse_known_args()
    if not os.path.isfile(ARGS.crd):
        print(f"skipped: the MPIJob CRD {ARGS.crd} does not exist")
        return SKIP
    VALIDATOR = mpijob_rules.ManifestValidator(ARGS.crd)
    HPO = os.path.abspath(ARGS.hpo) if ARGS.hpo else None
    MANIFESTS = pathlib.Path(ARGS.manifests).resolve()
    program = unittest.main(argv=[sys.argv[0]] + rest, verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

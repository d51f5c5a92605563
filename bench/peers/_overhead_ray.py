"""Ray Tune's side of bench/peers/_overhead.py, run by it with the ray venv's python (see there for
the settings and why): a `Tuner` over a function trainable, random search over the workload's
hyperparameter, num_samples trials, max_concurrent_trials of 1 CPU each. The trainable runs the
trial in-process (trial_program.run_trial) or, with --program, launches _trial_program.py as hpo
does; --reuse-actors runs trial after trial in one worker process. Prints one JSON line:
{"version", "trials", "errors"}.
"""

import argparse
import json
import logging
import os

import ray
from ray import tune
from ray.tune.search.basic_variant import BasicVariantGenerator

import _trial_program as trial_program


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", choices=("sleep", "train"), required=True)
    parser.add_argument("--trials", type=int, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--stamps", required=True)
    parser.add_argument("--folder", required=True, help="Ray's temp dir and Tune's storage")
    parser.add_argument("--program", action="store_true")
    parser.add_argument("--reuse-actors", action="store_true")
    args = parser.parse_args()

    workload, stamps = args.workload, args.stamps
    name, low, high = trial_program.SPACE[workload]
    run = trial_program.run_program if args.program else trial_program.run_trial

    def trainable(config):
        tune.report({"loss": run(workload, config[name], stamps)})

    space = tune.uniform(low, high) if workload == "sleep" else tune.randint(low, high + 1)
    ray.init(num_cpus=args.concurrency, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING, _temp_dir=os.path.join(args.folder, "ray"))
    try:
        tuner = tune.Tuner(
            tune.with_resources(trainable, {"cpu": 1}),
            param_space={name: space},
            # What max_concurrent_trials=C sets up without a search_alg (tune.py), seeded
            # (Tune ignores max_concurrent_trials beside a search_alg, with a warning).
            tune_config=tune.TuneConfig(
                num_samples=args.trials, reuse_actors=args.reuse_actors,
                search_alg=BasicVariantGenerator(max_concurrent=args.concurrency,
                                                 random_state=args.seed)),
            run_config=tune.RunConfig(name="overhead", verbose=0,
                                      storage_path=os.path.join(args.folder, "results")))
        results = tuner.fit()
        print(json.dumps({"version": "ray-" + ray.__version__, "trials": len(results),
                          "errors": results.num_errors}), flush=True)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()

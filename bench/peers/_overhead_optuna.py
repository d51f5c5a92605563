"""Optuna's side of bench/peers/_overhead.py, run by it with the optuna venv's python (see there for
the settings and why). One worker process: loads (or creates) the study on the shared journal file
(JournalStorage over JournalFileBackend, its default symlink lock) and optimizes with a random
sampler until the study holds --trials trials (MaxTrialsCallback counting every state). The
objective runs the trial in-process (trial_program.run_trial) or, with --program, launches
_trial_program.py as hpo does. Two workers can both ask for a trial when one is missing; the one
numbered past the last stops the study and is pruned without running, so exactly --trials run.

`--summary` instead prints the finished study as one JSON line: {"version", "complete", "failed"}
(complete: trials numbered below --trials that completed).
"""

import argparse
import json

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.study import MaxTrialsCallback
from optuna.trial import TrialState

import _trial_program as trial_program


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--journal", required=True)
    parser.add_argument("--trials", type=int, required=True)
    parser.add_argument("--workload", choices=("sleep", "train"))
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stamps")
    parser.add_argument("--program", action="store_true")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    storage = JournalStorage(JournalFileBackend(args.journal))

    if args.summary:
        trials = optuna.load_study(study_name="overhead", storage=storage).get_trials(
            deepcopy=False)
        print(json.dumps({
            "version": "optuna-" + optuna.__version__,
            "complete": sum(t.state == TrialState.COMPLETE and t.number < args.trials
                            for t in trials),
            "failed": sum(t.state == TrialState.FAIL for t in trials)}))
        return

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    workload, stamps, trials = args.workload, args.stamps, args.trials
    name, low, high = trial_program.SPACE[workload]
    run = trial_program.run_program if args.program else trial_program.run_trial

    def objective(trial):
        if trial.number >= trials:
            trial.study.stop()
            raise optuna.TrialPruned()
        if workload == "sleep":
            value = trial.suggest_float(name, low, high)
        else:
            value = trial.suggest_int(name, low, high)
        return run(workload, value, stamps)

    study = optuna.create_study(
        study_name="overhead", storage=storage, load_if_exists=True,
        sampler=optuna.samplers.RandomSampler(seed=args.seed * 1000 + args.worker))
    study.optimize(objective, callbacks=[MaxTrialsCallback(trials, states=None)])


if __name__ == "__main__":
    main()

"""Writes run-fixture.wandb: a real W&B transaction log for tests/unit/test_wandb_run_log.cpp.

The log is what wandb 0.31.0 writes, offline, for a small training program. To rerun it (it
replaces run-fixture.wandb beside this file; the tests' expected lines may then need updating,
as _timestamp and _runtime change):

    python3 -m venv /tmp/wandb-venv && /tmp/wandb-venv/bin/pip install wandb==0.31.0
    /tmp/wandb-venv/bin/python tests/unit/data/wandb/make_fixture.py

Run as a script it starts itself again as the training program, with the environment a command
trial gets (WANDB_MODE=offline, WANDB_DIR, WANDB_RUN_ID) plus settings that keep the log small
(no console capture, no system metrics, no machine metadata), and copies the log it wrote here.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

RUN_ID = "fixture"


def train():
    import wandb

    run = wandb.init(config={"lr": 0.1})
    lr = wandb.config.lr
    for epoch in range(3):
        loss = 1.0 / (1.0 + lr * (epoch + 1))
        # A step key, the objective, a nested dict and a string (the tests use "phase" as an
        # objective that is not a number).
        wandb.log({"epoch": epoch, "val_loss": loss, "opt": {"lr": lr}, "phase": "train"})
    # commit=False: merged into the next row.
    wandb.log({"extra": 7}, commit=False)
    wandb.log({"val_loss": 0.5, "epoch": 3})
    run.finish()


def main():
    with tempfile.TemporaryDirectory() as root:
        env = dict(os.environ)
        env.update(
            WANDB_MODE="offline",
            WANDB_DIR=root,
            WANDB_RUN_ID=RUN_ID,
            WANDB_SILENT="true",
            WANDB_CONSOLE="off",
            WANDB_DISABLE_GIT="true",
            WANDB_DISABLE_CODE="true",
            WANDB__DISABLE_STATS="true",
            WANDB__DISABLE_META="true",
            WANDB__DISABLE_MACHINE_INFO="true",
            WANDB__SAVE_REQUIREMENTS="false",
        )
        subprocess.run([sys.executable, __file__, "--train"], env=env, check=True)
        (log,) = glob.glob(os.path.join(root, "wandb", "offline-run-*", f"run-{RUN_ID}.wandb"))
        target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run-fixture.wandb")
        shutil.copyfile(log, target)
        print(f"wrote {target} ({os.path.getsize(target)} bytes)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--train"]:
        train()
    else:
        main()

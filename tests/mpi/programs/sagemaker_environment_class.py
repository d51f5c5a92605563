#!/usr/bin/env python3
"""A SageMaker training script that reads its training environment through the SageMaker training
toolkit's own class, `sagemaker_training.environment.Environment()` (PyPI sagemaker-training), as
its documentation shows: hyperparameters from env.hyperparameters (the toolkit json-decodes them:
numbers arrive as numbers), data from env.channel_input_dirs["train"], the model folder from
env.model_dir. Environment() reads input/config/*.json under /opt/ml or SAGEMAKER_BASE_DIR.

The same fake training as sagemaker_script_mode.py: the train channel's data lines count in the
loss, 0.05 s per epoch, `epoch N: val_loss=X` lines, model.json on the master host only.
"""

import json
import os
import time

from sagemaker_training import environment


def count_examples(train_dir):
    """Data lines (not headers, not blank) of every .csv/.txt file in the channel folder."""
    examples = 0
    for name in sorted(os.listdir(train_dir)):
        if not name.endswith((".csv", ".txt")):
            continue
        with open(os.path.join(train_dir, name)) as f:
            lines = [line for line in f.read().splitlines() if line.strip()]
        if name.endswith(".csv") and lines:
            lines = lines[1:]  # the header
        examples += len(lines)
    return examples


def main():
    env = environment.Environment()
    hyperparameters = env.hyperparameters
    epochs = int(hyperparameters.get("epochs", 5))
    lr = float(hyperparameters.get("lr", 0.1))
    batch_size = int(hyperparameters.get("batch-size", 32))
    optimizer = hyperparameters.get("optimizer", "sgd")
    train_dir = env.channel_input_dirs["train"]
    print("training on %s of %s (master %s)" % (env.current_host, env.hosts, env.master_hostname),
          flush=True)

    examples = count_examples(train_dir)
    if examples == 0:
        raise ValueError("no training data in %s" % train_dir)
    momentum = 0.9 if optimizer == "adam" else 1.0
    val_loss = 0.0
    for epoch in range(1, epochs + 1):
        time.sleep(0.05)
        val_loss = (lr * momentum * examples + 1.0 / epoch) * 32.0 / batch_size
        print("epoch %d: val_loss=%.6f" % (epoch, val_loss), flush=True)

    if env.is_master:
        path = os.path.join(env.model_dir, "model.json")
        with open(path, "w") as f:
            json.dump({"lr": lr, "epochs": epochs, "batch_size": batch_size, "optimizer": optimizer,
                       "val_loss": val_loss, "job_name": env.job_name}, f)
        print("saved model to %s" % path, flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A training program written for Katib's File metrics collector, as Katib's own examples write one
(kubeflow/katib examples/v1beta1/trial-images/pytorch-mnist/mnist.py): it appends its metrics to
the file `--log-path` names, which the collector reads, instead of printing them.

`--format text` writes what mnist.py's logging writes (`%(asctime)s %(levelname)-8s %(message)s`,
dates as %Y-%m-%dT%H:%M:%SZ), one `epoch=N` and one `val_loss=X` line per epoch, for Katib's default
metricsFormat `([\\w|-]+)\\s*=\\s*(...)`. `--format json` writes what mnist.py's hypertune logger
writes (cloudml-hypertune: `json.dumps(..., sort_keys=True)`, values as strings, a "timestamp" of
time.time()), one object per epoch. Each epoch is flushed, after time.sleep(0.05).

The loss is deterministic: val_loss = 10 * |lr - 0.02| + 0.5 / epoch, so a test can check that
--lr=${trialParameters.learningRate} reached the program. The trial template's env must give
DATA_DIR, an absolute path (as a real program reads os.environ["DATA_DIR"]); it is not opened.
"""

import argparse
import json
import os
import sys
import time


def loss_at(lr, epoch):
    return 10.0 * abs(lr - 0.02) + 0.5 / epoch


def text_line(message):
    """A line as mnist.py's logging.basicConfig(format=..., datefmt=...) writes it at INFO."""
    return "%s %-8s %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "INFO", message)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--log-path", default="/var/log/katib/metrics.log")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    data_dir = os.environ["DATA_DIR"]  # a KeyError, as in a real program, when the env is lost
    if not os.path.isabs(data_dir):
        sys.exit("DATA_DIR must be an absolute path, got %r" % data_dir)
    # Katib mounts the log's folder; hpo gives each trial its own file in its trial folder. Neither
    # is created here: a path that was not replaced fails loudly.
    with open(args.log_path, "a") as log:
        for epoch in range(1, args.epochs + 1):
            time.sleep(0.05)
            loss = loss_at(args.lr, epoch)
            if args.format == "text":
                log.write(text_line("epoch=%d" % epoch))
                log.write(text_line("val_loss=%.6f" % loss))
            else:
                metric = {"epoch": str(epoch), "val_loss": str(loss), "timestamp": time.time(),
                          "trial": "0", "global_step": str(epoch), "checkpoint_path": ""}
                log.write(json.dumps(metric, sort_keys=True) + "\n")
            log.flush()
    print("trained %d epochs with lr=%g, data in %s" % (args.epochs, args.lr, data_dir))


if __name__ == "__main__":
    main()

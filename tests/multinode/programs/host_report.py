#!/usr/bin/env python3
"""A command trial for the multi-host tests: each rank writes where it runs and what hpo gave it
(hostname, its addresses, its MPI rank's world and node-local rank, the torchrun variables, what
MASTER_ADDR resolves to here) to HPO_TRIAL_DIR/host-rank-R.json, then, with `--dist True`, joins
the group's torch.distributed world (gloo, init_method env://) and allreduces rank + 1; rank 0
prints the sum as the metric `total`."""

import argparse
import json
import os
import socket
import subprocess


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dist", default="True")
    parser.add_argument("--trial", type=int, default=0)  # a swept name, only to make trials
    args, _ = parser.parse_known_args()
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    master = os.environ.get("MASTER_ADDR", "")
    try:
        master_resolves_to = socket.gethostbyname(master)
    except OSError as error:
        master_resolves_to = "unresolved: %s" % error
    # hpo strips OMPI_* from the program's environment; the rank that started it (the parent)
    # still has Open MPI's own numbering, for tests to check hpo's against.
    launcher = {}
    try:
        with open("/proc/%d/environ" % os.getppid(), "rb") as f:
            for entry in f.read().split(b"\0"):
                key, _, value = entry.decode(errors="replace").partition("=")
                if key in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"):
                    launcher[key] = value
    except OSError:
        pass
    addresses = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    report = {"hostname": socket.gethostname(), "addresses": addresses,
              "master_resolves_to": master_resolves_to, "launcher": launcher,
              "env": {k: v for k, v in os.environ.items()
                      if k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                               "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
                               "HPO_TRIAL_ID", "CUDA_VISIBLE_DEVICES")}}
    path = os.path.join(os.environ["HPO_TRIAL_DIR"], "host-rank-%d.json" % rank)
    with open(path + ".tmp", "w") as f:
        json.dump(report, f)
    os.rename(path + ".tmp", path)

    total = float(world * (world + 1) // 2)
    if args.dist == "True":
        if master_resolves_to.startswith("unresolved"):  # fail now, not after gloo's time-out
            raise SystemExit("MASTER_ADDR %s does not resolve on %s: %s" %
                             (master, report["hostname"], master_resolves_to))
        import datetime
        import torch
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="env://",
                                timeout=datetime.timedelta(seconds=120))
        value = torch.tensor([float(rank + 1)])
        dist.all_reduce(value)
        total = float(value.item())
        dist.destroy_process_group()
    if rank == 0:
        print(json.dumps({"epoch": 1, "total": total}), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A user's training program, as hpo's command-trial tests run it (one process per rank of a trial
group, started with the torchrun environment). It "trains" `--steps` steps: each step its loss is
lr * step (so the search has something to rank), optionally after a torch.distributed (gloo)
allreduce across the group whose sum it reports, and rank 0 prints the metrics in `--format`.

Behaviours the tests ask for by parameter: `--mode fail` exits 3 on rank `--fail_rank` at step
`--fail_step`; `--mode hang` sleeps forever on rank 0 at that step; `--mode silent` never prints the
metric; `--mode traceback` raises RuntimeError on rank 0 at `--fail_step`, many frames deep (a
traceback of well over 256 bytes); `--mode unflushed` prints rank 0's first step without flushing
and sleeps forever. `--report_every N` prints only every N-th step (epochs N, 2N, ...).
`--mode fresh` ignores its checkpoint (starts at step 1 every time, as a program that keeps none);
`--falling true` reports the loss lr + 1 / step, which falls with each step as a training loss does,
instead of lr * step. `--graceful true` finishes the step it is in when SIGTERM comes (prints it, keeps it) and exits 0,
as a program that checkpoints on SIGTERM does. `--save_first true` keeps each step before printing
it, not after (killed between the two, it leaves a step kept but not reported, not the reverse). `--leftover setsid|double_fork` first leaves a
process behind that ignores SIGTERM and sleeps 300 s in a session of its own (a child that called
setsid, or a daemon's double fork, re-parented away from the program), its pid in
HPO_TRIAL_DIR/leftover-rank-R.pid. Every rank writes what it was started with to
HPO_TRIAL_DIR/start-rank-R.json (argv, environment, pid) and keeps its last step in
HPO_CHECKPOINT_DIR/state-rank-R.json, so a resumed trial continues after it (one file per rank: a
rank that starts late must not skip the steps another rank already took).
"""

import argparse
import json
import os
import signal
import sys
import time


def boolean(text):
    return text in ("True", "true", "1")


def leave_behind(kind, pid_path):
    """Starts a process that outlives this one (see the module's text) and waits for its pid."""
    if os.fork() == 0:
        os.setsid()
        if kind == "double_fork" and os.fork() != 0:
            os._exit(0)  # the daemon's middle process: its child is an orphan now
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with open(pid_path + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(pid_path + ".tmp", pid_path)
        time.sleep(300)
        os._exit(0)
    while not os.path.exists(pid_path):
        time.sleep(0.01)


def fail_deep_down(depth):
    if depth == 0:
        raise RuntimeError("boom: the cause at the end of a long traceback")
    if depth % 2:
        fail_deep_down(depth - 1)
    else:
        fail_deep_down(depth - 1)  # another line: Python lists every frame, none as "repeated"


def keep(state_path, step):
    """Saves `step` as the last one done, atomically."""
    with open(state_path + ".tmp", "w") as f:
        json.dump({"step": step}, f)
    os.replace(state_path + ".tmp", state_path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--dist", type=boolean, default=False)
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--fail_rank", type=int, default=0)
    parser.add_argument("--fail_step", type=int, default=1)
    parser.add_argument("--format", default="json")
    parser.add_argument("--leftover", default="")
    parser.add_argument("--report_every", type=int, default=1)
    parser.add_argument("--graceful", type=boolean, default=False)
    parser.add_argument("--falling", type=boolean, default=False)
    parser.add_argument("--save_first", type=boolean, default=False)
    args, _ = parser.parse_known_args()  # swept names the program does not use are fine

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    trial_dir = os.environ["HPO_TRIAL_DIR"]
    checkpoint_dir = os.environ["HPO_CHECKPOINT_DIR"]
    with open(os.path.join(trial_dir, "start-rank-%d.json" % rank), "w") as f:
        json.dump({"argv": sys.argv[1:], "env": dict(os.environ), "pid": os.getpid()}, f)

    if args.leftover:
        leave_behind(args.leftover, os.path.join(trial_dir, "leftover-rank-%d.pid" % rank))

    if args.dist:
        import torch
        import torch.distributed as dist
        dist.init_process_group("gloo")  # MASTER_ADDR/PORT, RANK, WORLD_SIZE from the environment

    terminated = []
    if args.graceful:
        signal.signal(signal.SIGTERM, lambda number, frame: terminated.append(number))

    state_path = os.path.join(checkpoint_dir, "state-rank-%d.json" % rank)
    first = 1
    if os.path.exists(state_path) and args.mode != "fresh":  # fresh: ignores its checkpoint
        with open(state_path) as f:
            first = json.load(f)["step"] + 1
        print("resumed after step %d" % (first - 1), flush=True)

    for step in range(first, args.steps + 1):
        total = float(world * (world + 1) // 2)
        if args.dist:
            value = torch.tensor([float(rank + 1)])
            dist.all_reduce(value)
            total = float(value.item())
        if args.sleep:
            time.sleep(args.sleep)
        if args.mode == "fail" and rank == args.fail_rank and step == args.fail_step:
            print("boom: rank %d fails on purpose at step %d" % (rank, step), file=sys.stderr,
                  flush=True)
            sys.exit(3)
        if args.mode == "hang" and rank == 0 and step == args.fail_step:
            time.sleep(1e6)
        if args.mode == "traceback" and rank == 0 and step == args.fail_step:
            fail_deep_down(12)
        loss = args.lr + 1.0 / step if args.falling else args.lr * step
        if rank == 0 and args.mode == "unflushed":
            print(json.dumps({"epoch": step, "loss": loss}))  # buffered unless PYTHONUNBUFFERED
            time.sleep(1e6)
        if args.save_first:
            keep(state_path, step)
        if rank == 0 and args.mode != "silent" and step % args.report_every == 0:
            if args.format == "json":
                print(json.dumps({"epoch": step, "loss": loss, "allreduce_sum": total}), flush=True)
            elif args.format == "keyvalue":
                print("epoch=%d loss=%r allreduce_sum=%r" % (step, loss, total), flush=True)
            else:
                print("[step %d] objective is %r" % (step, loss), flush=True)
        if not args.save_first:
            keep(state_path, step)
        if terminated:
            sys.exit(0)

    if args.dist:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

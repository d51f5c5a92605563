#!/usr/bin/env python3
"""A user's torch 2.x training program as a command trial runs it on GPUs (one process per rank of
a trial group, with the torchrun environment). Every rank writes what it saw to
HPO_TRIAL_DIR/gpu-rank-R.json: CUDA_VISIBLE_DEVICES, its trial (HPO_TRIAL_ID; hpo hides its own
OMPI_* variables from the program), how many devices torch sees. With --dist, the group joins an NCCL process
group, checks an all_reduce and trains a small model with DistributedDataParallel for --epochs,
rank 0 printing each epoch's loss as a JSON line."""

import argparse
import json
import os

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--dist", default="false")
    args, _ = parser.parse_known_args()
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    seen = {
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "trial_id": int(os.environ["HPO_TRIAL_ID"]),
        "device_count": torch.cuda.device_count(),
        "torch": torch.__version__,
    }
    device = torch.device("cuda", local_rank % max(1, torch.cuda.device_count()))
    torch.cuda.set_device(device)
    if args.dist in ("true", "True", "1"):
        import torch.distributed as dist
        dist.init_process_group("nccl")
        value = torch.full((4,), float(rank + 1), device=device)
        dist.all_reduce(value)
        seen["allreduce_sum"] = value[0].item()
        seen["backend"] = dist.get_backend()
        torch.manual_seed(0)
        model = torch.nn.parallel.DistributedDataParallel(
            torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
            .to(device), device_ids=[device.index])
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
        generator = torch.Generator().manual_seed(rank)
        inputs = torch.randn(256, 8, generator=generator).to(device)
        targets = inputs.sum(dim=1, keepdim=True)
        for epoch in range(1, args.epochs + 1):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
            loss.backward()
            optimizer.step()
            total = loss.detach().clone()
            dist.all_reduce(total)
            if rank == 0:
                print(json.dumps({"loss": total.item() / world, "epoch": epoch}), flush=True)
        dist.destroy_process_group()
    else:
        for epoch in range(1, args.epochs + 1):
            print(json.dumps({"loss": args.lr / epoch, "epoch": epoch}), flush=True)
    path = os.path.join(os.environ["HPO_TRIAL_DIR"], "gpu-rank-%d.json" % rank)
    with open(path, "w") as f:
        json.dump(seen, f)


if __name__ == "__main__":
    main()

"""One run on several processes (``torchrun --nproc_per_node=N train.py ...``).

Every rank builds the same model from the same seed and walks the same (seed, epoch)
batch order; each takes its contiguous share of every batch (``shard``), so the global
batch is still ``trainer.batch_size`` and the run stays deterministic and resumable.
DistributedDataParallel averages the gradients; each rank's loss is weighted by its share
of the batch so that the average is the whole batch's mean loss. Rank 0 alone writes
checkpoints, records, predictions and logs; evaluation splits the batches over the ranks
and gathers the predictions (``all_gather_object``).

Without ``torchrun`` (``WORLD_SIZE`` unset or 1) nothing here does anything: ``Dist()``
is rank 0 of 1 and every collective returns its input.
"""
from __future__ import annotations

import atexit
import os
from dataclasses import dataclass

import torch
import torch.distributed as tdist


@dataclass(frozen=True)
class Dist:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world > 1


def setup(device: str = "auto") -> Dist:
    """Join the process group torchrun describes (environment variables), once per process:
    NCCL on CUDA, gloo on the CPU."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Dist()
    rank, local_rank = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if not tdist.is_initialized():
        cuda = torch.cuda.is_available() and device != "cpu"
        if cuda:
            torch.cuda.set_device(local_rank)
        tdist.init_process_group(backend="nccl" if cuda else "gloo")
        atexit.register(_leave_group)
    return Dist(rank, world, local_rank)


def _leave_group() -> None:
    """Leave the process group at exit (no communication: it cannot hang on a rank that crashed)."""
    if tdist.is_initialized():
        tdist.destroy_process_group()


def current() -> Dist:
    if not (tdist.is_available() and tdist.is_initialized()):
        return Dist()
    return Dist(tdist.get_rank(), tdist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def shard(idx: list[int], dist: Dist) -> tuple[list[int], float]:
    """This rank's contiguous share of a batch and the weight of its loss (its share of the
    batch times the world size: DDP's average of the weighted losses' gradients is then the
    whole batch's mean). A rank left without examples (a batch smaller than the world) runs
    the batch's first example with weight 0, so that every rank takes part in the reduction."""
    if not dist.enabled:
        return idx, 1.0
    base, extra = divmod(len(idx), dist.world)
    start = dist.rank * base + min(dist.rank, extra)
    part = idx[start : start + base + (dist.rank < extra)]
    if not part:
        return idx[:1], 0.0
    return part, len(part) * dist.world / len(idx)


def all_gather(obj, dist: Dist) -> list:
    """Every rank's ``obj``, in rank order (``[obj]`` on one process)."""
    if not dist.enabled:
        return [obj]
    out = [None] * dist.world
    tdist.all_gather_object(out, obj)
    return out


def broadcast(obj, dist: Dist):
    """Rank 0's ``obj`` on every rank."""
    if not dist.enabled:
        return obj
    box = [obj]
    tdist.broadcast_object_list(box, src=0)
    return box[0]


def all_reduce_sum(tensor: torch.Tensor, dist: Dist) -> torch.Tensor:
    if dist.enabled:
        tdist.all_reduce(tensor, op=tdist.ReduceOp.SUM)
    return tensor


def any_rank(flag: bool, dist: Dist) -> bool:
    """True on every rank when ``flag`` is true on one (Ctrl-C reaches ranks at different batches)."""
    if not dist.enabled:
        return flag
    return any(all_gather(bool(flag), dist))


def barrier(dist: Dist) -> None:
    if dist.enabled:
        tdist.barrier()


def wrap(model: torch.nn.Module, dist: Dist, device: torch.device) -> torch.nn.Module:
    """The module the training step calls: ``model`` itself, or its DDP wrapper (some heads
    and encoders leave parameters unused in a step, hence ``find_unused_parameters``)."""
    if not dist.enabled:
        return model
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids, find_unused_parameters=True)

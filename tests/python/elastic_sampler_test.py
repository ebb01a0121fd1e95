#!/usr/bin/env python3
"""hvd.elastic.ElasticSampler (Horovod's): each rank's share of a dataset, what a TorchState
commits, restores and merges of it, and how the world shares out what is left, under
mpirun at any np. Every rank computes what every rank should hold."""
import sys

import torch

import hvd.torch as hvd
from harness import Checks


def sampler_checks(c, r, p):
    n = 23
    data = list(range(n))
    s = hvd.elastic.ElasticSampler(data, shuffle=True, seed=7)
    s.set_epoch(0)
    share = list(iter(s))
    per = -(-n // p)
    c.ok(len(s) == per and len(share) == per, f"share of {n} at np {p}: {len(share)} (len {len(s)}), want {per}")
    shares = hvd.allgather_object(share, name="sampler.shares")
    everything = [i for sh in shares for i in sh]
    c.ok(set(everything) == set(range(n)), "the shares cover the dataset")
    c.ok(len(everything) - len(set(everything)) == per * p - n, f"only the padding repeats ({per * p - n})")
    c.ok(share != sorted(share) or p == n, "shuffled")

    # Commit after one batch, process a second, restore: only the first is processed.
    state = hvd.elastic.TorchState(sampler=s, epoch=0)
    c.ok("sampler" not in state._saved_state, "the sampler is a handler, not a pickled attribute")
    s.record_batch(0, 2)
    first = set(s.get_indices(0, 2))
    state.commit()
    s.record_batch(1, 2)
    c.ok(s.processed_indices == first | set(s.get_indices(1, 2)), "record_batch marks this rank's batch")
    state.restore()
    c.ok(s.processed_indices == first, f"restore: {sorted(s.processed_indices)}, want {sorted(first)}")

    # sync: the union of every rank's processed indices, and the rest shared out anew.
    state.sync()
    union = set()
    for sh in shares:
        union |= set(sh[0:2])
    c.ok(s.processed_indices == union, f"sync merges: {sorted(s.processed_indices)}, want {sorted(union)}")
    rest = list(iter(s))
    rests = hvd.allgather_object(rest, name="sampler.rests")
    left = set(range(n)) - union
    c.ok(set(i for sh in rests for i in sh) == left, "after sync the shares cover what is left")
    c.ok(not (set(rest) & union), "nothing processed is handed out again")
    c.ok(len(s) == -(-len(left) // p), f"share of what is left: {len(s)}")

    # A new epoch: everything again, in another order.
    s.set_epoch(1)
    again = list(iter(s))
    c.ok(s.processed_indices == set() and len(again) == per, "set_epoch starts over")
    c.ok(hvd.allgather_object(again, name="sampler.epoch1") != shares, "another epoch, another shuffle")
    st = s.state_dict()
    c.ok(st["epoch"] == 1 and st["processed_indices"] == set(), f"state_dict {st}")


def main():
    hvd.init()
    c = Checks("elastic_sampler_test")
    c.run(sampler_checks, c, hvd.rank(), hvd.size())
    sys.exit(c.finish())


if __name__ == "__main__":
    main()

"""hvd.init() after hvd.shutdown() (run on 2+ ranks by hvdrun, hvdrun --tcp or mpirun).

Under MPI, MPI cannot be initialized again after MPI_Finalize: init() raises one HvdError
saying so on every rank (Open MPI would abort the process), and the process then ends
normally. Under hvdrun --tcp a new world forms: each init after a shutdown meets under a
rendezvous scope of its own (the previous world's addresses in the store are stale), so the
ranks of the second and third worlds find each other and reduce."""
import sys

import torch

import hvd.torch as hvd


def check_mpi(r, problems):
    try:
        hvd.init()
        problems.append("hvd.init() after hvd.shutdown() did not raise")
    except hvd.HvdError as e:
        if "not supported under MPI" not in str(e) or "MPI_Finalize" not in str(e):
            problems.append(f"unclear error: {e}")
        print(f"rank {r}: hvd.init() after shutdown raised: {e}", flush=True)
    if hvd.is_initialized():
        problems.append("is_initialized() after the refused init")
    try:
        hvd.rank()
        problems.append("rank() after the refused init did not raise")
    except ValueError:
        pass


def check_tcp(r, p, problems):
    for world in (2, 3):
        hvd.init()
        if (hvd.rank(), hvd.size()) != (r, p):
            problems.append(f"world {world}: rank/size {hvd.rank()}/{hvd.size()}, want {r}/{p}")
        total = hvd.allreduce(torch.full((3,), float(world)), op=hvd.Sum).tolist()
        if total != [float(world * p)] * 3:
            problems.append(f"world {world}: allreduce {total}")
        hvd.shutdown()


def main():
    hvd.init()
    r, p = hvd.rank(), hvd.size()
    mpi = hvd.mpi_enabled()
    problems = []
    total = hvd.allreduce(torch.ones(2), op=hvd.Sum).tolist()
    if total != [float(p)] * 2:
        problems.append(f"allreduce before shutdown: {total}")
    hvd.shutdown()
    if mpi:
        check_mpi(r, problems)
    else:
        check_tcp(r, p, problems)
    for q in problems:
        print(f"rank {r}: FAIL {q}", flush=True)
    print(f"rank {r}: {'PASS' if not problems else 'FAIL'}", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""hvd.init() after hvd.shutdown() under MPI (run on 2+ ranks by hvdrun or mpirun): MPI
cannot be initialized again after MPI_Finalize, so init() raises one HvdError saying so on
every rank (Open MPI would abort the process), and the process then ends normally."""
import sys

import torch

import hvd.torch as hvd


def main():
    hvd.init()
    r, p = hvd.rank(), hvd.size()
    problems = []
    if not hvd.mpi_enabled():
        problems.append("not an MPI job (run it under hvdrun without --tcp, or mpirun)")
    total = hvd.allreduce(torch.ones(2), op=hvd.Sum).tolist()
    if total != [float(p)] * 2:
        problems.append(f"allreduce before shutdown: {total}")
    hvd.shutdown()
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
    for q in problems:
        print(f"rank {r}: FAIL {q}", flush=True)
    print(f"rank {r}: {'PASS' if not problems else 'FAIL'}", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A survivor whose script does not catch the runtime's failure (np 2 under mpirun
--enable-recovery, rank 1 SIGKILLed after a few allreduces): rank 0 prints the script's one
traceback and then one line from the shutdown at exit, not a second traceback, and leaves
with exit code 1 (the launcher's own code is 0 under --enable-recovery, so each rank writes
its exit code through a wrapper shell).

    uncaught_failure_test.py  (HVD_PYTHON, HVD_PYTHONPATH from ctest)"""
import os
import subprocess
import sys
import tempfile

from verdict import verdict


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    tmp = tempfile.mkdtemp(prefix="hvd_uncaught_")
    env = dict(os.environ, PYTHONPATH=os.environ["HVD_PYTHONPATH"], OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", HVD_STALL_CHECK_TIME_SECONDS="1",
               HVD_STALL_SHUTDOWN_TIME_SECONDS="2")
    rank_cmd = (f'{os.environ["HVD_PYTHON"]} {here}/uncaught_failure_rank.py 2>{tmp}/err.$OMPI_COMM_WORLD_RANK; '
                f'echo $? > {tmp}/rc.$OMPI_COMM_WORLD_RANK')
    cmd = ["mpirun", "--enable-recovery", "-x", "PYTHONPATH", "-x", "HVD_STALL_CHECK_TIME_SECONDS",
           "-x", "HVD_STALL_SHUTDOWN_TIME_SECONDS", "-np", "2", "sh", "-c", rank_cmd]
    problems = []
    try:
        subprocess.run(cmd, env=env, timeout=90, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        problems.append("the job did not end within 90 s (the survivor hangs)")
    err = open(f"{tmp}/err.0").read() if os.path.exists(f"{tmp}/err.0") else ""
    rc = open(f"{tmp}/rc.0").read().strip() if os.path.exists(f"{tmp}/rc.0") else "missing"
    print(err)
    if err.count("Traceback") != 1:
        problems.append(f"rank 0 printed {err.count('Traceback')} tracebacks, expected the script's one")
    if err.count("hvd: shutdown at exit: ") != 1 or "rank 1" not in err.split("hvd: shutdown at exit: ")[-1]:
        problems.append("rank 0 did not print one 'hvd: shutdown at exit' line naming rank 1")
    if rc != "1":
        problems.append(f"rank 0 exit code {rc}, expected 1")
    return verdict(problems, tmp)


if __name__ == "__main__":
    sys.exit(main())

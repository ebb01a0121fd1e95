#!/usr/bin/env python3
"""Verdict on a compute-sanitizer log: exit 0 when every reported error is one NCCL makes and
ignores itself, 1 otherwise (or when the log has no ERROR SUMMARY).

NCCL 2.28's communicator init probes its kernels with cudaFuncGetAttributes and ignores the
failures for kernels not built for this GPU ("no kernel image is available", error 209;
NVIDIA/nccl pull request 1864, pytorch/pytorch issue 164402). compute-sanitizer reports each
probe as an API error, four per ncclCommInitRank on an H200. Such a report is NCCL-internal
when it is a "Program hit ... on CUDA API call" whose host backtrace enters libnccl. Anything
else (memory errors, races, leaks, API errors of our own code) fails the verdict.

Usage: sanitizer_verdict.py LOG  -> prints one line, e.g.
  "memcheck.log: ERROR SUMMARY 56 errors, 56 inside NCCL's own kernel probes, 0 others: OK"
"""
import re
import sys


def verdict(path):
    lines = open(path, errors="replace").read().splitlines()
    summary = None
    blocks = []  # (first line, [frame lines])
    for line in lines:
        m = re.match(r"^========= ERROR SUMMARY: (\d+) error", line)
        if m:
            summary = int(m.group(1))
            continue
        if re.match(r"^========= \S", line) and not line.startswith("========= COMPUTE-SANITIZER"):
            if re.match(r"^========= (LEAK SUMMARY|RACECHECK SUMMARY|Target application)", line):
                continue
            blocks.append((line, []))
        elif line.startswith("=========     ") and blocks:
            blocks[-1][1].append(line)
    if summary is None:
        return False, f"{path}: no ERROR SUMMARY line (did compute-sanitizer run?)"
    nccl = sum(
        1
        for head, frames in blocks
        if "on CUDA API call" in head and any("libnccl" in f for f in frames)
    )
    others = summary - nccl
    ok = others <= 0
    return ok, (
        f"{path}: ERROR SUMMARY {summary} errors, {nccl} inside NCCL's own kernel probes, "
        f"{max(others, 0)} others: {'OK' if ok else 'FAIL'}"
    )


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    ok, line = verdict(sys.argv[1])
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

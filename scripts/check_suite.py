#!/usr/bin/python3
"""Checks that a build holds every part the README promises, and that a test run skipped
nothing but GPU tests. Used by scripts/test.sh (and so by CI) and scripts/fresh_check.sh.

  check_suite.py parts BUILD_DIR           the commands exist; every promised label has tests
  check_suite.py skips BUILD_DIR JUNIT     no test was skipped unless it carries label gpu

Exit 0 when all holds, 1 with one line per problem otherwise.
"""
import glob
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

# The commands (and the Python module) the README promises, relative to the build
# directory; a pattern names a file whose exact name the build chooses (the extension's ABI tag).
PARTS = {
    "hvdsim": "simulator/hvdsim",
    "hvdbench": "bench/hvdbench/hvdbench",
    "hvdrun": "bench/hvdbench/hvdrun",
    "hvdview": "gui/hvdview",
    "python hvd": "python/hvd/_core*.so",
}
# Test labels the README's test command must run (GPU labels may be absent without CUDA).
LABELS = ["unit", "mpi", "tcp", "sim", "bench", "gui", "validation", "python", "elastic"]
# The only tests allowed to skip: they need a GPU this machine may not have.
MAY_SKIP_LABEL = "gpu"


def tests_and_labels(build):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    tests = {}
    for t in json.loads(out).get("tests", []):
        labels = []
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                labels = p.get("value", [])
        tests[t["name"]] = labels
    return tests


def check_parts(build):
    problems = []
    for name, rel in PARTS.items():
        path = os.path.join(build, rel)
        found = sorted(glob.glob(path)) if any(ch in rel for ch in "*?[") else [path]
        if not any(os.path.isfile(p) and (p.endswith(".so") or os.access(p, os.X_OK)) for p in found):
            problems.append(f"part missing: {name} ({path} was not built)")
    tests = tests_and_labels(build)
    counts = {l: sum(1 for ls in tests.values() if l in ls) for l in LABELS}
    for label, n in counts.items():
        if n == 0:
            problems.append(f"label missing: no test carries label '{label}'")
    print("check_suite: parts " + ", ".join(PARTS) + "; " + str(len(tests)) + " tests; labels " +
          ", ".join(f"{l} {n}" for l, n in counts.items()))
    return problems


def check_skips(build, junit):
    tests = tests_and_labels(build)
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as e:
        return [f"cannot read the test results {junit}: {e}"]
    problems, run, skipped = [], 0, []
    for case in root.iter("testcase"):
        run += 1
        if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            name = case.get("name")
            skipped.append(name)
            if MAY_SKIP_LABEL not in tests.get(name, []):
                problems.append(f"skipped without a GPU label: {name}")
    print(f"check_suite: {run} tests run, {len(skipped)} skipped "
          f"({len(skipped) - len(problems)} need a GPU)")
    return problems


def main(argv):
    if len(argv) >= 3 and argv[1] == "parts":
        problems = check_parts(argv[2])
    elif len(argv) >= 4 and argv[1] == "skips":
        problems = check_skips(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in problems:
        print("check_suite: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Bad launches get one clear line (label python): hvdrun with a bad --hostfile (exit 2), a
command that cannot be run (exit 127, as a shell, under MPI and --tcp, at np 1 and 2), and
hvd.init() with an HVD_CONTROLLER it does not know (HvdError naming the allowed values).
hvdrun's path is $HVDRUN, the python $HVD_PYTHON, the package in $HVD_PYTHONPATH."""
import os
import subprocess
import sys
import tempfile

from verdict import verdict


def run(args, env=None):
    p = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    out = (p.stdout + p.stderr).strip()
    print(f"{' '.join(args)} -> {out!r} (exit {p.returncode})", flush=True)
    return p.returncode, out


def expect_line(problems, args, code, want, prefix=False, env=None):
    rc, out = run(args, env)
    ok = out.startswith(want) and "\n" not in out if prefix else out == want
    if rc != code or not ok:
        problems.append(f"{args}: want exit {code} and the one line {want!r}{'...' if prefix else ''}")


def hostfile_checks(tmp, hvdrun, problems):
    def hostfile(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    bad = hostfile("bad", "# comment\nlocalhost slots=abc\n")
    expect_line(problems, [hvdrun, "-np", "2", "--hostfile", bad, "true"], 2,
                f"hvdrun: --hostfile {bad}:2: bad slot count in 'slots=abc' (slots=N, N >= 1)")
    zero = hostfile("zero", "localhost slots=0\n")
    expect_line(problems, [hvdrun, "-np", "1", "--hostfile", zero, "true"], 2,
                f"hvdrun: --hostfile {zero}:1: bad slot count in 'slots=0' (slots=N, N >= 1)")
    empty = hostfile("empty", "\n# no hosts\n")
    expect_line(problems, [hvdrun, "-np", "2", "--hostfile", empty, "true"], 2,
                f"hvdrun: --hostfile {empty} names no hosts")
    nores = hostfile("nores", "nosuchhost.invalid slots=2\n")
    expect_line(problems, [hvdrun, "-np", "2", "--hostfile", nores, "true"], 2,
                "hvdrun: --hostfile: host 'nosuchhost.invalid' does not resolve (", prefix=True)
    few = hostfile("few", "localhost slots=1\n")
    expect_line(problems, [hvdrun, "-np", "2", "--hostfile", few, "true"], 2,
                f"hvdrun: -np 2 is more than the 1 slots of --hostfile {few}")
    # A good hostfile (comments, max_slots) still runs.
    good = hostfile("good", "localhost slots=2 max_slots=2  # this host\n")
    rc, out = run([hvdrun, "-np", "2", "--hostfile", good, "true"])
    if rc != 0:
        problems.append(f"a good hostfile was refused: exit {rc}: {out[:300]!r}")


def command_checks(hvdrun, problems):
    for flags in ([], ["--tcp"]):
        for np in ("1", "2"):
            expect_line(problems, [hvdrun] + flags + ["-np", np, "/nonexistent/cmd", "x"], 127,
                        "hvdrun: cannot run '/nonexistent/cmd': No such file or directory")
            expect_line(problems, [hvdrun] + flags + ["-np", np, "hvd-no-such-command"], 127,
                        "hvdrun: cannot run 'hvd-no-such-command': command not found")
    rc, out = run([hvdrun, "--help"])
    if rc != 0 or "127 when CMD cannot be run" not in out:
        problems.append("hvdrun --help does not give 127 as the code of a command that cannot be run")


def controller_checks(problems):
    python = os.environ.get("HVD_PYTHON", "/usr/bin/python3")
    code = "import hvd.torch as hvd\ntry:\n    hvd.init()\nexcept hvd.HvdError as e:\n    print(e)\n"
    base = {k: v for k, v in os.environ.items() if k not in ("HVD_CONTROLLER", "HOROVOD_CONTROLLER")}
    base["PYTHONPATH"] = os.environ.get("HVD_PYTHONPATH", "")
    for var in ("HVD_CONTROLLER", "HOROVOD_CONTROLLER"):
        expect_line(problems, [python, "-c", code], 0,
                    f"InvalidArgument: {var}='bogus' is not one of mpi, tcp, gloo", env=dict(base, **{var: "bogus"}))
    rc, out = run([python, "-c", "import hvd.torch as hvd; hvd.init(); print(hvd.size(), hvd.mpi_enabled())"],
                  env=dict(base, HVD_CONTROLLER="mpi"))
    if rc != 0 or out.splitlines()[-1:] != ["1 True"]:
        problems.append(f"HVD_CONTROLLER=mpi: exit {rc}, {out[-300:]!r}")


def main():
    tmp = tempfile.mkdtemp(prefix="hvd_launch_")
    hvdrun, problems = os.environ["HVDRUN"], []
    hostfile_checks(tmp, hvdrun, problems)
    command_checks(hvdrun, problems)
    controller_checks(problems)
    return verdict(problems, tmp)


if __name__ == "__main__":
    sys.exit(main())

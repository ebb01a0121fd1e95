#!/usr/bin/env bash
# Usage: run_tcp_hosts.sh HVDRUN PROG: hvdrun --tcp -np 4 -H localhost:2,127.0.0.1:2 PROG,
# the 127.0.0.1 ranks started through a fake ssh (tests/mpi/fake_ssh.sh). Passes when the
# job exits 0 and ssh was asked for exactly the two remote ranks.
set -u
hvdrun=$1; prog=$2
log=$(mktemp); trap 'rm -f "$log"' EXIT
export FAKE_SSH_LOG=$log HVDRUN_SSH="$(dirname "$0")/fake_ssh.sh -o BatchMode=yes"
out=$("$hvdrun" --tcp -np 4 -H localhost:2,127.0.0.1:2 "$prog" 2>&1); rc=$?
echo "$out" | tail -30
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
[ "$(cat "$log")" = "$(printf '127.0.0.1\n127.0.0.1')" ] || { echo "FAIL: ssh log: $(cat "$log")"; exit 1; }
echo PASS

#!/bin/sh
# A stand-in for ssh in the hvdrun --tcp multi-host tests (no ssh server on CI): skips
# ssh's options, logs the host to $FAKE_SSH_LOG, and runs the command line here.
while [ "$#" -gt 0 ]; do
  case "$1" in
    -o|-p|-i|-l) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host=$1; shift
[ -n "${FAKE_SSH_LOG:-}" ] && echo "$host" >> "$FAKE_SSH_LOG"
exec sh -c "$*"

#!/usr/bin/env python3
"""Where one rank's time goes, call by call, from an hvd timeline recorded with cycle marks
(hvdbench --timeline-filename F --timeline-mark-cycles, or HVD_TIMELINE with
HVD_TIMELINE_MARK_CYCLES=1): for each operation of one name, the time from its enqueue to
the start of the cycle that took it (a wake-up or hand-off), from the cycle's start to the
start of its execution (negotiation: the cache-bit round, and with the eager path the data
on it), its execution, and from the end of its execution to the next operation's enqueue
(completion, the handle's wait returning, the caller's own loop). Prints medians in us.

  scripts/timeline_phases.py TIMELINE.json [--name hvdbench.allreduce.64] [--skip 100]
"""
import argparse
import bisect
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("timeline")
    ap.add_argument("--name", default="", help="the tensor (default: the most frequent)")
    ap.add_argument("--skip", type=int, default=100, help="calls left out at the start (warm-up)")
    args = ap.parse_args()
    try:
        with open(args.timeline) as f:
            events = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"timeline_phases: cannot read {args.timeline}: {e}")
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    cycles = sorted(e["ts"] for e in events if e.get("name") == "CYCLE_START")
    if not cycles:
        sys.exit("timeline_phases: no CYCLE_START marks (record with --timeline-mark-cycles)")
    execs = [e for e in events if e.get("ph") == "X" and e.get("cat") == "communication" and "names" in e.get("args", {})]
    negs = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "negotiation":
            negs.setdefault(e["ts"] + e["dur"], e)
    names = {}
    for e in execs:
        names[e["args"]["names"]] = names.get(e["args"]["names"], 0) + 1
    name = args.name or max(names, key=names.get)
    calls = sorted((e for e in execs if e["args"]["names"] == name), key=lambda e: e["ts"])[args.skip:]
    # Each negotiation event ends where its operation's execution starts.
    neg_list = sorted(negs.values(), key=lambda x: x["ts"] + x["dur"])
    neg_ends = [x["ts"] + x["dur"] for x in neg_list]

    def negotiation_before(t):
        i = bisect.bisect_right(neg_ends, t + 0.01) - 1
        return neg_list[i] if i >= 0 else None

    rows = []
    for a, b in zip(calls, calls[1:]):
        start = a["ts"]
        neg, nxt = negotiation_before(start), negotiation_before(b["ts"])
        if neg is None or nxt is None:
            continue
        enq = neg["ts"]
        i = bisect.bisect_right(cycles, start) - 1
        if i < 0:
            continue
        cyc = max(cycles[i], enq)
        rows.append((cyc - enq, start - cyc, a["dur"], nxt["ts"] - (a["ts"] + a["dur"]), nxt["ts"] - enq))
    if not rows:
        sys.exit("timeline_phases: no complete calls of " + name)
    med = [statistics.median(c) for c in zip(*rows)]
    print(f"{name}: {len(rows)} calls, {calls[0]['args'].get('algorithm', '?')}; medians in us")
    print("| enqueue -> cycle start | cycle start -> execution (negotiation) | execution | completion -> next enqueue | enqueue to enqueue |")
    print("|---:|---:|---:|---:|---:|")
    print("| " + " | ".join(f"{m:.2f}" for m in med) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""CPU seconds a server's processes spend during one pgbench run, by role.

    python3 bench/lib/cpusplit.py POSTMASTER_PID READY_FILE

Samples the postmaster's children every 0.2 s until it gets SIGTERM, then prints one line,
"clients,workers,other": the CPU seconds (user + system) of the client backends (those with a
client address in their title: "[local]" or a host), of pm_index's replay workers ("pm_index
tier replay") and of the rest (WAL writer, checkpointer, ...) since the first sample, after
which it creates READY_FILE (start the measured work then). A process that exits between
samples loses at most 0.2 s of its CPU. Standard library only; Linux /proc.
"""

import os
import signal
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")
INTERVAL = 0.2


def role(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            title = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    if "pm_index tier replay" in title:
        return "workers"
    if "[local]" in title or "(" in title:  # "[local]" or "host(port)"
        return "clients"
    return "other"


def cpu_ticks(pid):
    """utime + stime, or None if the process is gone"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is the state (field 3 of stat); utime and stime are fields 14 and 15
    return int(fields[11]) + int(fields[12]), int(fields[1])


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit():
        sys.exit("usage: cpusplit.py POSTMASTER_PID READY_FILE")
    postmaster = int(sys.argv[1])
    first = {}  # pid -> ticks at the first sample (0 for a process born after it)
    last = {}  # pid -> (ticks, role) at the last sample
    started = False
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    while True:
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            sample = cpu_ticks(pid)
            if sample is None or sample[1] != postmaster:
                continue
            r = role(pid)
            if r is None:
                continue
            first.setdefault(pid, sample[0] if not started else 0)
            last[pid] = (sample[0], r)
        if not started:
            open(sys.argv[2], "w").close()
            started = True
        if stop:
            break
        time.sleep(INTERVAL)
    totals = {"clients": 0, "workers": 0, "other": 0}
    for pid, (ticks, r) in last.items():
        totals[r] += ticks - first[pid]
    print(",".join(f"{totals[r] / TICKS:.2f}" for r in ("clients", "workers", "other")))


if __name__ == "__main__":
    main()

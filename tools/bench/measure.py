#!/usr/bin/python3
"""Run a command N times; print the best wall time and the peak RSS.

Usage: measure.py LABEL N [--before SHELL_CMD] -- CMD...
(prints "LABEL  <seconds>  <peak MB>"). --before runs, untimed, before
every run: e.g. removing the output folder, so that every run writes a
fresh one (replacing files costs a filesystem flush per file, and a
command measured against another must meet the same disk state).
Peak RSS comes from wait4(2) of that very child, so runs do not mix.
"""
import os
import subprocess
import sys
import time


def run_once(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("command failed: %s" % " ".join(cmd))
    return dt, ru.ru_maxrss / 1024.0


def main():
    label, n = sys.argv[1], int(sys.argv[2])
    dashes = sys.argv.index("--")
    before = None
    if "--before" in sys.argv[3:dashes]:
        before = sys.argv[sys.argv.index("--before") + 1]
    cmd = sys.argv[dashes + 1:]
    best_t, peak = None, 0.0
    for _ in range(n):
        if before:
            subprocess.run(before, shell=True, check=True)
        t, rss = run_once(cmd)
        best_t = t if best_t is None else min(best_t, t)
        peak = max(peak, rss)
    print("%-44s %8.4f s %9.1f MB" % (label, best_t, peak), flush=True)


if __name__ == "__main__":
    main()

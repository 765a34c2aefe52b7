#!/usr/bin/python3
"""Run a command N times; print the best wall time and the peak RSS.

Usage: measure.py LABEL N [--before SHELL_CMD] -- CMD...
(prints "LABEL  <seconds>  <peak MB>"). --before runs, untimed, before
every run: e.g. removing the output folder, so that every run writes a
fresh one (replacing files costs a filesystem flush per file, and a
command measured against another must meet the same disk state).
Peak RSS is that very child's: /usr/bin/time's %M (Debian's package
`time`), which forks from a process of about 1 MB. wait4(2) of a child of
this script, the fallback without it, also counts the pages the child
shared with Python before its exec: no figure under about 10 MB.
"""
import os
import subprocess
import sys
import tempfile
import time

GNU_TIME = "/usr/bin/time"


def run_once(cmd):
    """(seconds, peak MB); peak is None when only the floored wait4 figure
    is to be had (see the module's note)."""
    use_time = os.access(GNU_TIME, os.X_OK)
    rss_file = tempfile.NamedTemporaryFile(prefix="measure_", delete=False) if use_time else None
    full = [GNU_TIME, "-f", "%M", "-o", rss_file.name] + cmd if use_time else cmd
    t0 = time.perf_counter()
    p = subprocess.Popen(full, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("command failed: %s" % " ".join(cmd))
    if not use_time:
        return dt, ru.ru_maxrss / 1024.0
    with open(rss_file.name) as f:
        kb = int(f.read().split()[-1])
    os.unlink(rss_file.name)
    return dt, kb / 1024.0


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

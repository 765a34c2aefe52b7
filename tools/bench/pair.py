#!/usr/bin/python3
"""Time two commands in alternation (A B A B ...), N runs each; print the
best wall time and peak RSS of each as measure.py does, one line each.

Usage: pair.py LABEL_A LABEL_B N [--before SHELL_CMD] -- CMD_A... -- CMD_B...

Two figures to be divided are measured this way: a spell of this VM
running slow then hits both instead of spoiling the N runs of one
(measured one after the other, a slow spell once made -j 2 look 1.2x
faster than -j 1 instead of 1.9x). --before runs, untimed, before every
run of either command. Not a test.
"""
import sys

from measure import run_once
import subprocess


def main():
    la, lb, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    first = sys.argv.index("--")
    second = sys.argv.index("--", first + 1)
    opts = sys.argv[4:first]
    before = opts[opts.index("--before") + 1] if "--before" in opts else None
    cmds = [sys.argv[first + 1:second], sys.argv[second + 1:]]
    best = [None, None]
    peak = [0.0, 0.0]
    for r in range(n):
        for k in ((0, 1) if r % 2 == 0 else (1, 0)):
            if before:
                subprocess.run(before, shell=True, check=True)
            t, rss = run_once(cmds[k])
            best[k] = t if best[k] is None else min(best[k], t)
            peak[k] = max(peak[k], rss)
    for label, t, m in ((la, best[0], peak[0]), (lb, best[1], peak[1])):
        print("%-44s %8.4f s %9.1f MB" % (label, t, m), flush=True)


if __name__ == "__main__":
    main()

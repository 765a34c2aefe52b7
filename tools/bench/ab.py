#!/usr/bin/python3
"""Paired A/B timing of two shell commands, for telling two builds apart on
a noisy machine: the runs alternate (A B, B A, ...) so that drift hits both,
and the median of the per-pair differences is what to read.

Usage: ab.py N 'COMMAND A' 'COMMAND B'
Prints min and median wall time of each, and the median of A - B with the
share of pairs where A was slower. Not a test.
"""
import statistics
import subprocess
import sys
import time


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit("command failed (%d): %s" % (p.returncode, cmd))
    return (time.perf_counter() - t0) * 1e3


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    n, a_cmd, b_cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    a, b = [], []
    for i in range(n):
        if i % 2:
            b.append(run(b_cmd))
            a.append(run(a_cmd))
        else:
            a.append(run(a_cmd))
            b.append(run(b_cmd))
    for label, xs in (("A", a), ("B", b)):
        print("%s  min %8.1f ms  median %8.1f ms" % (label, min(xs), statistics.median(xs)))
    d = [x - y for x, y in zip(a, b)]
    print("A - B  median %+.1f ms; A slower in %d of %d pairs" %
          (statistics.median(d), sum(1 for x in d if x > 0), n))


if __name__ == "__main__":
    main()

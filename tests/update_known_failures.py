#!/usr/bin/python3
"""Refresh tests/backend_known_failures.txt from a backend run.

    build/tests/sg_backend /usr/share/libonnx-testdata/data \\
        node pytorch-converted pytorch-operator simple > /tmp/backend.txt
    tests/update_known_failures.py /tmp/backend.txt

Tests that pass lose their line, min_pass becomes each folder's pass count,
still-failing tests keep their written reason, and a new failure whose
message says a kernel is missing gets "no kernel yet for OP". Any other new
failure has no honest reason yet: the script lists it and changes nothing,
so write its reason by hand (or fix it) first.

    tests/update_known_failures.py RUN.txt --list tests/modern/known_failures.txt

refreshes another list the same way (the generated corpus of ctest
`modern_corpus`), with min_pass for every folder the run covers.
"""
import os
import re
import sys

LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "backend_known_failures.txt")
FOLDERS = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def main():
    global LIST, FOLDERS
    args = sys.argv[1:]
    if len(args) == 3 and args[1] == "--list":
        LIST, FOLDERS = args[2], None
    run = open(args[0]).read().splitlines()
    header, old = [], {}
    for line in open(LIST).read().splitlines():
        if line.startswith("#"):
            header.append(line)
        elif line.strip() and not line.startswith("min_pass "):
            name, _, reason = line.partition(" ")
            old[name] = reason.strip()
    counts, failing, unclassified = {}, [], []
    for line in run:
        m = re.match(r"^(\S+): (\d+) passed, \d+ failed, \d+ skipped$", line)
        if m:
            counts[m.group(1)] = int(m.group(2))
        if not line.startswith("FAIL "):
            continue
        name = line[5:].split(":")[0].split(" ")[0]
        if name in old:
            failing.append((name, old[name]))
            continue
        k = re.search(r"no kernel for ([A-Za-z0-9_]+) in domain", line)
        if k:
            failing.append((name, "no kernel yet for " + k.group(1)))
        else:
            unclassified.append(line)
    if unclassified:
        print("new failures without a known reason (write one by hand):")
        print("\n".join(unclassified))
        return 1
    if FOLDERS is None:
        FOLDERS = list(counts)
    missing = [f for f in FOLDERS if f not in counts]
    if missing:
        print("the run does not cover %s" % ", ".join(missing))
        return 1
    with open(LIST, "w") as f:
        f.write("\n".join(header) + "\n")
        for folder in FOLDERS:
            f.write("min_pass %s %d\n" % (folder, counts[folder]))
        for name, reason in failing:
            f.write("%s %s\n" % (name, reason))
    print("%d known failures; min_pass %s" %
          (len(failing), ", ".join("%s %d" % (f, counts[f]) for f in FOLDERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The operator arity table (graph/op_schemas.inc, made from an ONNX
release's changelogs by tools/gen_op_schemas.py) against Debian's
python3-onnx: every operator version the installed onnx knows must be in the
table with the same input and output counts. Versions newer than the
installed onnx are only in the table. Usage: op_schemas_test.py TABLE.inc
"""
import re
import sys

from onnx import defs

INF = 2147483647
ROW = re.compile(r'^SG_OP_SCHEMA\("([^"]*)", "([^"]+)", (\d+), (-?\d+), (-?\d+), (-?\d+), (-?\d+)\)$')


def main():
    table = {}
    for line in open(sys.argv[1]):
        m = ROW.match(line.strip())
        if m:
            table[(m.group(1), m.group(2), int(m.group(3)))] = tuple(int(x) for x in m.groups()[3:])
    bad = 0
    n = 0
    for s in defs.get_all_schemas_with_history():
        if s.domain not in ("", "ai.onnx.ml", "ai.onnx.preview.training"):
            continue
        n += 1
        want = (s.min_input, -1 if s.max_input >= INF else s.max_input,
                s.min_output, -1 if s.max_output >= INF else s.max_output)
        got = table.get((s.domain, s.name, s.since_version))
        if got != want:
            print("FAIL %s %s-%d: table %s, onnx %s" % (s.domain or "ai.onnx", s.name,
                                                         s.since_version, got, want))
            bad += 1
    print("%d operator versions of python3-onnx checked, %d in the table, %d differ" %
          (n, len(table), bad))
    if n == 0 or len(table) < n:
        print("FAIL the table is smaller than python3-onnx's")
        bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Check the `inputs` pattern of every kernel entry against ONNX's schemas.

Run: kernel_inputs_test.py SG_KERNEL_TABLE (tests/kernel_table_tool.c).

The executor refuses, before anything runs, a node whose inputs do not fit
its kernel entry's pattern (runtime/sg_kernel.h, "Inputs"), and kernels rely
on it. So the pattern of an ai.onnx entry must be the ONNX schema's formal
inputs at every version the entry serves (from its since_version to the
next entry of the op): 'r' for a single input, 'o' for an optional one,
and for a variadic one a letter followed by '+' when ONNX asks for at least
one, '*' otherwise (the letter is the kernel's: 'o' where it skips empty
names, as Sum does). Versions past what python3-onnx knows are checked,
given OP_SCHEMAS (graph/op_schemas.inc, from a newer ONNX release's
changelog), for their input counts: the least and most inputs the pattern
takes must be the table's for every version the entry serves up to the
table's newest opset (an old entry too, for the newer versions it serves) (a version the table states nothing for, as a
deprecated one, is left out); without it they are listed as not checked.
Entries of one op version must agree with each other (the planner checks
with whichever it finds first). Every pattern must be well formed.

Run: kernel_inputs_test.py SG_KERNEL_TABLE [OP_SCHEMAS]
"""
import re
import subprocess
import sys

from onnx import defs

FP = defs.OpSchema.FormalParameterOption


def onnx_pattern(op, version):
    """(pattern, variadic letter position or None) of op at `version`, or None."""
    try:
        s = defs.get_schema(op, version, "")
    except Exception:  # unknown op or version
        return None
    out = ""
    for i, p in enumerate(s.inputs):
        if p.option == FP.Single:
            out += "r"
        elif p.option == FP.Optional:
            out += "o"
        else:
            # min_input counts the variadic parameter's mandatory entries
            out += "?" + ("+" if s.min_input > i else "*")
    return out


def matches(ours, theirs):
    if len(ours) != len(theirs):
        return False
    return all(t == "?" and o in "ro" or o == t for o, t in zip(ours, theirs))


def pattern_counts(pat):
    """(least, most) inputs a pattern takes; most -1: unbounded."""
    if pat.endswith("+") or pat.endswith("*"):
        body = pat[:-1]
        least = len(body) if pat.endswith("+") else len(body) - 1
        return least, -1
    return (pat.rfind("r") + 1), len(pat)


def read_table(path):
    """{op: {since: (min_in, max_in)}} of the default domain, and its newest
    opset."""
    table, newest = {}, 0
    for line in open(path):
        m = re.match(r'SG_OP_DOMAIN\("", (\d+)\)', line)
        if m:
            newest = int(m.group(1))
        m = re.match(r'SG_OP_SCHEMA\("", "(\w+)", (\d+), (-?\d+), (-?\d+)', line)
        if m:
            table.setdefault(m.group(1), {})[int(m.group(2))] = (int(m.group(3)), int(m.group(4)))
    return table, newest


def check_table(op, since, last, pat, table, failures, first=None):
    """Input counts of the entry against every table version it serves
    (only those from `first` on, when given: the older ones python3-onnx
    checked)."""
    versions = table.get(op)
    if not versions:
        if first is None:
            failures.append("%s v%d: graph/op_schemas.inc has no such op" % (op, since))
        return 0
    served = [v for v in sorted(versions) if max(since, first or 0) <= v <= last]
    older = [v for v in sorted(versions) if v < since]
    if first is None and since not in versions and older:
        served.insert(0, older[-1])  # the version in force at `since`
    n = 0
    for v in served:
        lo, hi = versions[v]
        if (lo, hi) == (0, -1):  # nothing stated (deprecated)
            continue
        n += 1
        if pattern_counts(pat) != (lo, hi):
            failures.append("%s v%d entry '%s' takes %s inputs; ONNX %s-%d takes %s" % (
                op, since, pat, "%d..%s" % (pattern_counts(pat)[0], pattern_counts(pat)[1]),
                op, v, "%d..%d" % (lo, hi)))
    return n


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    table, table_newest = read_table(sys.argv[2]) if len(sys.argv) == 3 else ({}, 0)
    rows = []
    for line in subprocess.run([sys.argv[1]], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        fam, dom, op, since, _ti, _types, _flags, pat = line.split("\t")
        rows.append((fam, dom, op, int(since), pat))
    newest = defs.onnx_opset_version()
    failures, checked, unchecked, table_checked = [], 0, [], 0
    by_op = {}
    for fam, dom, op, since, pat in rows:
        if not re.fullmatch(r"[ro]*|[ro]+[+*]", pat):
            failures.append("%s %s v%d (%s.c): malformed pattern '%s'" % (dom, op, since, fam, pat))
        by_op.setdefault((dom, op), {}).setdefault(since, set()).add(pat)
    for (dom, op), versions in sorted(by_op.items()):
        sinces = sorted(versions)
        for since, pats in versions.items():
            if len(pats) > 1:
                failures.append("%s %s v%d: entries disagree: %s" % (dom, op, since, sorted(pats)))
        if dom != "ai.onnx":
            continue
        for i, since in enumerate(sinces):
            pat = sorted(versions[since])[0]
            last = sinces[i + 1] - 1 if i + 1 < len(sinces) else newest
            if since > newest:
                if table:
                    tlast = sinces[i + 1] - 1 if i + 1 < len(sinces) else table_newest
                    table_checked += check_table(op, since, tlast, pat, table, failures)
                else:
                    unchecked.append("%s v%d" % (op, since))
                continue
            if table:  # the newer versions this entry serves
                tlast = sinces[i + 1] - 1 if i + 1 < len(sinces) else table_newest
                table_checked += check_table(op, since, tlast, pat, table, failures, newest + 1)
            seen = set()
            for v in range(since, last + 1):
                theirs = onnx_pattern(op, v)
                if theirs is None:
                    if v == since:
                        failures.append("%s v%d: python3-onnx has no such schema" % (op, since))
                    continue
                sv = defs.get_schema(op, v, "").since_version
                if sv in seen:
                    continue
                seen.add(sv)
                checked += 1
                if not matches(pat, theirs):
                    failures.append("%s v%d entry '%s' serves ONNX %s-%d, whose inputs are '%s'"
                                    % (op, since, pat, op, sv, theirs.replace("?", "r|o")))
    print("%d entries, %d ONNX op versions checked against python3-onnx (opsets to %d)"
          % (len(rows), checked, newest))
    if table:
        print("%d newer op versions checked for input counts against %s (opsets to %d)"
              % (table_checked, sys.argv[2], table_newest))
    if unchecked:
        print("not checked (newer than python3-onnx knows): " + ", ".join(unchecked))
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

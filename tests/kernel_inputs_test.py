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
names, as Sum does). Versions past what python3-onnx knows are listed as
not checked. Entries of one op version must agree with each other (the
planner checks with whichever it finds first). Every pattern must be well
formed.
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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = []
    for line in subprocess.run([sys.argv[1]], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        fam, dom, op, since, _ti, _types, _flags, pat = line.split("\t")
        rows.append((fam, dom, op, int(since), pat))
    newest = defs.onnx_opset_version()
    failures, checked, unchecked = [], 0, []
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
                unchecked.append("%s v%d" % (op, since))
                continue
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
    if unchecked:
        print("not checked (newer than python3-onnx knows): " + ", ".join(unchecked))
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

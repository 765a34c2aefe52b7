#!/bin/bash
# Reading ATC's side files must be linear in their length: times
# `keep-dtype --check` (keep_dtype and customize_dtypes) and `fusion-switch
# --check` on 10,000- and 100,000-line files, the two sizes in alternation
# (tools/bench/pair.py), and prints the 100k/10k ratio of each: about 10
# when linear (less: process start), 100 when quadratic (the reader before issue 13 took 5
# minutes on 100,000 keep_dtype lines in the sanitized build).
# Usage: tools/bench/bench_readers.sh [BUILD_DIR] [WORKDIR]   (not a test)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
work=${2:-$(mktemp -d)}
surgeon=$(cd "$build" && pwd)/surgeon
mkdir -p "$work"
cd "$work"
/usr/bin/python3 - <<'PY'
for n in (10000, 100000):
    open("keep%d.cfg" % n, "w").writelines("Node_%d\n" % i for i in range(n))
    open("cust%d.cfg" % n, "w").writelines("N%d::InputDtype:float32\n" % i for i in range(n))
    open("sw%d.cfg" % n, "w").writelines("Pass%d:off\n" % i for i in range(n))
PY
ratio() {
    local label=$1
    shift
    local out
    out=$(/usr/bin/python3 "$here/pair.py" "$label-10k" "$label-100k" 5 -- \
        sh -c "$1 2>/dev/null" -- sh -c "$2 2>/dev/null")
    echo "$out"
    echo "$out" | awk -v l="$label" '{t[NR]=$2} END {printf "%s: 100k/10k = %.1f\n", l, t[2]/t[1]}'
}
ratio keep_dtype "$surgeon keep-dtype --check keep10000.cfg" "$surgeon keep-dtype --check keep100000.cfg"
ratio customize "$surgeon keep-dtype --format customize --check cust10000.cfg" \
    "$surgeon keep-dtype --format customize --check cust100000.cfg"
ratio switch "$surgeon fusion-switch --check sw10000.cfg" "$surgeon fusion-switch --check sw100000.cfg"

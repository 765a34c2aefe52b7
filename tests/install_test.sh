#!/bin/bash
# `cmake --install` puts the library, headers, CLI and surgeon.pc in place,
# and a program built with `pkg-config surgeon` links and loads a model.
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/surgeon include/surgeon/sg_ir.h include/surgeon/sg_io.h lib/libsurgeon.a; do
    [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
pc=$(find "$prefix" -name surgeon.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: surgeon.pc not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
cat > "$prefix/use.c" <<'C'
#include <sg_io.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    struct sg_diag d = {0};
    sg_model *m = NULL;
    if (argc < 2 || sg_model_load(argv[1], NULL, &m, &d)) {
        fprintf(stderr, "%s\n", d.msg);
        return 1;
    }
    printf("%u nodes\n", m->graph->n_nodes);
    sg_model_free(m);
    return 0;
}
C
# The test build's library carries sanitizer instrumentation; link the
# program the same way when it does.
flags=""
if nm -A "$prefix"/lib*/libsurgeon.a 2>/dev/null | grep __asan_ >/dev/null; then
    flags="-fsanitize=address,undefined"
fi
cc $flags -o "$prefix/use" "$prefix/use.c" $(pkg-config --cflags --libs surgeon)
export LD_LIBRARY_PATH=$(pkg-config --variable=libdir surgeon)
out=$("$prefix/use" "$src/models/exp_overflow.onnx")
[ "$out" = "10 nodes" ] || { echo "FAIL: program printed '$out'"; exit 1; }
"$prefix/bin/surgeon" --version >/dev/null
echo "ok: installed and linked through pkg-config ($out)"

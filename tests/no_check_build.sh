#!/bin/bash
# no_check_build.sh SRC WORK - README's first command on a machine without
# the test packages: a plain configure (as tools/demo.sh does it) and build
# of SRC in WORK with every file of the packages that only the tests need
# (`tools/install-deps.sh --print --test` less `--print`) made invisible:
#   - their pkg-config modules (check.pc): PKG_CONFIG_LIBDIR is a folder of
#     links to every other module of the search path;
#   - their headers (check.h): a folder given with -isystem, searched before
#     /usr/include, holds an #error file of the same name;
#   - their programs (clang-format, chromium, checkmk): a folder first on
#     PATH holds a program of the same name that fails.
# Then the configure must say the tests are off, the build must make the
# CLI and no test runner, the demo loop must pass with that CLI, and
# -DSG_BUILD_TESTS=ON must stop at configure time naming Check.
set -uo pipefail
src=$(cd "$1" && pwd)
work=$2
rm -rf "$work"
mkdir -p "$work/pc" "$work/include" "$work/bin"

fail() {
    echo "FAIL: $*"
    exit 1
}

mapfile -t build_pkgs < <(bash "$src/tools/install-deps.sh" --print)
mapfile -t all_pkgs < <(bash "$src/tools/install-deps.sh" --print --test)
hidden_pkgs=()
for p in "${all_pkgs[@]}"; do
    [[ " ${build_pkgs[*]} " == *" $p "* ]] || hidden_pkgs+=("$p")
done

hidden_pc=" "
n_hidden=0
for p in "${hidden_pkgs[@]}"; do
    if ! files=$(dpkg -L "$p" 2>/dev/null); then
        echo "note: $p is not installed here: nothing to hide"
        continue
    fi
    while IFS= read -r f; do
        [ -f "$f" ] || [ -L "$f" ] || continue
        [ -d "$f" ] && continue
        case "$f" in
        */pkgconfig/*.pc)
            hidden_pc+="$(basename "$f") "
            ;;
        /usr/include/*)
            rel=${f#/usr/include/}
            mkdir -p "$work/include/$(dirname "$rel")"
            printf '#error "%s belongs to the test package %s: the build must not need it"\n' \
                "$f" "$p" >"$work/include/$rel"
            ;;
        /usr/bin/* | /usr/sbin/* | /bin/*)
            printf '#!/bin/sh\necho "%s belongs to the test package %s: the build must not need it" >&2\nexit 127\n' \
                "$f" "$p" >"$work/bin/$(basename "$f")"
            chmod +x "$work/bin/$(basename "$f")"
            ;;
        *) continue ;;
        esac
        n_hidden=$((n_hidden + 1))
    done <<<"$files"
done
IFS=: read -r -a pc_dirs <<<"$(pkg-config --variable pc_path pkg-config)"
for d in "${pc_dirs[@]}" ${PKG_CONFIG_PATH:+${PKG_CONFIG_PATH//:/ }}; do
    for f in "$d"/*.pc; do
        [ -e "$f" ] || continue
        b=$(basename "$f")
        [[ "$hidden_pc" == *" $b "* ]] && continue
        [ -e "$work/pc/$b" ] || ln -s "$f" "$work/pc/$b"
    done
done
echo "hiding ${hidden_pkgs[*]}: $n_hidden files (pkg-config modules:${hidden_pc% })"

export PKG_CONFIG_LIBDIR=$work/pc PKG_CONFIG_PATH=
export PATH=$work/bin:$PATH
if pkg-config --exists check; then
    fail "pkg-config still finds check"
fi

# The configure and build of tools/demo.sh, with the headers hidden.
if ! cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="-isystem $work/include" >"$work/configure.log" 2>&1; then
    cat "$work/configure.log"
    fail "configure failed without the test packages"
fi
grep -F "surgeon: tests off" "$work/configure.log" ||
    fail "the configure did not say that the tests are off"
if ! cmake --build "$work/build" -j2 >"$work/build.log" 2>&1; then
    tail -40 "$work/build.log"
    fail "build failed without the test packages"
fi
[ -x "$work/build/surgeon" ] || fail "no surgeon binary"
[ ! -e "$work/build/tests/sg_tests" ] || fail "a test runner was built without Check"
echo "ok: configured and built without ${hidden_pkgs[*]}"

if ! bash "$src/tools/demo_loop.sh" "$work/build/surgeon" "$work/demo" >"$work/demo.log" 2>&1; then
    cat "$work/demo.log"
    fail "the demo failed with the build made without the test packages"
fi
echo "ok: the demo passes with that build"

if cmake -S "$src" -B "$work/build-on" -DSG_BUILD_TESTS=ON >"$work/configure-on.log" 2>&1; then
    fail "-DSG_BUILD_TESTS=ON configured without Check"
fi
grep -q "check" "$work/configure-on.log" ||
    fail "-DSG_BUILD_TESTS=ON failed without naming check: $(tail -5 "$work/configure-on.log")"
echo "ok: -DSG_BUILD_TESTS=ON refuses to configure without Check"
rm -rf "$work/build" "$work/build-on"

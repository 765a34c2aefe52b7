# cli_common.sh - helpers for the CLI end-to-end tests (sourced, not run).
# Each test runs a command, then checks its exit code, its output and the
# files it wrote or must not have written. The script exits non-zero when
# any check failed.

fails=0
checks=0

# enter_work_dir DIR: empty DIR (made if missing), set W to its real path
# and make it the current folder; stops the script if it cannot.
enter_work_dir() {
    rm -rf "$1"
    mkdir -p "$1"
    W=$(realpath "$1")
    cd "$W" || exit 1
}

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# run RC CMD...: run CMD with stdout in ./out and stderr in ./err; expect RC.
run() {
    local want=$1
    shift
    checks=$((checks + 1))
    "$@" >out 2>err
    local rc=$?
    if [ "$rc" != "$want" ]; then
        fail "exit code $rc, want $want: $*"
        sed 's/^/    stdout: /' out
        sed 's/^/    stderr: /' err
    fi
}

# has FILE TEXT: FILE contains TEXT (fixed string).
has() {
    checks=$((checks + 1))
    if ! grep -qF -- "$2" "$1"; then
        fail "$1 does not contain: $2"
        sed "s/^/    $1: /" "$1"
    fi
}

# lacks FILE TEXT: FILE does not contain TEXT.
lacks() {
    checks=$((checks + 1))
    if grep -qF -- "$2" "$1"; then
        fail "$1 contains: $2"
        sed "s/^/    $1: /" "$1"
    fi
}

# same FILE EXPECTED_TEXT: FILE holds exactly EXPECTED_TEXT (printf-expanded by the caller).
same() {
    checks=$((checks + 1))
    if [ ! -f "$1" ]; then
        fail "$1 was not written"
        return
    fi
    if ! printf '%s' "$2" | cmp -s - "$1"; then
        fail "$1 differs from the expected content"
        printf '%s' "$2" | diff -u - "$1" | sed 's/^/    /'
    fi
}

# absent PATH: nothing was written there.
absent() {
    checks=$((checks + 1))
    [ ! -e "$1" ] || fail "$1 was written"
}

finish() {
    echo "$checks checks, $fails failed"
    [ "$fails" = 0 ]
}

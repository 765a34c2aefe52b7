#!/bin/bash
# Install what surgeon needs from Debian's archive, skipping what is there.
# Usage: tools/install-deps.sh [--test] [--nets] [--print]
#   --test adds what the tests need, --nets torch and torchvision (the real
#   networks of tools/export_nets.py; the tests' `nets` check needs them).
#   --print lists the selected packages, one a line, and installs nothing
#   (tests/no_check_build.sh hides the test packages by that list).
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config libprotobuf-c-dev protobuf-c-compiler
            libonnx-dev libyaml-dev zlib1g-dev libopenblas-dev python3-onnx python3-numpy)
test_pkgs=(check libonnx-testdata clang-format chromium)

nets_pkgs=(python3-torch python3-torchvision)

pkgs=("${build_pkgs[@]}")
print=false
for arg in "$@"; do
    case "$arg" in
    --test) pkgs+=("${test_pkgs[@]}") ;;
    --nets) pkgs+=("${nets_pkgs[@]}") ;;
    --print) print=true ;;
    *) echo "usage: $0 [--test] [--nets] [--print]" >&2; exit 2 ;;
    esac
done
if $print; then
    printf '%s\n' "${pkgs[@]}"
    exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

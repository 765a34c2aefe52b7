#!/bin/bash
# Install what surgeon needs from Debian's archive, skipping what is there.
# Usage: tools/install-deps.sh [--test]   (--test adds what the tests need)
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config libprotobuf-c-dev protobuf-c-compiler
            libonnx-dev libyaml-dev libopenblas-dev python3-onnx python3-numpy)
test_pkgs=(check libonnx-testdata clang-format chromium)

pkgs=("${build_pkgs[@]}")
if [ "${1:-}" = "--test" ]; then
    pkgs+=("${test_pkgs[@]}")
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

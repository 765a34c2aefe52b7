#!/bin/bash
# Install python3-torch and python3-torchvision when missing (Debian's
# archive, through install-deps.sh), then export the real networks:
#     tools/export_nets.sh OUTDIR [export_nets.py options]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/install-deps.sh" --nets
exec /usr/bin/python3 "$here/export_nets.py" "$@"

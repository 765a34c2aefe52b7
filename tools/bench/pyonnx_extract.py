#!/usr/bin/python3
"""The python peer of `surgeon extract`: onnx.utils.extract_model.

Usage: pyonnx_extract.py IN OUT INPUTS OUTPUTS (comma-separated names)."""
import sys

import onnx.utils

src, dst, ins, outs = sys.argv[1:5]
onnx.utils.extract_model(src, dst, ins.split(","), outs.split(","), check_model=False)

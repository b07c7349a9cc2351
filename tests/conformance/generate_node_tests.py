"""Generates the ONNX backend node tests (models + test_data_set_*/{input,output}_*.pb)
from the installed onnx package (Debian's python3-onnx 1.12) into OUT_DIR.

usage: /usr/bin/python3 generate_node_tests.py OUT_DIR

onnx 1.12's test generators still use numpy aliases that numpy 1.24 removed;
they are restored (to the builtins they always meant) before onnx is imported.
Writes OUT_DIR/node/<case>/... and, last, OUT_DIR/.complete with the case count.
"""
import builtins
import os
import shutil
import sys
import warnings

import numpy as np

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for alias in ("float", "int", "bool", "object"):
        try:
            getattr(np, alias)
        except AttributeError:
            setattr(np, alias, getattr(builtins, alias))

from onnx.backend.test.cmd_tools import main as onnx_cmd_tools  # noqa: E402


def run(out_dir: str) -> int:
    tmp = out_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    sys.argv = ["onnx.backend.test.cmd_tools", "generate-data", "-o", tmp]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onnx_cmd_tools()
    node_dir = os.path.join(tmp, "node")
    cases = sorted(d for d in os.listdir(node_dir) if os.path.isfile(os.path.join(node_dir, d, "model.onnx")))
    if not cases:
        print(f"generate_node_tests: no node test cases in {node_dir}", file=sys.stderr)
        return 1
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    with open(os.path.join(out_dir, ".complete"), "w") as f:
        f.write(f"{len(cases)}\n")
    print(f"generate_node_tests: {len(cases)} node test cases in {os.path.join(out_dir, 'node')}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: generate_node_tests.py OUT_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(run(os.path.abspath(sys.argv[1])))

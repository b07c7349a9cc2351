#!/usr/bin/env python3
"""Minimal OINF example from the specification: one sizevar and one tensor.

    python3 tools/python/examples/minimal_oinf.py [OUTPUT]   (default: minimal_model.oinf)

Also usable from the CLI, e.g.
    PYTHONPATH=tools/python/examples python3 tools/python/dataclass_to_oinf.py \
        --input minimal_oinf:build_minimal --output minimal_model.oinf
"""

import os
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dataclass_to_oinf import TensorSpec, write_oinf  # noqa: E402


@dataclass
class MinimalModel:
    B: int
    a: TensorSpec


def build_minimal() -> MinimalModel:
    rng = np.random.default_rng(1)
    B = 1024
    a = rng.uniform(-1.0, 1.0, size=B).astype(np.float32)
    return MinimalModel(B=B, a=TensorSpec(a))


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    out = args[0] if args else "minimal_model.oinf"
    write_oinf(build_minimal(), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

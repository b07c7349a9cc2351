#!/usr/bin/env python3
"""Simple OINF example from the specification: sizevars, a string, tensors.

    python3 tools/python/examples/simple_oinf.py [OUTPUT]   (default: simple_model.oinf)

``ExampleModel()`` (every field has a default) equals ``build_example()``, so
the CLI can use either:
    PYTHONPATH=tools/python/examples python3 tools/python/dataclass_to_oinf.py \
        --input simple_oinf:ExampleModel --output simple_model.oinf
"""

import functools
import os
import sys
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dataclass_to_oinf import TensorSpec, UninitializedTensor, write_oinf  # noqa: E402

D_DEFAULT = 128
B_DEFAULT = 1024


@functools.lru_cache(maxsize=None)
def _example_arrays():
    """The spec's random stream (seed 0): a, then W.0, then kernel."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=B_DEFAULT).astype(np.float16)
    w0 = rng.normal(size=D_DEFAULT).astype(np.float32)
    kernel = rng.integers(0, 256, size=(D_DEFAULT, D_DEFAULT), dtype=np.uint8)
    for arr in (a, w0, kernel):
        arr.setflags(write=False)
    return a, w0, kernel


@dataclass
class ExampleModel:
    D: int = D_DEFAULT
    B: int = B_DEFAULT
    a: TensorSpec = field(default_factory=lambda: TensorSpec(_example_arrays()[0]))
    x: TensorSpec = field(default_factory=lambda: TensorSpec(np.array(10.35, dtype=np.float32)))
    W_0: TensorSpec = field(default_factory=lambda: TensorSpec(_example_arrays()[1], name="W.0"))
    mode: str = "clamp_up"
    y: UninitializedTensor = field(default_factory=lambda: UninitializedTensor(dtype="i16", shape=()))
    kernel: TensorSpec = field(default_factory=lambda: TensorSpec(_example_arrays()[2]))


def build_example() -> ExampleModel:
    rng = np.random.default_rng(0)
    D = 128
    B = 1024
    a = rng.normal(size=B).astype(np.float16)
    x = np.array(10.35, dtype=np.float32)
    w0 = rng.normal(size=D).astype(np.float32)
    kernel = rng.integers(0, 256, size=(D, D), dtype=np.uint8)
    return ExampleModel(
        D=D,
        B=B,
        a=TensorSpec(a),
        x=TensorSpec(x),
        W_0=TensorSpec(w0, name="W.0"),
        mode="clamp_up",
        y=UninitializedTensor(dtype="i16", shape=()),
        kernel=TensorSpec(kernel),
    )


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    out = args[0] if args else "simple_model.oinf"
    write_oinf(build_example(), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

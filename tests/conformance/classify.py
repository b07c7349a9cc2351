"""Counts the node test cases of tests/conformance/expected.txt that do not
pass, by cause (the toolchain's reason, or the expectation's skip reason),
for the table "Cases that do not pass, by cause" of docs/conformance.md.

usage: python3 classify.py [EXPECTED]   (default: expected.txt beside this file)

Prints one line per cause: the count, the cause and the case names. Causes are
matched in order; the first that matches a reason counts the case.
"""
import os
import re
import sys

# (cause, regex on "<status>: <reason>")
CAUSES = [
    ("string tensors", r"data type string|op (StringNormalizer|StringSplit|StringConcat|RegexFullMatch)\b"),
    ("new data type: float8 / float4 / int4 / uint4 (no device form)",
     r"FLOAT8|FLOAT4E2M1|data type U?INT4\b|\bU?INT4\b"),
    ("random by definition", r"random by definition|op (Bernoulli|RandomUniformLike)\b"),
    ("test data contradicts its model or follows the Python reference", r"^skip: test data"),
    ("empty tensors (a dimension of 0)", r"zero elements|empty outputs|non-empty last chunk"),
    ("operator definition newer than opset 17 not lowered", r"definition newer than the toolchain lowers"),
    ("operator not implemented", r"unsupported operator node"),
    ("element type the operator does not support (QLinearMatMul float16 scales)",
     r"must be float32, got"),
    ("attribute value or form not implemented (antialias, half_pixel_symmetric, blocked quantization, 3-D "
     "sampling and images)",
     r"antialias|half_pixel_symmetric|block_size|only 4-D inputs|supported for 2-D"),
    ("a shape computed from run-time values inside a function body",
     r"has a shape \[.*(axes|\.\.\.)|a size computed from a run-time input value reaches its kernel"),
    ("a run-time value that decides the graph's structure (Loop condition, sequence split, If branches)",
     r"not a compile-time constant|If branches give (an )?output"),
]


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.txt")
    counts = {c: [] for c, _ in CAUSES}
    other = []
    total = 0
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        name, _, outcome = line.rstrip("\n").partition(" ")
        total += 1
        if outcome.startswith("pass"):
            continue
        for cause, rx in CAUSES:
            if re.search(rx, outcome):
                counts[cause].append(name)
                break
        else:
            other.append(f"{name} {outcome[:160]}")
    failing = sum(len(v) for v in counts.values()) + len(other)
    print(f"{failing} of {total} cases do not pass")
    for cause, names in counts.items():
        if names:
            print(f"{len(names):5d}  {cause}: {' '.join(names)}")
    if other:
        print(f"{len(other):5d}  other:")
        for o in other:
            print(f"       {o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

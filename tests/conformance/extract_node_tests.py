"""Extracts the ONNX backend node tests that the pinned ONNX release ships
pre-generated (onnx/backend/test/data/node/<case>/{model.onnx,test_data_set_*/})
from its source distribution into OUT_DIR/node/, unchanged.

usage: python3 extract_node_tests.py SDIST VERSION OUT_DIR

SDIST is the onnx-<VERSION>.tar.gz that scripts/build-onnx.sh downloads into
the dependency cache. Writes OUT_DIR/.complete (the case count) last; a
partial extraction never replaces a complete one.
"""
import os
import shutil
import sys
import tarfile


def run(sdist: str, version: str, out_dir: str) -> int:
    if not os.path.isfile(sdist):
        print(f"extract_node_tests: {sdist} is missing; run scripts/build-onnx.sh (or scripts/setup.sh), "
              f"which downloads the onnx {version} source distribution into the dependency cache", file=sys.stderr)
        return 1
    prefix = f"onnx-{version}/onnx/backend/test/data/node/"
    tmp = out_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    node_dir = os.path.join(tmp, "node")
    os.makedirs(node_dir)
    with tarfile.open(sdist, "r:gz") as tar:
        for m in tar:
            if not m.name.startswith(prefix) or not m.isfile():
                continue
            rel = m.name[len(prefix):]
            parts = rel.split("/")
            # Only plain relative paths: <case>/model.onnx, <case>/test_data_set_N/*.pb.
            if any(p in ("", ".", "..") for p in parts):
                print(f"extract_node_tests: unexpected member {m.name} in {sdist}", file=sys.stderr)
                return 1
            dst = os.path.join(node_dir, *parts)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with tar.extractfile(m) as src, open(dst, "wb") as f:
                shutil.copyfileobj(src, f)
    cases = sorted(d for d in os.listdir(node_dir) if os.path.isfile(os.path.join(node_dir, d, "model.onnx")))
    if not cases:
        print(f"extract_node_tests: no node test cases under {prefix} in {sdist}", file=sys.stderr)
        return 1
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    with open(os.path.join(out_dir, ".complete"), "w") as f:
        f.write(f"{len(cases)}\n")
    print(f"extract_node_tests: {len(cases)} node test cases of onnx {version} in {os.path.join(out_dir, 'node')}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print("usage: extract_node_tests.py SDIST VERSION OUT_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(run(sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])))

#!/usr/bin/python3
"""Tests of tests/zoo/compare.py's criteria on synthetic outputs, the
detector ones included (cases the zoo's real outputs rarely meet: near ties,
swapped detections, empty results): each case writes a reference and a result in the
manifest form and checks the verdict and its reason."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write(d, tensors):
    os.makedirs(d, exist_ok=True)
    m = []
    for i, (name, a) in enumerate(tensors):
        np.ascontiguousarray(a).tofile(f"{d}/{i}.bin")
        m.append({"name": name, "dtype": str(a.dtype), "shape": list(a.shape), "file": f"{i}.bin"})
    with open(f"{d}/manifest.json", "w") as f:
        json.dump(m, f)


class CompareTest(unittest.TestCase):
    def run_compare(self, family, ref, got):
        """ref / got: {case: [(name, array)]}; returns (exit code, verdict)."""
        with tempfile.TemporaryDirectory() as t:
            with open(f"{t}/meta.json", "w") as f:
                json.dump({"family": family}, f)
            for c in ref:
                write(f"{t}/ref/{c}", ref[c])
                write(f"{t}/got/{c}", got[c])
            p = subprocess.run([sys.executable, f"{HERE}/compare.py", f"{t}/meta.json", f"{t}/ref", f"{t}/got",
                                *ref], capture_output=True, text=True)
            return p.returncode, json.loads(p.stdout.strip().splitlines()[-1])

    def test_dense_relative_l2(self):
        rng = np.random.default_rng(0)
        ref = rng.normal(size=(1, 1000)).astype(np.float32)
        noise = rng.normal(size=ref.shape).astype(np.float32)
        near = ref + noise * (0.5e-3 * np.linalg.norm(ref) / np.linalg.norm(noise))
        far = ref + noise * (2e-3 * np.linalg.norm(ref) / np.linalg.norm(noise))
        rc, v = self.run_compare("classification", {"image": [("logits", ref)]}, {"image": [("logits", near)]})
        self.assertEqual(rc, 0, v)
        rc, v = self.run_compare("classification", {"image": [("logits", ref)]}, {"image": [("logits", far)]})
        self.assertEqual(rc, 1)
        self.assertIn("rel. L2", v["why"])

    def test_shape_and_names(self):
        a = np.zeros((1, 10), np.float32)
        rc, v = self.run_compare("classification", {"image": [("y", a)]}, {"image": [("y", a[:, :9])]})
        self.assertEqual(rc, 1)
        self.assertIn("[1, 9]", v["why"])
        rc, v = self.run_compare("classification", {"image": [("y", a)]}, {"image": [("z", a)]})
        self.assertEqual(rc, 1)
        self.assertIn("outputs", v["why"])

    def detections(self, n, shift=0.0, label_flip=False):
        rng = np.random.default_rng(1)
        boxes = (rng.uniform(0, 300, (n, 4)) + shift).astype(np.float32)
        scores = rng.uniform(0.5, 1, n).astype(np.float32)
        labels = rng.integers(1, 91, n).astype(np.int64)
        if label_flip and n:
            labels[0] += 1
        return [("boxes", boxes), ("scores", scores), ("labels", labels)]

    def test_detections(self):
        blank = self.detections(0)
        ref = {"image": self.detections(12), "blank": blank}
        # Boxes up to 300 px: 1e-4 relative to that scale is 0.03 px.
        rc, v = self.run_compare("detection", ref, {"image": self.detections(12, shift=0.01), "blank": blank})
        self.assertEqual(rc, 0, v)
        self.assertIn("image 12", v["metric"])
        rc, v = self.run_compare("detection", ref, {"image": self.detections(12, shift=0.05), "blank": blank})
        self.assertEqual(rc, 1)
        self.assertIn("boxes", v["why"])
        rc, v = self.run_compare("detection", ref, {"image": self.detections(12, label_flip=True), "blank": blank})
        self.assertEqual(rc, 1)
        self.assertIn("labels: 1 of 12 elements differ", v["why"])
        rc, v = self.run_compare("detection", ref, {"image": self.detections(11), "blank": blank})
        self.assertEqual(rc, 1)
        self.assertIn("[11, 4]", v["why"])

    def test_near_tied_scores_may_come_in_either_order(self):
        d = dict(self.detections(6))
        masks = np.random.default_rng(2).uniform(0, 1, (6, 1, 5, 7)).astype(np.float32)
        scores = np.array([0.9, 0.8, 0.58023596, 0.58023524, 0.5, 0.4], np.float32)
        ref = [("boxes", d["boxes"]), ("labels", d["labels"]), ("scores", scores), ("masks", masks)]
        empty = [(n, a[:0]) for n, a in ref]

        def swapped(i, j):
            order = np.arange(6)
            order[[i, j]] = order[[j, i]]
            return {"image": [(n, a[order].copy()) for n, a in ref], "blank": empty}

        refs = {"image": ref, "blank": empty}
        # Scores 7.2e-7 apart (within the 1e-4 tolerance): either order matches.
        rc, v = self.run_compare("detection", refs, swapped(2, 3))
        self.assertEqual(rc, 0, v)
        # 0.1 apart: the order is the model's, a swap is a difference.
        rc, v = self.run_compare("detection", refs, swapped(0, 1))
        self.assertEqual(rc, 1)
        self.assertIn("labels", v["why"])
        # Near-tied, but the result's boxes are not the reference's: no pairing.
        got = swapped(2, 3)
        got["image"][0][1][2] += 1.0
        rc, v = self.run_compare("detection", refs, got)
        self.assertEqual(rc, 1)
        self.assertIn("boxes", v["why"])

    def test_blank_must_be_empty_in_the_reference(self):
        d = self.detections(3)
        rc, v = self.run_compare("detection", {"image": d, "blank": d}, {"image": d, "blank": d})
        self.assertEqual(rc, 1)
        self.assertIn("blank: ONNX Runtime finds 3 detections", v["why"])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Judges a run of ONNX's ONNXIFI test driver (its gtest JSON report) against
the expectations of one data set and prints the counts.

usage: driver_summary.py REPORT.json EXCLUDED.txt EXPECTED.txt SET_NAME DRIVER.log [DATA_DIR]

Outcomes per case: pass (every data set's outputs within the driver's
absolute tolerance 1e-5), unsupported (onnxGetBackendCompatibility answered
UNSUPPORTED_*; the driver skips the case), fail (an assertion failed; the
backend's own log line for the case is quoted), excluded (driver_exclusions.py).

EXPECTED.txt has one line per case, "<case> pass" or "<case> unsupported" or
"<case> fail: <why>"; a case that does worse than expected (pass -> anything
else, unsupported -> fail) or one missing from the file fails the run; a case
that does better is reported (update the file) but does not fail it.
Set ONNXIFI_WRITE_EXPECTED=1 to rewrite EXPECTED.txt from this run.
"""
import json
import os
import re
import sys

PREFIX = "ONNXCppAllTest/ONNXCppDriverTest."


def backend_log(log_path):
    """case -> (first backend line at warn or worse, first compatibility line,
    whether a graph was initialized) from the driver's log, which the backend
    writes at info level (OAAXVK_ONNXIFI_LOG_LEVEL=2)."""
    info, current = {}, None
    run = re.compile(r"^\[ RUN      \] ONNXCppAllTest/ONNXCppDriverTest\.ONNXCppDriverUnitTest/(\S+)")
    try:
        lines = open(log_path, errors="replace").read().splitlines()
    except OSError:
        return info
    for line in lines:
        m = run.match(line)
        if m:
            current = m.group(1)
            info[current] = [None, None, False]
            continue
        if not current or "[oaax-vulkan]" not in line:
            continue
        text = line.split("] ", 3)[-1][:300]
        entry = info[current]
        if ("[warn" in line or "[error" in line) and entry[0] is None:
            entry[0] = text
        if "onnxGetBackendCompatibility:" in line and entry[1] is None:
            entry[1] = text
        if "onnxInitGraph: " in line and " inputs, " in line:
            entry[2] = True
    return info


def reference_has_nan(case_dir):
    try:
        import glob
        import numpy
        from onnx import TensorProto, numpy_helper
        for pb in glob.glob(os.path.join(case_dir, "test_data_set_*", "output_*.pb")):
            t = TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            if a.dtype.kind == "f" and numpy.isnan(a).any():
                return True
    except Exception:
        return False
    return False


def main():
    report, excluded_file, expected_file, set_name, log_path = sys.argv[1:6]
    data_dir = sys.argv[6] if len(sys.argv) > 6 else None
    data = json.load(open(report))
    log = backend_log(log_path)
    outcome, unsupported_reason = {}, {}
    for suite in data.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = t["name"].split("/", 1)[-1] if "/" in t["name"] else t["name"]
            warn, compat, inited = log.get(name, [None, None, False])
            if t.get("failures"):
                text = t["failures"][0].get("failure", "")
                if "IsDescriptorEqual" in text:
                    msg = "an output differs from the reference by 1e-5 or more (the driver's absolute tolerance)"
                    if data_dir and reference_has_nan(os.path.join(data_dir, name)):
                        msg = "the reference output holds NaN, which the driver's comparison never accepts"
                else:
                    msg = warn or compat or text.splitlines()[0][:300]
                outcome[name] = "fail: " + msg
            elif t.get("result") == "SKIPPED":
                outcome[name] = "unsupported"
                unsupported_reason[name] = compat or ""
            elif not inited:
                # A pass must have gone through our backend: without a device
                # the driver loops over zero backends and "passes" everything.
                outcome[name] = "fail: the backend initialized no graph (no Vulkan device?)"
            else:
                outcome[name] = "pass"
    excluded = {}
    for line in open(excluded_file):
        if line.strip():
            case, rule = line.split(" ", 1)
            excluded[case] = rule.strip()

    if os.environ.get("ONNXIFI_WRITE_EXPECTED") == "1":
        with open(expected_file, "w") as f:
            f.write("# ONNX ONNXIFI test driver on %s (lavapipe): <case> pass | unsupported | fail: <why>\n"
                    "# Regenerate: ONNXIFI_WRITE_EXPECTED=1 ctest -R onnxifi.driver.%s\n"
                    % (set_name, set_name.replace("-", "_")))
            for case in sorted(outcome):
                f.write("%s %s\n" % (case, outcome[case]))

    expected = {}
    if os.path.exists(expected_file):
        for line in open(expected_file):
            if line.strip() and not line.startswith("#"):
                case, status = (line.rstrip("\n").split(" ", 1) + [""])[:2]
                expected[case] = status
    rank = {"pass": 2, "unsupported": 1}
    worse, better, unknown = [], [], []
    for case, got in sorted(outcome.items()):
        want = expected.get(case)
        if want is None:
            unknown.append((case, got))
            continue
        g, w = rank.get(got.split(":")[0], 0), rank.get(want.split(":")[0], 0)
        if g < w:
            worse.append((case, want, got))
        elif g > w:
            better.append((case, want, got))
    n = len(outcome)
    counts = {k: sum(1 for v in outcome.values() if v.split(":")[0] == k) for k in ("pass", "unsupported", "fail")}
    for case, got in sorted(outcome.items()):
        if got.startswith("fail"):
            print("  fail %s: %s" % (case, got[6:]))
    print("%s: %d cases run: %d pass, %d unsupported (skipped by the driver), %d fail; %d excluded (driver defects)"
          % (set_name, n, counts["pass"], counts["unsupported"], counts["fail"], len(excluded)))
    for case, want, got in better:
        print("  better than expected: %s (%s -> %s)" % (case, want, got))
    for case, got in unknown:
        print("  NOT IN %s: %s %s" % (os.path.basename(expected_file), case, got))
    for case, want, got in worse:
        print("  REGRESSION: %s expected '%s', got '%s'" % (case, want, got))
    if os.environ.get("ONNXIFI_LIST_UNSUPPORTED") == "1":
        for case, why in sorted(unsupported_reason.items()):
            print("  unsupported %s: %s" % (case, why))
    if n == 0 or counts["pass"] == 0:
        print("FAIL: no case passed (is a Vulkan device reachable?)")
        return 1
    return 1 if worse or unknown else 0


if __name__ == "__main__":
    sys.exit(main())

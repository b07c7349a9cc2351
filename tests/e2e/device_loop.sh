#!/usr/bin/env bash
# End to end, Loops decided on the device (docs/toolchain.md "Control flow",
# docs/bundle-format.md "Segment program"): a Loop whose trip count or
# condition only the device knows compiles its body once, as a segment the
# control program runs per iteration. Models (opset 13), compared with ONNX
# Runtime on lavapipe and SwiftShader (oaax-run, validation layer on):
#   trip_input      the trip count a graph input: 0, 1 and 7 iterations of
#                   a body reading its iteration number, with a
#                   loop-carried tensor and a scan output; in the same
#                   model a Loop whose condition is a graph input (false:
#                   no iteration, true: 5) and one whose body reads none
#                   of the loop's values;
#   trip_from_data  the trip count computed on the device (the number of
#                   positive elements of an input: 0, 1 and 6);
#   cond_exit       a body that ends the loop by its condition (trip count
#                   20; the limit ends it before the first iteration's end,
#                   after a few, or never);
#   dynamic_after   later nodes (Mul, Shape, ReduceSum) reading the scan
#                   output, sized by the iterations run (1, 3 and 5), and
#                   loop-carried values of a symbolic dimension N in 1..4;
#   ranged_zero     a trip count with a range holding 0 (config.json) and a
#                   scan output: on the device, 0, 2 and 5 iterations;
#   two_loops       two device loops in a row, the second's trip count
#                   computed from the first's result (0, 1 and 3 iterations);
#   while_loop      a `while` loop as PyTorch exports one (the largest int64
#                   as its trip count, a computed condition), cap 16: 1, 4
#                   and 9 iterations run, a condition still true after
#                   the 16th fails the frame naming the Loop;
#   state_as_slice  a body returning a loop-carried value as its scan slice
#                   (the value before the update, as the Range function
#                   does) and swapping two loop-carried values;
#   capped          config.json "limits" "max_loop_iterations" = 8: 8
#                   iterations run, 9 fail the frame naming the Loop;
#   nonzero_trip    the detector pattern: one iteration per NonZero result,
#                   each gathering its box by the iteration number (0, 1
#                   and 4 iterations); the cap is the NonZero's planned
#                   extent (6), which the conversion log's symbols show.
# Exit 77 (skip) without numpy / onnx or the reference tools
# (scripts/fetch-reference.sh).
# usage: device_loop.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py" "$root"
# Models and one input directory per value set. cases.txt: "MODEL DIR";
# models.txt the models to convert.
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h
out = sys.argv[1]
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
rng = np.random.default_rng(5)
models = {}
def i64(name, v, shape=None):
    v = np.asarray(v, np.int64)
    return h.make_tensor(name, I64, list(v.shape) if shape is None else shape, v.ravel().tolist())
def f32(name, v):
    v = np.asarray(v, np.float32)
    return h.make_tensor(name, F, list(v.shape), v.ravel().tolist())
def add(name, nodes, ins, outs, sets, inits=(), config=None, opset=13):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(*i) for i in ins],
                     [h.make_tensor_value_info(*o) for o in outs], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    os.makedirs(f"{out}/{name}")
    onnx.save(m, f"{out}/{name}/model.onnx")
    if config is not None:
        json.dump(config, open(f"{out}/{name}/config.json", "w"))
    models[name] = (ins, sets)

# Body: s' = s * 0.5 + x * iteration, scan slice = s' + 1.
def body_scale(extra_nodes=(), cond_out="cond_in"):
    return h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=F),
         h.make_node("Mul", ["x", "fi"], ["xi"]),
         h.make_node("Mul", ["s", "half"], ["sh"]),
         h.make_node("Add", ["sh", "xi"], ["s_next"]),
         h.make_node("Add", ["s_next", "one"], ["slice"]),
         *extra_nodes],
        "body",
        [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, []),
         h.make_tensor_value_info("s", F, [3])],
        [h.make_tensor_value_info(cond_out, B, []), h.make_tensor_value_info("s_next", F, [3]),
         h.make_tensor_value_info("slice", F, [3])],
        [f32("half", [0.5, 0.5, 0.5]), f32("one", [1.0])])

# The same without a scan output: s' = s * 0.5 + iteration.
def body_scale_state():
    return h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=F), h.make_node("Mul", ["s", "half"], ["sh"]),
         h.make_node("Add", ["sh", "fi"], ["s_next"])],
        "body",
        [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, []),
         h.make_tensor_value_info("s", F, [3])],
        [h.make_tensor_value_info("cond_in", B, []), h.make_tensor_value_info("s_next", F, [3])],
        [f32("half", [0.5, 0.5, 0.5])])

# Trip count a graph input: 0, 1 and many iterations. Two more Loops in the
# same model: one whose condition is a graph input (false: no iteration,
# true: the constant trip count 5), and one whose body reads none of the
# loop's values (its results are computed once, before the loop, and the
# iterations copy them: the final state is x after one iteration or more).
invariant = h.make_graph(
    [h.make_node("Identity", ["x"], ["x_copy"]), h.make_node("Add", ["x", "x"], ["twice"])], "invariant",
    [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, []),
     h.make_tensor_value_info("s", F, [3])],
    [h.make_tensor_value_info("cond_in", B, []), h.make_tensor_value_info("x_copy", F, [3]),
     h.make_tensor_value_info("twice", F, [3])])
add("trip_input",
    [h.make_node("Loop", ["n", "", "s0"], ["s_final", "stack"], name="loop", body=body_scale()),
     h.make_node("Loop", ["five", "go", "s0"], ["s_go", "stack_go"], name="cond_loop", body=body_scale()),
     h.make_node("Loop", ["n", "", "s0"], ["s_inv", "stack_inv"], name="invariant", body=invariant)],
    [("n", I64, []), ("go", B, []), ("x", F, [3]), ("s0", F, [3])],
    [("s_final", F, [3]), ("stack", F, ["k", 3]), ("s_go", F, [3]), ("stack_go", F, ["k2", 3]),
     ("s_inv", F, [3]), ("stack_inv", F, ["k3", 3])],
    [{"n": np.array(m, np.int64), "go": np.array(g), "x": rng.standard_normal(3).astype(np.float32),
      "s0": rng.standard_normal(3).astype(np.float32)} for m, g in ((0, False), (1, True), (7, True))],
    [i64("five", 5, [])])

# Trip count computed from data: the number of positive elements of c.
add("trip_from_data",
    [h.make_node("Greater", ["c", "zero"], ["pos"], name="pos"),
     h.make_node("Cast", ["pos"], ["posf"], name="posf", to=F),
     h.make_node("ReduceSum", ["posf"], ["nf"], name="count", keepdims=0),
     h.make_node("Cast", ["nf"], ["n"], name="n", to=I64),
     h.make_node("Loop", ["n", "", "s0"], ["s_final", "stack"], name="loop", body=body_scale())],
    [("c", F, [6]), ("x", F, [3]), ("s0", F, [3])], [("s_final", F, [3]), ("stack", F, ["k", 3])],
    [{"c": c, "x": rng.standard_normal(3).astype(np.float32), "s0": rng.standard_normal(3).astype(np.float32)}
     for c in (-np.ones(6, np.float32), np.array([-1, 2, -1, -1, -1, -1], np.float32),
               np.abs(rng.standard_normal(6)).astype(np.float32) + 0.1)],
    [f32("zero", [0.0])])

# A body that ends the loop: runs while the sum of the state stays below the
# limit (at most 20 iterations).
add("cond_exit",
    [h.make_node("Loop", ["n", "go", "s0"], ["s_final", "stack"], name="loop",
                 body=body_scale([h.make_node("ReduceSum", ["s_next"], ["total"], keepdims=0),
                                  h.make_node("Less", ["total", "limit"], ["cond_next"])], "cond_next"))],
    [("x", F, [3]), ("s0", F, [3]), ("limit", F, [])], [("s_final", F, [3]), ("stack", F, ["k", 3])],
    [{"x": np.array([1, 2, 3], np.float32), "s0": np.zeros(3, np.float32), "limit": np.array(l, np.float32)}
     for l in (-1.0, 5.0, 40.0, 1e9)],
    [i64("n", 20, []), h.make_tensor("go", B, [], [1])])

# Later nodes read the scan output (sized by the iterations run) and the
# loop-carried values have a symbolic dimension N (config.json, 1..4). (At
# zero iterations ONNX Runtime returns this scan output as [0, 0], not
# knowing the slice's extent without running the body; the bundle returns
# [0, N]: the zero-iteration cases are the other models'.)
body_dyn = h.make_graph(
    [h.make_node("Cast", ["i"], ["fi"], to=F), h.make_node("Add", ["s", "fi"], ["s_next"]),
     h.make_node("Mul", ["s_next", "x"], ["slice"])], "body_dyn",
    [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, []),
     h.make_tensor_value_info("s", F, ["N"])],
    [h.make_tensor_value_info("cond_in", B, []), h.make_tensor_value_info("s_next", F, ["N"]),
     h.make_tensor_value_info("slice", F, ["N"])])
add("dynamic_after",
    [h.make_node("Loop", ["n", "", "x"], ["s_final", "stack"], name="loop", body=body_dyn),
     h.make_node("Mul", ["stack", "two"], ["twice"], name="twice"),
     h.make_node("Shape", ["stack"], ["stack_shape"], name="stack_shape"),
     h.make_node("ReduceSum", ["stack", "axis1"], ["row_sums"], name="row_sums", keepdims=0)],
    [("n", I64, []), ("x", F, ["N"])],
    [("s_final", F, ["N"]), ("twice", F, ["k", "N"]), ("stack_shape", I64, [2]), ("row_sums", F, ["k"])],
    [{"n": np.array(m, np.int64), "x": rng.standard_normal(k).astype(np.float32)} for m, k in ((1, 4), (3, 1), (5, 3))],
    [f32("two", [2.0]), i64("axis1", [1])],
    config={"dimensions": {"N": {"min": 1, "max": 4}}})

# A trip count named in config.json "input_values" with a range that holds
# 0 and scan outputs: zero iterations would leave the unrolled form without
# a slice shape, so the loop runs on the device (set from the run-time
# value, not read back), its cap the range's maximum.
add("ranged_zero",
    [h.make_node("Loop", ["n", "", "s0"], ["s_final", "stack"], name="loop", body=body_scale())],
    [("n", I64, []), ("x", F, [3]), ("s0", F, [3])], [("s_final", F, [3]), ("stack", F, ["k", 3])],
    [{"n": np.array(m, np.int64), "x": rng.standard_normal(3).astype(np.float32),
      "s0": rng.standard_normal(3).astype(np.float32)} for m in (0, 2, 5)],
    config={"input_values": {"n": ["M"]}, "dimensions": {"M": {"min": 0, "max": 5}}})

# Two device loops in a row, the second's trip count computed from the
# first's result (the number of its elements above 1).
add("two_loops",
    [h.make_node("Loop", ["n", "", "s0"], ["s_mid", "stack1"], name="first", body=body_scale()),
     h.make_node("Greater", ["s_mid", "one"], ["above"], name="above"),
     h.make_node("Cast", ["above"], ["abovef"], name="abovef", to=F),
     h.make_node("ReduceSum", ["abovef"], ["mf"], name="count", keepdims=0),
     h.make_node("Cast", ["mf"], ["m"], name="m", to=I64),
     h.make_node("Loop", ["m", "", "s_mid"], ["s_final", "stack2"], name="second", body=body_scale())],
    [("n", I64, []), ("x", F, [3]), ("s0", F, [3])],
    [("s_final", F, [3]), ("stack1", F, ["k1", 3]), ("stack2", F, ["k2", 3])],
    [{"n": np.array(m, np.int64), "x": np.array(x, np.float32), "s0": np.zeros(3, np.float32)}
     for m, x in ((0, [1, 2, 3]), (2, [-1, 0.5, 3]), (4, [1, 2, 3]))],
    [f32("one", [1.0])])

# A `while` loop as PyTorch exports one: the largest int64 as the trip
# count, the body computing its condition (the cap is max_loop_iterations,
# 16 here: a condition still true after the 16th iteration fails the frame).
add("while_loop",
    [h.make_node("Loop", ["n", "go", "s0"], ["s_final", "stack"], name="while",
                 body=body_scale([h.make_node("ReduceSum", ["s_next"], ["total"], keepdims=0),
                                  h.make_node("Less", ["total", "limit"], ["cond_next"])], "cond_next"))],
    [("x", F, [3]), ("s0", F, [3]), ("limit", F, [])], [("s_final", F, [3]), ("stack", F, ["k", 3])],
    [{"x": np.array([0.25, 0.5, 0.5], np.float32), "s0": np.zeros(3, np.float32), "limit": np.array(l, np.float32)}
     for l in (-1.0, 5.0, 16.5, 1e9)],
    [i64("n", 2**63 - 1, []), h.make_tensor("go", B, [], [1])],
    config={"limits": {"max_loop_iterations": 16}})

# The body returns a loop-carried value itself as its scan slice (the
# Range function's pattern: the slice is the value before the update) and
# swaps two loop-carried values.
add("state_as_slice",
    [h.make_node("Loop", ["n", "", "a0", "b0"], ["a", "b", "stack"], name="loop", body=h.make_graph(
        [h.make_node("Add", ["a_in", "b_in"], ["sum"])], "body",
        [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, []),
         h.make_tensor_value_info("a_in", F, [2]), h.make_tensor_value_info("b_in", F, [2])],
        [h.make_tensor_value_info("cond_in", B, []), h.make_tensor_value_info("b_in", F, [2]),
         h.make_tensor_value_info("sum", F, [2]), h.make_tensor_value_info("a_in", F, [2])]))],
    [("n", I64, []), ("a0", F, [2]), ("b0", F, [2])], [("a", F, [2]), ("b", F, [2]), ("stack", F, ["k", 2])],
    [{"n": np.array(m, np.int64), "a0": rng.standard_normal(2).astype(np.float32),
      "b0": rng.standard_normal(2).astype(np.float32)} for m in (0, 1, 5)])

# The cap: config.json limits max_loop_iterations = 8 (9 iterations fail the frame).
add("capped",
    [h.make_node("Loop", ["n", "", "s0"], ["s_final", "stack"], name="loop_capped", body=body_scale())],
    [("n", I64, []), ("x", F, [3]), ("s0", F, [3])], [("s_final", F, [3]), ("stack", F, ["k", 3])],
    [{"n": np.array(m, np.int64), "x": rng.standard_normal(3).astype(np.float32),
      "s0": rng.standard_normal(3).astype(np.float32)} for m in (8, 9)],
    config={"limits": {"max_loop_iterations": 8}})

# The detector pattern: one iteration per NonZero result (boxes whose score
# is above 0), each gathering its box by the iteration number.
body_nz = h.make_graph(
    [h.make_node("Gather", ["idx", "i"], ["k"], axis=0),
     h.make_node("Gather", ["boxes", "k"], ["row"], axis=0),
     h.make_node("Mul", ["row", "two"], ["slice"]),
     h.make_node("Add", ["acc", "row"], ["acc_next"])],
    "body_nz",
    [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, []),
     h.make_tensor_value_info("acc", F, [4])],
    [h.make_tensor_value_info("cond_in", B, []), h.make_tensor_value_info("acc_next", F, [4]),
     h.make_tensor_value_info("slice", F, [4])],
    [f32("two", [2.0])])
add("nonzero_trip",
    [h.make_node("Greater", ["scores", "zero"], ["keep"], name="gt"),
     h.make_node("NonZero", ["keep"], ["nz"], name="nz"),
     h.make_node("Squeeze", ["nz", "axes0"], ["idx"], name="idx"),
     h.make_node("Shape", ["idx"], ["shape"], name="shape"),
     h.make_node("Gather", ["shape", "zero_i"], ["n"], name="count", axis=0),
     h.make_node("Loop", ["n", "", "acc0"], ["acc", "rows"], name="per_box", body=body_nz)],
    [("scores", F, [6]), ("boxes", F, [6, 4])], [("acc", F, [4]), ("rows", F, ["k", 4])],
    [{"scores": s, "boxes": rng.standard_normal((6, 4)).astype(np.float32)}
     for s in (-np.ones(6, np.float32), np.array([-1, 3, -1, -1, -1, -1], np.float32),
               np.array([1, -2, 3, 4, -5, 6], np.float32))],
    [f32("zero", [0.0]), i64("axes0", [0]), i64("zero_i", 0, []), f32("acc0", [0, 0, 0, 0])])

# Refused at conversion: a loop-carried value that grows each iteration,
# and a device loop inside another one.
refused = {}
def refuse(name, nodes, ins, outs, text, inits=()):
    add(name, nodes, ins, outs, [], inits)
    del models[name]
    refused[name] = text
grow = h.make_graph(
    [h.make_node("Concat", ["s", "s"], ["s_next"], axis=0)], "grow",
    [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, []),
     h.make_tensor_value_info("s", F, ["m"])],
    [h.make_tensor_value_info("cond_in", B, []), h.make_tensor_value_info("s_next", F, ["m2"])])
refuse("refuse_growing_state", [h.make_node("Loop", ["n", "", "s0"], ["s_final"], name="grow_loop", body=grow)],
       [("n", I64, []), ("s0", F, [3])], [("s_final", F, ["m3"])],
       "node 'grow_loop' (Loop): the loop-carried value 0 ('s0') enters the loop as float32 [3] but the body "
       "returns 'grow_loop/body/s_next' as float32 [6]; a loop run on the device keeps each loop-carried value in "
       "one buffer")
inner = h.make_graph(
    [h.make_node("Loop", ["n", "", "s_outer"], ["s_outer_next"], name="inner_loop", body=body_scale_state())],
    "outer",
    [h.make_tensor_value_info("i_outer", I64, []), h.make_tensor_value_info("cond_outer", B, []),
     h.make_tensor_value_info("s_outer", F, [3])],
    [h.make_tensor_value_info("cond_outer", B, []), h.make_tensor_value_info("s_outer_next", F, [3])])
refuse("refuse_nested", [h.make_node("Loop", ["n", "", "s0"], ["s_final"], name="outer_loop", body=inner)],
       [("n", I64, []), ("s0", F, [3])], [("s_final", F, [3])],
       "nested device loops are not supported")

only = os.environ.get("DEVICE_LOOP_ONLY")  # a comma-separated list of models, to run only those
with open(f"{out}/cases.txt", "w") as cases:
    for name, (ins, sets) in models.items():
        if only and name not in only.split(","): continue
        for k, v in enumerate(sets):
            d = f"{out}/{name}/in{k}"
            os.makedirs(d)
            manifest = []
            for i, (n, t, s) in enumerate(ins):
                a = np.array(v[n], copy=True)  # ascontiguousarray would make a scalar 1-D
                a.tofile(f"{d}/{i}.bin")
                manifest.append({"name": n, "dtype": a.dtype.name, "shape": list(a.shape), "file": f"{i}.bin"})
            json.dump(manifest, open(f"{d}/manifest.json", "w"))
            if (name, k) in (("capped", 1), ("while_loop", 3)): continue  # over the cap: checked by its message
            cases.write(f"{name} in{k}\n")
open(f"{out}/refused.txt", "w").write("".join(f"{m} {t}\n" for m, t in refused.items() if not only or m in only.split(",")))
open(f"{out}/models.txt", "w").write("\n".join(m for m in models if not only or m in only.split(",")) + "\n")
PY
fail=0
e2e_check_against_ort "$py" "$root" "$build" "$tmp" "$node_modules" || fail=1
# The NonZero count's cap is its planned largest value (6 scores), not
# max_loop_iterations.
[ -n "${DEVICE_LOOP_ONLY:-}" ] && [ ! -f "$tmp/nonzero_trip/bundle/conversion-log.json" ] ||
"$py" - "$tmp" <<'PY' || fail=1
import json, sys
log = json.load(open(f"{sys.argv[1]}/nonzero_trip/bundle/conversion-log.json"))
syms = [s for e in log if e["Message"] == "Dynamic shapes" for s in e["Data"]["Symbols"]]
caps = {s["Name"]: s["Max"] for s in syms}
if caps.get("per_box/trip_count") != 6 or caps.get("per_box/iterations") != 6:
    print(f"FAIL: nonzero_trip: the loop's symbols are {caps}, expected a cap of 6"); sys.exit(1)
print("nonzero_trip: the loop's cap is the NonZero's planned extent, 6")
PY
# Over the cap: the frame fails, naming the Loop and the cap.
printf '%s\n' "capped in0" "capped in1 the trip count of Loop 'loop_capped' (at most 8 iterations" \
  "while_loop in0" "while_loop in3 Loop 'while': more than 16 iterations" > "$tmp/cases.txt"
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  e2e_run_cases "$drv" "$tmp" "$build" || fail=1
done
exit $fail

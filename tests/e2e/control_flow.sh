#!/usr/bin/env bash
# End to end, control flow (src/toolchain/import/control_flow.h,
# docs/toolchain.md "Control flow"): If, Loop and Scan rewritten at import
# into plain nodes, run on the device and compared with ONNX Runtime. Models,
# each converted once (with no config unless noted):
#   if_runtime      opset 13, If on a run-time bool [] graph input `cond`:
#                   then Add(Relu(x), w) and a constant int64 [3], else
#                   Sub(Mul(x, y), w) and another int64 [3] (both branches
#                   inlined, each output selected with Where); the branches
#                   read the graph inputs x, y and the initializer w from the
#                   outer scope; Add(z, y) after the If; run with cond true
#                   and false;
#   if_empty_branch opset 13, If on ReduceSum(x) > 0 (computed on the
#                   device) whose then-branch is an empty [0,4] constant and
#                   else-branch Relu(x) + w [5,4], Mul by 2 after the If (a
#                   segment program: the output takes the taken branch's
#                   shape, [0,4] included); run both ways;
#   if_fewer_rows   opset 13, If on a bool graph input: then the first 2 rows
#                   of x (Slice), else Relu(x) [5,4], Mul by 2 after it;
#   if_fewer_cols   opset 13, x [N,4] with N in [1,8] (config.json), If on
#                   a bool graph input: then the first 2 columns [N,2], else
#                   Relu(x) [N,4]; run at N = 3 both ways, N = 8 and N = 1;
#   if_two_guards   opset 13, two such Ifs on bool graph inputs (an empty
#                   [0,4] or Relu(x) [5,4]; 2 rows or Neg(x) [5,4])
#                   concatenated along axis 0; all four condition pairs;
#   if_larger_first opset 13, If on a bool graph input: then Relu(x) [2,3],
#                   else ReduceMax over axis 0 [1,3] (the larger branch
#                   first); both run with the condition true and false;
#   if_const_true   opset 15, the condition a Constant node (true, a bool
#                   in raw_data: one byte, as numpy_helper and PyTorch's
#                   exporter write it); the untaken else branch holds
#                   Multinomial, which the toolchain does not implement
#                   (dropped at import);
#   if_const_false  opset 15, the condition an initializer (false, a bool in
#                   int32_data, as onnx.helper.make_tensor writes it); the
#                   untaken then branch holds RandomUniform (unimplemented);
#   if_squeeze_dim  opset 13, torch.squeeze(x, 1)'s If(Shape(x)[1] == 1)
#                   with branches of different ranks: known from ONNX's
#                   inferred shape, only the taken branch is inlined;
#   loop_if         opset 13, Loop with trip count 4 (Constant node) and
#                   condition true (int32_data initializer), a loop-carried
#                   float [2,3] and a scan output ([4,2,3]); the body casts
#                   the iteration number to float, and holds an If on a
#                   run-time condition (ReduceSum(acc) > 0, with the
#                   initializer `zero` of the main graph) whose branches read
#                   the graph input x (two scopes out), the body's acc and
#                   its float iteration number; the body's condition output
#                   is Identity(cond); value sets that take both branches
#                   across the iterations;
#   scan9           opset 16, Scan with two scan inputs a [5,3] (axis 0) and
#                   b [3,5] (axis 1, read in reverse: scan_input_directions
#                   [0,1]), a state s [3] (s + a_t * b_t, cumulative), scan
#                   outputs y1 (scan_output_axes 1: [3,5]) and y2 (axis 0,
#                   reverse: scan_output_directions [0,1]);
#   scan8           opset 8, Scan over [batch 2, sequence 4, 3] with an empty
#                   sequence_lens: state [2,3], cumulative sum, scan output
#                   [2,4,3];
#   loop_two        opset 13, Loop with trip count 5 (initializer) and a
#                   Constant true condition (int32_data), the body passing
#                   its condition input through as its condition output; two
#                   loop-carried values of different types (float [4]:
#                   a * 1.5 + i, int64 [2]: k * 2 - i) and an int64 scan
#                   output [5,2];
#   loop_raw_cond   opset 13, Loop with trip count 3 and its condition a
#                   raw_data bool initializer (true), v + v;
#   sequences       opset 17, sequences and optionals inside the graph,
#                   compiled away at import: SplitToSequence with split
#                   sizes, a scalar split (a shorter last piece) and
#                   without (pieces of 1, keepdims 0),
#                   SequenceErase, SequenceInsert, SequenceAt (position -1),
#                   SequenceLength, ConcatFromSequence (along an axis and
#                   stacked on a new one), SequenceMap with a tensor input,
#                   Optional / OptionalHasElement / OptionalGetElement, and
#                   an If on a run-time condition whose branches give
#                   sequences of two tensors (selected element by element);
#                   run with the condition true and false;
#   loop_runtime_trips  opset 13, Loop whose trip count n is a graph input
#                   named with the range [1, 6] in config.json
#                   "input_values" (unrolled to 6 iterations, masked, the
#                   scan output sliced to n rows); run at n = 1, 4, 6.
# Each bundle runs through libRuntimeLibrary.so (oaax-run, validation layer
# on, which must stay silent) on lavapipe and SwiftShader; every output must
# match ONNX Runtime's: name, dtype, shape, byte size, and values within
# 1e-5 (relative and absolute) for float, exactly for integers.
# Refused at conversion (exit 1, no model.oinf, conversion-log.json's last
# entry "Conversion Failed" with the message): an If on a run-time
# condition whose branches give [2,3] and [3,2] (neither holds the other; the
# message names the selecting Where and gives the reason), a Loop with trip count 5000
# ("above the unrolling limit of 1024"), a SequenceAt whose position is a
# graph input ("is not a compile-time constant"), an If on a run-time
# condition whose branches give sequences of different lengths.
# Exit 77 (skip) without numpy / onnx or the reference tools
# (scripts/fetch-reference.sh).
# usage: control_flow.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py" "$root"
# Models and one input directory per value set. cases.txt: "MODEL DIR";
# models.txt the models to convert, refused.txt those whose conversion must
# fail ("MODEL MESSAGE").
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh
out = sys.argv[1]
rng = np.random.default_rng(23)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
NP = {F: np.float32, I64: np.int64, B: np.bool_}
vi = h.make_tensor_value_info

def save(name, nodes, ins, outs, opset, inits=()):
    """Saves TMP/name/model.onnx; ins [(name, type, shape)], outs likewise."""
    g = h.make_graph(nodes, name, [vi(*i) for i in ins], [vi(*o) for o in outs], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    os.makedirs(f"{out}/{name}")
    onnx.save(m, f"{out}/{name}/model.onnx")
    return name

def const(name, v):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.asarray(v), name))
# A bool scalar as numpy_helper (and PyTorch's exporter) writes it: raw_data,
# one byte; and as onnx.helper.make_tensor writes it: int32_data.
def bool_raw(name, v):
    return nh.from_array(np.array(v), name)
def bool_i32(name, v):
    return h.make_tensor(name, B, [], [int(v)])

models = {}  # name: (inputs [(name, type, shape)], [value sets {input: array}])
def add(name, nodes, ins, outs, opset, sets, inits=()):
    save(name, nodes, ins, outs, opset, inits)
    models[name] = (ins, sets)

def randn(*s):
    return rng.standard_normal(s).astype(np.float32)

# 1b. If on a run-time condition whose branches give different shapes: a
# segment program (the device computes both branches, the host reads the
# condition back, the output takes the taken branch's shape).
# ReduceSum(x) > 0 picks an empty [0, 4] constant, else Relu(x) + w [5, 4];
# Mul by 2 after the If sizes itself by the taken branch.
w54 = randn(5, 4)
add("if_empty_branch",
    [h.make_node("ReduceSum", ["x"], ["total"], keepdims=0), h.make_node("Greater", ["total", "zero"], ["positive"]),
     h.make_node("If", ["positive"], ["picked"], name="guard",
                 then_branch=h.make_graph([const("t_empty", np.zeros((0, 4), np.float32))], "then", [],
                                          [vi("t_empty", F, [0, 4])]),
                 else_branch=h.make_graph([h.make_node("Relu", ["x"], ["e_relu"]),
                                           h.make_node("Add", ["e_relu", "w54"], ["e_rows"])], "else", [],
                                          [vi("e_rows", F, [5, 4])])),
     h.make_node("Mul", ["picked", "two"], ["out"], name="after")],
    [("x", F, [5, 4])], [("out", F, ["n", 4])], 13,
    [{"x": np.abs(randn(5, 4)) + 0.1}, {"x": -np.abs(randn(5, 4)) - 0.1}],
    [nh.from_array(w54, "w54"), nh.from_array(np.array(0, np.float32), "zero"),
     nh.from_array(np.array(2, np.float32), "two")])
# A bool graph input as the condition; then the first 2 rows (Slice), else
# all 5 (Relu); and [2,3] against [1,3] with the larger branch first.
add("if_fewer_rows",
    [h.make_node("If", ["cond"], ["picked"], name="rows_if",
                 then_branch=h.make_graph([h.make_node("Slice", ["x", "s0", "s2", "s0"], ["t_rows"])], "then", [],
                                          [vi("t_rows", F, [2, 4])]),
                 else_branch=h.make_graph([h.make_node("Relu", ["x"], ["e_rows"])], "else", [],
                                          [vi("e_rows", F, [5, 4])])),
     h.make_node("Mul", ["picked", "two"], ["out"], name="after")],
    [("cond", B, []), ("x", F, [5, 4])], [("out", F, ["n", 4])], 13,
    [{"cond": np.array(c), "x": randn(5, 4)} for c in (True, False)],
    [nh.from_array(np.array([0], np.int64), "s0"), nh.from_array(np.array([2], np.int64), "s2"),
     nh.from_array(np.array(2, np.float32), "two")])
add("if_larger_first",
    [h.make_node("If", ["cond"], ["y"], name="shapes_if",
                 then_branch=h.make_graph([h.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", F, [2, 3])]),
                 else_branch=h.make_graph([h.make_node("ReduceMax", ["x"], ["e"], axes=[0], keepdims=1)], "else",
                                          [], [vi("e", F, [1, 3])]))],
    [("cond", B, []), ("x", F, [2, 3])], [("y", F, ["d0", 3])], 13,
    [{"cond": np.array(c), "x": randn(2, 3)} for c in (True, False)])
# With a symbolic batch N in [1, 8] (config.json): then the first 2 columns
# [N,2], else all 4 [N,4]; N and the taken branch both size the output.
add("if_fewer_cols",
    [h.make_node("If", ["cond"], ["picked"], name="cols_if",
                 then_branch=h.make_graph([h.make_node("Slice", ["x", "s0", "s2", "s1"], ["t_cols"])], "then", [],
                                          [vi("t_cols", F, ["N", 2])]),
                 else_branch=h.make_graph([h.make_node("Relu", ["x"], ["e_cols"])], "else", [],
                                          [vi("e_cols", F, ["N", 4])])),
     h.make_node("Mul", ["picked", "two"], ["out"], name="after")],
    [("cond", B, []), ("x", F, ["N", 4])], [("out", F, ["N", "c"])], 13,
    [{"cond": np.array(c), "x": randn(n, 4)} for c, n in ((True, 3), (False, 3), (True, 8), (False, 1))],
    [nh.from_array(np.array([0], np.int64), "s0"), nh.from_array(np.array([2], np.int64), "s2"),
     nh.from_array(np.array([1], np.int64), "s1"), nh.from_array(np.array(2, np.float32), "two")])
json.dump({"dimensions": {"N": {"min": 1, "max": 8}}}, open(f"{out}/if_fewer_cols/config.json", "w"))
# Two such Ifs (an empty [0,4] or Relu(x) [5,4]; the first 2 rows or all 5)
# concatenated: the output's extent is the sum of both decisions.
add("if_two_guards",
    [h.make_node("If", ["c1"], ["p1"], name="first_if",
                 then_branch=h.make_graph([const("f_empty", np.zeros((0, 4), np.float32))], "then", [],
                                          [vi("f_empty", F, [0, 4])]),
                 else_branch=h.make_graph([h.make_node("Relu", ["x"], ["f_rows"])], "else", [],
                                          [vi("f_rows", F, [5, 4])])),
     h.make_node("If", ["c2"], ["p2"], name="second_if",
                 then_branch=h.make_graph([h.make_node("Slice", ["x", "s0", "s2", "s0"], ["g_rows"])], "then", [],
                                          [vi("g_rows", F, [2, 4])]),
                 else_branch=h.make_graph([h.make_node("Neg", ["x"], ["g_all"])], "else", [],
                                          [vi("g_all", F, [5, 4])])),
     h.make_node("Concat", ["p1", "p2"], ["out"], name="both", axis=0)],
    [("c1", B, []), ("c2", B, []), ("x", F, [5, 4])], [("out", F, ["n", 4])], 13,
    [{"c1": np.array(a), "c2": np.array(b), "x": randn(5, 4)} for a in (True, False) for b in (True, False)],
    [nh.from_array(np.array([0], np.int64), "s0"), nh.from_array(np.array([2], np.int64), "s2")])

# 1. If on a run-time condition: both branches inlined, selected with Where.
w = randn(2, 3)
then1 = h.make_graph([h.make_node("Relu", ["x"], ["t_relu"]), h.make_node("Add", ["t_relu", "w"], ["t_z"]),
                      const("t_k", np.array([1, -2, 3], np.int64))], "then1", [],
                     [vi("t_z", F, [2, 3]), vi("t_k", I64, [3])])
else1 = h.make_graph([h.make_node("Mul", ["x", "y"], ["e_xy"]), h.make_node("Sub", ["e_xy", "w"], ["e_z"]),
                      const("e_k", np.array([-40, 50, 7], np.int64))], "else1", [],
                     [vi("e_z", F, [2, 3]), vi("e_k", I64, [3])])
add("if_runtime", [h.make_node("If", ["cond"], ["z", "k"], name="branch", then_branch=then1, else_branch=else1),
                   h.make_node("Add", ["z", "y"], ["out"], name="after")],
    [("cond", B, []), ("x", F, [2, 3]), ("y", F, [2, 3])], [("out", F, [2, 3]), ("k", I64, [3])], 13,
    [{"cond": np.array(c), "x": randn(2, 3), "y": randn(2, 3)} for c in (True, False)],
    [nh.from_array(w, "w")])

# 2. If on a condition known at conversion: only the taken branch is inlined,
# the other holds an operator the toolchain does not implement.
w2 = randn(3, 4)
taken = h.make_graph([h.make_node("Relu", ["x"], ["r"]), h.make_node("Mul", ["r", "w"], ["r_w"])], "taken", [],
                     [vi("r_w", F, [3, 4])])
bern = h.make_graph([h.make_node("Multinomial", ["x"], ["m"], sample_size=4, seed=1.0),
                     h.make_node("Cast", ["m"], ["u"], to=F)],
                    "multinomial", [], [vi("u", F, [3, 4])])
add("if_const_true", [h.make_node("Constant", [], ["c"], value=bool_raw("c", True)),
                      h.make_node("If", ["c"], ["y"], name="const_if", then_branch=taken, else_branch=bern)],
    [("x", F, [3, 4])], [("y", F, [3, 4])], 15, [{"x": randn(3, 4)}], [nh.from_array(w2, "w")])
rand = h.make_graph([h.make_node("RandomUniform", [], ["ru"], shape=[3, 4], seed=2.0)], "random", [],
                    [vi("ru", F, [3, 4])])
taken2 = h.make_graph([h.make_node("Abs", ["x"], ["ab"]), h.make_node("Sub", ["ab", "w"], ["ab_w"])], "taken2", [],
                      [vi("ab_w", F, [3, 4])])
add("if_const_false", [h.make_node("If", ["c"], ["y"], name="const_if", then_branch=rand, else_branch=taken2)],
    [("x", F, [3, 4])], [("y", F, [3, 4])], 15, [{"x": randn(3, 4)}],
    [nh.from_array(w2, "w"), bool_i32("c", False)])

# torch.squeeze(x, 1) of a dynamic tensor: If(Shape(x)[1] == 1) with
# branches of different ranks (Squeeze [3], Identity [3, 1]); ONNX's shape
# inference knows the dimension, so the condition is known at conversion
# and only the taken branch is inlined.
sq_then = h.make_graph([h.make_node("Squeeze", ["x", "axis1"], ["sq"])], "squeeze", [], [vi("sq", F, [3])])
sq_else = h.make_graph([h.make_node("Identity", ["x"], ["same"])], "identity", [], [vi("same", F, [3, 1])])
add("if_squeeze_dim", [h.make_node("Shape", ["x"], ["xs"]), h.make_node("Gather", ["xs", "one"], ["d1"], axis=0),
                       h.make_node("Equal", ["d1", "one"], ["is1"]),
                       h.make_node("If", ["is1"], ["y"], name="squeeze_if", then_branch=sq_then, else_branch=sq_else),
                       h.make_node("Relu", ["y"], ["z"])],
    [("x", F, [3, 1])], [("z", F, [3])], 13, [{"x": randn(3, 1)}],
    [h.make_tensor("one", I64, [], [1]), h.make_tensor("axis1", I64, [1], [1])])

# 3. An If on a run-time condition inside a Loop body.
inner_then = h.make_graph([h.make_node("Abs", ["x"], ["it_abs"]), h.make_node("Sub", ["acc_in", "it_abs"], ["it_d"]),
                           h.make_node("Mul", ["it_d", "half"], ["it_out"])], "inner_then", [],
                          [vi("it_out", F, [2, 3])])
inner_else = h.make_graph([h.make_node("Relu", ["x"], ["ie_relu"]), h.make_node("Add", ["acc_in", "ie_relu"], ["ie_s"]),
                           h.make_node("Add", ["ie_s", "fi"], ["ie_out"])], "inner_else", [],
                          [vi("ie_out", F, [2, 3])])
body3 = h.make_graph([h.make_node("Cast", ["i"], ["fi"], to=F),
                      h.make_node("ReduceSum", ["acc_in"], ["total"], keepdims=0),
                      h.make_node("Greater", ["total", "zero"], ["positive"]),
                      h.make_node("If", ["positive"], ["sel"], name="inner_if", then_branch=inner_then,
                                  else_branch=inner_else),
                      h.make_node("Add", ["sel", "fi"], ["acc_out"]),
                      h.make_node("Mul", ["acc_out", "w"], ["scan_out"]),
                      h.make_node("Identity", ["cond_in"], ["cond_out"])], "body3",
                     [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [2, 3])],
                     [vi("cond_out", B, []), vi("acc_out", F, [2, 3]), vi("scan_out", F, [2, 3])])
w3 = randn(2, 3)
def loop_if_ref(acc, x):  # numpy, to check that both branches are taken
    taken = set()
    for i in range(4):
        if acc.sum() > 0:
            sel = (acc - np.abs(x)) * 0.5; taken.add("then")
        else:
            sel = acc + np.maximum(x, 0) + i; taken.add("else")
        acc = sel + i
    return taken
sets3 = [{"acc0": randn(2, 3) + 1.0, "x": randn(2, 3) * 4}, {"acc0": randn(2, 3) - 2.0, "x": randn(2, 3)},
         {"acc0": np.full((2, 3), -1.0, np.float32), "x": randn(2, 3) * 3}]
assert set().union(*(loop_if_ref(s["acc0"], s["x"]) for s in sets3)) == {"then", "else"}
add("loop_if", [const("trips", np.array(4, np.int64)),
                h.make_node("Loop", ["trips", "keep", "acc0"], ["acc", "scans"], name="loop", body=body3),
                h.make_node("Relu", ["acc"], ["acc_relu"], name="after")],
    [("acc0", F, [2, 3]), ("x", F, [2, 3])],
    [("acc", F, [2, 3]), ("scans", F, [4, 2, 3]), ("acc_relu", F, [2, 3])], 13, sets3,
    [bool_i32("keep", True), nh.from_array(np.array(0, np.float32), "zero"),
     nh.from_array(np.array(0.5, np.float32), "half"), nh.from_array(w3, "w")])

# 4. Scan (opset 9+): axes, directions, a state.
body4 = h.make_graph([h.make_node("Mul", ["a_t", "b_t"], ["ab"]), h.make_node("Add", ["s_in", "ab"], ["s_out"]),
                      h.make_node("Add", ["s_out", "a_t"], ["y1_t"]), h.make_node("Sub", ["s_out", "b_t"], ["y2_t"])],
                     "body4", [vi("s_in", F, [3]), vi("a_t", F, [3]), vi("b_t", F, [3])],
                     [vi("s_out", F, [3]), vi("y1_t", F, [3]), vi("y2_t", F, [3])])
add("scan9", [h.make_node("Scan", ["s0", "a", "b"], ["s", "y1", "y2"], name="scan", body=body4, num_scan_inputs=2,
                          scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[1, 0],
                          scan_output_directions=[0, 1])],
    [("s0", F, [3]), ("a", F, [5, 3]), ("b", F, [3, 5])], [("s", F, [3]), ("y1", F, [3, 5]), ("y2", F, [5, 3])],
    16, [{"s0": randn(3), "a": randn(5, 3), "b": randn(3, 5)}])

# 5. Scan (opset 8): a batch axis, empty sequence_lens.
body5 = h.make_graph([h.make_node("Add", ["c_in", "x_t"], ["c_out"]), h.make_node("Mul", ["c_out", "c_out"], ["sq"])],
                     "body5", [vi("c_in", F, [3]), vi("x_t", F, [3])], [vi("c_out", F, [3]), vi("sq", F, [3])])
add("scan8", [h.make_node("Scan", ["", "c0", "xs"], ["c", "ys"], name="scan", body=body5, num_scan_inputs=1)],
    [("c0", F, [2, 3]), ("xs", F, [2, 4, 3])], [("c", F, [2, 3]), ("ys", F, [2, 4, 3])], 8,
    [{"c0": randn(2, 3), "xs": randn(2, 4, 3)}])

# 6. Loop: the condition passed through, float and int64 loop-carried values.
body6 = h.make_graph([h.make_node("Cast", ["i"], ["fi"], to=F),
                      h.make_node("Mul", ["a_in", "f15"], ["a_m"]), h.make_node("Add", ["a_m", "fi"], ["a_out"]),
                      h.make_node("Mul", ["k_in", "two"], ["k_m"]), h.make_node("Sub", ["k_m", "i"], ["k_out"]),
                      h.make_node("Neg", ["k_out"], ["k_scan"])], "body6",
                     [vi("i", I64, []), vi("c_in", B, []), vi("a_in", F, [4]), vi("k_in", I64, [2])],
                     [vi("c_in", B, []), vi("a_out", F, [4]), vi("k_out", I64, [2]), vi("k_scan", I64, [2])])
add("loop_two", [h.make_node("Constant", [], ["go"], value=bool_i32("go", True)),
                 h.make_node("Loop", ["trips", "go", "a0", "k0"], ["a", "k", "ks"], name="loop", body=body6)],
    [("a0", F, [4]), ("k0", I64, [2])], [("a", F, [4]), ("k", I64, [2]), ("ks", I64, [5, 2])], 13,
    [{"a0": randn(4), "k0": np.array([3, -7], np.int64)}],
    [nh.from_array(np.array(5, np.int64), "trips"), nh.from_array(np.array(1.5, np.float32), "f15"),
     nh.from_array(np.array(2, np.int64), "two")])

# A Loop whose condition is a raw_data bool initializer (true).
body7 = h.make_graph([h.make_node("Add", ["v_in", "v_in"], ["v_out"]), h.make_node("Identity", ["c_in"], ["c_out"])],
                     "body7", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [3])],
                     [vi("c_out", B, []), vi("v_out", F, [3])])
add("loop_raw_cond", [h.make_node("Loop", ["trips", "go", "v0"], ["v"], name="loop", body=body7)],
    [("v0", F, [3])], [("v", F, [3])], 13, [{"v0": randn(3)}],
    [nh.from_array(np.array(3, np.int64), "trips"), bool_raw("go", True)])

# 7. Sequences and optionals inside the graph (compiled away at import):
# SplitToSequence (split sizes, and pieces of 1 without the axis),
# SequenceErase / Insert / At (negative position) / Length,
# ConcatFromSequence (along an axis, and stacked on a new axis), SequenceMap,
# Optional / OptionalHasElement / OptionalGetElement, and an If on a run-time
# condition whose branches give sequences of equal length.
I = lambda name, v: nh.from_array(np.asarray(v, np.int64), name)
square = h.make_graph([h.make_node("Mul", ["r", "r"], ["r2"]), h.make_node("Add", ["r2", "bias"], ["r3"])], "square",
                      [vi("r", F, [6]), vi("bias", F, [6])], [vi("r3", F, [6])])
then8 = h.make_graph([h.make_node("Abs", ["ry"], ["t_abs"]), h.make_node("Neg", ["ry"], ["t_neg"]),
                      h.make_node("SequenceConstruct", ["t_abs", "t_neg"], ["t_seq"])], "then8", [],
                     [h.make_tensor_sequence_value_info("t_seq", F, [4, 2])])
else8 = h.make_graph([h.make_node("Neg", ["ry"], ["e_neg"]),
                      h.make_node("SequenceConstruct", ["e_neg", "ry"], ["e_seq"])], "else8", [],
                     [h.make_tensor_sequence_value_info("e_seq", F, [4, 2])])
add("sequences", [
    h.make_node("SplitToSequence", ["x", "split"], ["seq"], axis=1),
    h.make_node("SequenceErase", ["seq", "zero_i"], ["seq_e"]),
    h.make_node("Relu", ["y"], ["ry"]),
    h.make_node("SequenceInsert", ["seq_e", "ry", "zero_i"], ["seq_i"]),
    h.make_node("SequenceAt", ["seq_i", "minus1"], ["last"]),
    h.make_node("SequenceLength", ["seq_i"], ["count"]),
    h.make_node("ConcatFromSequence", ["seq_i"], ["cat"], axis=1),
    h.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
    h.make_node("SequenceMap", ["rows", "bias_t"], ["rows_sq"], body=square),
    h.make_node("ConcatFromSequence", ["rows_sq"], ["stacked"], axis=1, new_axis=1),
    h.make_node("Optional", ["last"], ["opt"]),
    h.make_node("OptionalHasElement", ["opt"], ["has"]),
    h.make_node("OptionalGetElement", ["opt"], ["got"]),
    h.make_node("If", ["c"], ["sel"], name="seq_if", then_branch=then8, else_branch=else8),
    h.make_node("ConcatFromSequence", ["sel"], ["if_cat"], axis=0),
    h.make_node("SplitToSequence", ["x", "four"], ["chunks"], axis=1),
    h.make_node("SequenceAt", ["chunks", "minus1"], ["chunk_last"])],
    [("x", F, [4, 6]), ("y", F, [4, 2]), ("c", B, []), ("bias_t", F, [6])],
    [("last", F, [4, 3]), ("count", I64, []), ("cat", F, [4, 7]), ("stacked", F, [6, 4]), ("has", B, []),
     ("got", F, [4, 3]), ("if_cat", F, [8, 2]), ("chunk_last", F, [4, 2])], 17,
    [{"x": randn(4, 6), "y": randn(4, 2), "c": np.array(c), "bias_t": randn(6)} for c in (True, False)],
    [I("split", [1, 2, 3]), I("zero_i", 0), I("minus1", -1), I("four", 4)])

# 8. A Loop whose trip count is a run-time value with a range (config.json: n in [1, 6]): unrolled to 6
# iterations, the state updated only while i < n, the scan output sliced to n rows; run at n = 1, 4, 6.
body9 = h.make_graph([h.make_node("Cast", ["i"], ["fi"], to=F), h.make_node("Mul", ["v_in", "f15"], ["v_m"]),
                      h.make_node("Add", ["v_m", "fi"], ["v_out"]), h.make_node("Neg", ["v_out"], ["v_scan"]),
                      h.make_node("Identity", ["c_in"], ["c_out"])], "body9",
                     [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [3])],
                     [vi("c_out", B, []), vi("v_out", F, [3]), vi("v_scan", F, [3])])
add("loop_runtime_trips", [h.make_node("Loop", ["n", "", "v0"], ["v", "vs"], name="loop", body=body9)],
    [("n", I64, []), ("v0", F, [3])], [("v", F, [3]), ("vs", F, ["k", 3])], 13,
    [{"n": np.array(k, np.int64), "v0": randn(3)} for k in (1, 4, 6)],
    [nh.from_array(np.array(1.5, np.float32), "f15")])
json.dump({"input_values": {"n": ["trips"]}, "dimensions": {"trips": {"min": 1, "max": 6}}},
          open(f"{out}/loop_runtime_trips/config.json", "w"))

with open(f"{out}/cases.txt", "w") as cases:
    for name, (ins, sets) in models.items():
        for k, v in enumerate(sets):
            d = f"{out}/{name}/in{k}"
            os.makedirs(d)
            manifest = []
            for i, (n, t, s) in enumerate(ins):
                a = np.asarray(v[n], NP[t], order="C")
                # a symbolic dimension (a string) takes the value set's size
                assert len(a.shape) == len(s) and all(x == y for x, y in zip(a.shape, s) if isinstance(y, int)), \
                    (name, n, a.shape)
                a.tofile(f"{d}/{i}.bin")
                manifest.append({"name": n, "dtype": a.dtype.name, "shape": list(a.shape), "file": f"{i}.bin"})
            json.dump(manifest, open(f"{d}/manifest.json", "w"))
            cases.write(f"{name} in{k}\n")
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")

# Refused at conversion.
def simple_body(cond_node):
    return h.make_graph([h.make_node("Add", ["v_in", "one"], ["v_out"]), cond_node], "body",
                        [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [3])],
                        [vi("c_out", B, []), vi("v_out", F, [3])])
pass_cond = h.make_node("Identity", ["c_in"], ["c_out"])
one = nh.from_array(np.array(1, np.float32), "one")
refused = [
    # [2,3] and [3,2]: neither holds the other (ONNX shape inference of the
    # selecting Where fails first; the message names the node and says why)
    (save("refuse_if_shapes_transposed",
          [h.make_node("If", ["cond"], ["y"], name="transposed_if",
                       then_branch=h.make_graph([h.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", F, [2, 3])]),
                       else_branch=h.make_graph([h.make_node("Transpose", ["x"], ["e"], perm=[1, 0])], "else", [],
                                                [vi("e", F, [3, 2])]))],
          [("cond", B, []), ("x", F, [2, 3])], [("y", F, ["d0", "d1"])], 13),
     "node 'transposed_if/select' (Where): the If branches give output 'y' the shapes [2, 3] and [3, 2], neither of "
     "which holds the other"),
    # A sequence position read at run time.
    (save("refuse_sequence_runtime_position",
          [h.make_node("SequenceConstruct", ["x", "x"], ["s"]), h.make_node("SequenceAt", ["s", "p"], ["y"])],
          [("x", F, [3]), ("p", I64, [])], [("y", F, [3])], 13),
     "the position input 'p' is not a compile-time constant"),
    # An If on a run-time condition whose branches give sequences of 1 and 2 tensors.
    (save("refuse_if_sequence_lengths",
          [h.make_node("If", ["cond"], ["s"], name="len_if",
                       then_branch=h.make_graph([h.make_node("SequenceConstruct", ["x"], ["t"])], "then", [],
                                                [h.make_tensor_sequence_value_info("t", F, [3])]),
                       else_branch=h.make_graph([h.make_node("SequenceConstruct", ["x", "x"], ["e"])], "else", [],
                                                [h.make_tensor_sequence_value_info("e", F, [3])])),
           h.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
          [("cond", B, []), ("x", F, [3])], [("y", F, [None])], 13),
     "the If branches give sequences of 1 and 2 tensors"),
    (save("refuse_loop_5000",
          [h.make_node("Loop", ["n", "", "v0"], ["v"], name="loop", body=simple_body(pass_cond))],
          [("v0", F, [3])], [("v", F, [3])], 13, [one, nh.from_array(np.array(5000, np.int64), "n")]),
     "is above the unrolling limit of 1024"),
]
open(f"{out}/refused.txt", "w").write("".join(f"{m} {msg}\n" for m, msg in refused))
PY
e2e_check_against_ort "$py" "$root" "$build" "$tmp" "$node_modules"

// Shared helpers of the constant evaluator (eval.cpp and the per-family
// eval_*.cpp files): reading a constant's values exactly, writing results
// in an output dtype, and broadcast iteration. Internal to the toolchain IR.
#ifndef OAAXVK_TOOLCHAIN_IR_EVAL_VALUES_H_
#define OAAXVK_TOOLCHAIN_IR_EVAL_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain::eval {

// "node '<name>' (<op>): <msg>" as an InvalidArgument status.
Status NodeError(const Node& n, const std::string& msg);

// A zero-filled constant shaped and typed like output k of `n` (its shape
// inferred already).
Tensor OutLike(const Graph& g, const Node& n, size_t k);

// Integer data types other than bool: folded arithmetic on them runs in the
// type itself, wrapping modulo 2^bits like ONNX Runtime, never through a
// double (which saturates or is undefined out of range).
bool IsIntegerDType(DType t);

// The exact values of an integer (or bool) tensor, sign- or zero-extended to
// 64 bits (uint64 values above INT64_MAX keep their bit pattern).
std::vector<int64_t> IntsOf(const Tensor& t);

// The values of a float tensor (float32, float16, bfloat16, double) as
// doubles; every float32 / 16-bit value is exact in a double.
std::vector<double> FloatsOf(const Tensor& t);

// A constant of integer type `dtype` holding the low DTypeSize(dtype) bytes
// of each value: two's-complement wrap-around (little-endian storage).
Tensor MakeConstWrapped(const std::string& name, DType dtype, const Shape& shape, const std::vector<int64_t>& v);

// A constant of float type `dtype` from values already rounded to it (a
// float32 result computed in float32 is stored unchanged; float16 / bfloat16
// round to nearest even).
Tensor MakeConstFloat(const std::string& name, DType dtype, const Shape& shape, const std::vector<double>& v);

// A bool constant (1 where v is non-zero).
Tensor MakeConstBool(const std::string& name, const Shape& shape, const std::vector<int64_t>& v);

// A float converted to integer type `dtype` as ONNX Runtime's CPU Cast does
// on x86-64 (truncation toward zero, out-of-range and NaN as the conversion
// instructions give them; eval.cpp documents the rule).
int64_t FloatToIntLikeOrt(double f, DType dtype);

// Calls f(flat_out, offsets) for every element of `out` (row-major), with
// offsets[k] the flat element index into input k broadcast to `out` per
// ONNX (numpy) rules. `ins` are the input shapes.
template <typename F>
void ForEachBroadcast(const Shape& out, const std::vector<Shape>& ins, F f);

// Multi-index iteration over `shape` calling f(flat_out_index, index_vector).
template <typename F>
void ForEachIndex(const Shape& shape, F f) {
  const int64_t total = NumElements(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    f(i, idx);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Element strides of `in` read broadcast to `out` (0 along broadcast axes).
std::vector<int64_t> BroadcastElementStrides(const Shape& in, const Shape& out);

template <typename F>
void ForEachBroadcast(const Shape& out, const std::vector<Shape>& ins, F f) {
  std::vector<std::vector<int64_t>> st;
  for (const Shape& s : ins) st.push_back(BroadcastElementStrides(s, out));
  std::vector<int64_t> off(ins.size(), 0);
  ForEachIndex(out, [&](int64_t i, const std::vector<int64_t>& idx) {
    for (size_t k = 0; k < st.size(); ++k) {
      int64_t p = 0;
      for (size_t d = 0; d < idx.size(); ++d) p += idx[d] * st[k][d];
      off[k] = p;
    }
    f(i, off);
  });
}

// The expressions of symbolic dimensions carried by the folded output of an
// integer arithmetic, comparison, logic, Where, Cast-to-bool or 1-D
// reduction node (eval_symbolic.cpp): true with *sym set (one Dim per
// output element) when an input carries expressions and every element's
// expression can be written; false otherwise.
bool ArithmeticSymbols(const Graph& g, const Node& n, const Tensor& out, std::vector<Dim>* sym);

// Per-family evaluators: each sets *handled when it knows n.op_type.
StatusOr<std::vector<Tensor>> EvaluateElementwise(const Graph& g, const Node& n, bool* handled);
StatusOr<std::vector<Tensor>> EvaluateMovement(const Graph& g, const Node& n, bool* handled);
StatusOr<std::vector<Tensor>> EvaluateReduction(const Graph& g, const Node& n, bool* handled);

}  // namespace oaaxvk::toolchain::eval

#endif  // OAAXVK_TOOLCHAIN_IR_EVAL_VALUES_H_

#include "toolchain/lower/lower_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "toolchain/ir/extent.h"
#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_index.h"
#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/lower/loop_budget.h"
#include "toolchain/lower/lower_int.h"

namespace oaaxvk::toolchain {

namespace {

// Unique's one-workgroup kernel (shaders/unique.comp, O(L^2) comparisons)
// is chosen up to this many slices, where its single dispatch beats the
// sort's passes; longer inputs take the sort-based kernels.
constexpr int64_t kUniquePairwiseMax = 256;

Status LErr(const Node& n, const std::string& m) {
  return Unimplemented("node '" + n.name + "' (" + n.op_type + "): " + m);
}

// A specialization value (bundle writer: the low 32 bits of the value).
Dim U(const Dim& v) { return v; }

// Right-aligns `v` (one entry per dimension) to 6 entries, padding with `fill`.
std::vector<Dim> Align6(const std::vector<Dim>& v, int64_t fill) {
  std::vector<Dim> r(6 - v.size(), fill);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}
void Push(std::vector<Dim>* spec, const std::vector<Dim>& v) {
  for (const Dim& x : v) spec->push_back(x);
}

Status CheckTensors(const Graph& g, const Node& n) {
  for (const auto* list : {&n.inputs, &n.outputs})
    for (const std::string& name : *list) {
      if (name.empty()) continue;
      const Tensor* t = g.FindTensor(name);
      if (!t) return LErr(n, "unknown tensor '" + name + "'");
      if (!IsDeviceDType(t->dtype))
        return LErr(n, "tensor '" + name + "' has data type " + DTypeName(t->dtype) +
                           ", which is not supported on the device (float32/float64, int64/int32/int16/int8, "
                           "uint16/uint8, bool)");
      if (t->shape.size() > 6) return LErr(n, "tensor '" + name + "' has rank above 6");
    }
  return Status::Ok();
}

// Constant indices: every entry must lie in [-extent(j), extent(j)) where
// extent(j) gives the extent for flat entry j.
template <typename ExtentFn>
Status CheckConstIndices(const Graph& g, const Node& n, const std::string& name, ExtentFn extent) {
  const Tensor* t = g.FindTensor(name);
  if (!t || !t->is_const) return Status::Ok();
  std::vector<int64_t> v = t->AsInts();
  for (size_t j = 0; j < v.size(); ++j) {
    int64_t e = extent(j);
    if (v[j] < -e || v[j] >= e)
      return InvalidArgument(StrFormat("node '%s' (%s): index %lld at position %zu of '%s' is out of range [-%lld, %lld)",
                                       n.name.c_str(), n.op_type.c_str(), static_cast<long long>(v[j]), j,
                                       name.c_str(), static_cast<long long>(e), static_cast<long long>(e)));
  }
  return Status::Ok();
}

// Scatter step 1: Y = data (strided_copy: N, IN_BASE, OUT_BASE, D[6], SI[6], SO[6]).
IndexDispatch CopyDispatch(const Node& n, const Dim& numel) {
  IndexDispatch c;
  c.kernel = "strided_copy";
  c.inputs = {n.inputs[0]};
  c.outputs = {0};
  c.units = numel;
  c.spec = {U(numel), 0, 0, 1, 1, 1, 1, 1, U(numel), 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
  c.detail = "scatter: copy data";
  return c;
}

// CumSum over rows of `len` elements (X viewed as [rows / inner, len,
// inner]). Short rows: one invocation per row scans it (shaders/cumsum.comp,
// len iterations). Longer ones: one workgroup per row, each invocation
// scanning `chunk` positions twice (shaders/cumsum_rows.comp, 2 * chunk + 8
// iterations within kLoopBudget), and rows longer than 256 * chunk in
// segments, one dispatch each, every one continuing from the last; planned
// at len_max, the largest len of a dynamic bundle (a segment past a shorter
// row does nothing).
StatusOr<IndexLowering> CumSumDispatches(const Node& n, const Dim& rows, const Dim& len, int64_t len_max,
                                         const Dim& inner, uint32_t in_float, bool value_sizes,
                                         const std::string& detail) {
  IndexLowering r;
  r.handled = true;
  const uint32_t exclusive = n.GetInt("exclusive", 0) ? 1u : 0u, reverse = n.GetInt("reverse", 0) ? 1u : 0u;
  if (len_max <= 256) {
    IndexDispatch d;
    d.kernel = "cumsum";
    d.inputs = {n.inputs[0]};
    d.outputs = {0};
    d.units = rows;  // one invocation per row
    d.spec = {rows, len, inner, exclusive, reverse, in_float};
    d.value_sizes = value_sizes;
    d.detail = detail;
    r.dispatches.push_back(std::move(d));
    return r;
  }
  const int64_t chunk = std::min<int64_t>((len_max + 255) / 256, (kLoopBudget - 16) / 2);
  const int64_t segment = 256 * chunk, segments = (len_max + segment - 1) / segment;
  for (int64_t s = 0; s < segments; ++s) {
    IndexDispatch d;
    d.kernel = "cumsum_rows";
    d.inputs = {n.inputs[0]};
    d.outputs = {0};
    d.units = rows * 256;  // one workgroup per row
    d.spec = {rows, len, inner, exclusive, reverse, in_float, U(s * segment), U(chunk)};
    d.value_sizes = value_sizes;
    d.detail = detail + StrFormat(" rows of up to %lld", static_cast<long long>(len_max)) +
               (segments > 1 ? StrFormat(", segment %lld of %lld", static_cast<long long>(s + 1),
                                         static_cast<long long>(segments))
                             : std::string());
    r.dispatches.push_back(std::move(d));
  }
  return r;
}

// TopK over rows up to this long ranks each element by comparing it with
// its whole row (shaders/topk.comp: at most this many iterations per
// invocation, O(L^2) work per row); longer rows take the radix select.
constexpr int64_t kTopKRankMax = 1024;

// TopK over long rows (shaders/topk_select.comp): radix select of the K-th
// key in 8-bit digits (4 of the value, then enough for the index), a gather
// of the K candidates, a rank count among them in blocks of at most
// kLoopBudget / 2 candidates per invocation, and the write. Scratch: a
// header and per-row state, per-row histogram, candidates and their ranks,
// planned at the largest L and K.
// Only the init dispatch carries ROWS, L and K (often parameter-buffer
// slots, a different one per TopK); the kernel copies them into the state
// header and every later phase reads them there and keeps its current digit
// in the row state, so those dispatches hold 0 for the three and no digit:
// their specialization values, hence their pipelines, are shared by every
// digit and by every TopK of the same planned sizes (a detector's TopK per
// class, dispatched 16 times each).
// `rows`: the rows along the axis (numel / len, 0 when len is 0).
StatusOr<IndexLowering> TopKSelect(const Node& n, const Dim& rows, const Dim& len, const Dim& inner, const Dim& k,
                                   bool value_sizes, uint32_t in_float, const std::string& detail) {
  IndexLowering r;
  r.handled = true;
  const int64_t l_max = PlannedMax(len), k_max = std::max<int64_t>(std::min(PlannedMax(k), l_max), 1);
  constexpr int64_t kPer = 16;  // positions per invocation (PER in the shader)
  const int64_t lpad = (l_max + 256 * kPer - 1) / (256 * kPer) * (256 * kPer);
  int64_t lo_digits = 1;  // 8-bit digits of the largest index
  while (lo_digits < 4 && (int64_t{1} << (8 * lo_digits)) < l_max) ++lo_digits;
  const int64_t block = std::min<int64_t>(k_max, kLoopBudget / 2), blocks = (k_max + block - 1) / block;
  constexpr int64_t kHeader = 4, kRowState = 8;  // words (shaders/topk_select.comp: HDR, row_state)
  r.scratch_words = {rows * kRowState + kHeader, rows * 256, rows * (2 * k_max), rows * k_max};
  const uint32_t largest = n.GetInt("largest", 1) ? 1u : 0u;
  auto phase = [&](uint32_t ph, const Dim& units, const std::string& what) {
    IndexDispatch d;
    d.kernel = "topk_select";
    d.inputs = {n.inputs[0]};
    d.outputs = {0, 1};
    d.scratch = {0, 1, 2, 3};
    d.units = units;
    const bool init = ph == 0;
    d.spec = {init ? rows : Dim(0), init ? len : Dim(0), inner,    init ? k : Dim(0), largest, in_float, ph,
              U(lpad),              U(k_max),           U(lo_digits), U(block),          U(blocks)};
    d.value_sizes = value_sizes;
    d.detail = detail + ", " + what;
    r.dispatches.push_back(std::move(d));
  };
  phase(0, rows * 256, "init");  // one invocation per (row, histogram bin)
  for (int64_t p = 0; p < 4 + lo_digits; ++p) {
    phase(1, rows * (lpad / kPer), StrFormat("histogram of digit %lld", static_cast<long long>(p)));
    phase(2, rows, StrFormat("select digit %lld", static_cast<long long>(p)));
  }
  phase(3, rows * (lpad / kPer), "gather the candidates");
  phase(4, rows * k_max * blocks, "rank the candidates");
  phase(5, rows * k_max, "write");
  return r;
}

}  // namespace

void AppendIndexKernels(std::vector<KernelInfo>* table) {
  // name, bindings, spec constants, local size, shared bytes, written bindings
  std::vector<KernelInfo> v = {
      {"gather_elements", 3, 15, {256, 1, 1}, 0, {2}},
      {"scatter_elements", 3, 16, {256, 1, 1}, 0, {2}},
      {"gather_nd", 3, 17, {256, 1, 1}, 0, {2}},
      {"scatter_nd", 3, 11, {256, 1, 1}, 0, {2}},
      {"cumsum", 2, 6, {256, 1, 1}, 0, {1}},
      {"cumsum_rows", 2, 8, {256, 1, 1}, 256 * 4, {1}},
      {"topk", 3, 6, {256, 1, 1}, 0, {1, 2}},
      {"topk_select", 7, 12, {256, 1, 1}, 0, {1, 2, 3, 4, 5, 6}},
      {"pad", 3, 22, {256, 1, 1}, 0, {2}},
      {"maxpool_indices", 3, 15, {256, 1, 1}, 0, {1, 2}},
      {"compress", 3, 6, {256, 1, 1}, 256 * 4, {1, 2}},
      {"compress_copy", 3, 4, {256, 1, 1}, 0, {2}},
      {"nonzero", 3, 11, {256, 1, 1}, 256 * 4, {1, 2}},
      {"dropout", 5, 2, {256, 1, 1}, 0, {3, 4}},
      {"random", 2, 5, {256, 1, 1}, 0, {1}},
      {"nms_select", 8, 8, {256, 1, 1}, 256 * 8, {5, 6, 7}},
      {"nms_select_cpu", 8, 8, {1, 1, 1}, 0, {5, 6, 7}},
      {"nms_gather", 4, 3, {256, 1, 1}, 256 * 4, {2, 3}},
      {"unique", 7, 5, {256, 1, 1}, 256 * 4, {1, 2, 3, 4, 5, 6}},
      {"unique_sort", 2, 7, {256, 1, 1}, 0, {1}},
      {"unique_flags", 3, 6, {256, 1, 1}, 0, {1, 2}},
      {"unique_scan", 3, 5, {256, 1, 1}, 256 * 4, {0, 1, 2}},
      {"unique_emit", 9, 5, {256, 1, 1}, 0, {1, 2, 3, 4}},
  };
  table->insert(table->end(), v.begin(), v.end());
}

StatusOr<IndexLowering> LowerIndexNode(const Graph& g, const Node& n) {
  IndexLowering r;
  const std::string& op = n.op_type;
  bool maxpool_indices = op == "MaxPool" && n.outputs.size() > 1 && !n.outputs[1].empty();
  if (!IndexDeviceOps().count(op) && !maxpool_indices) return r;
  r.handled = true;
  OAAXVK_RETURN_IF_ERROR(CheckTensors(g, n));
  if (n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty() || n.outputs[0].empty())
    return LErr(n, "missing data input or output");
  const Tensor& x = *g.FindTensor(n.inputs[0]);
  const Tensor& y = *g.FindTensor(n.outputs[0]);
  const Shape& xs = x.shape;
  const uint32_t in_float = IsFloatLike(x.dtype) ? 1u : 0u;
  const int64_t rank = static_cast<int64_t>(xs.size());
  IndexDispatch d;
  d.inputs = {n.inputs[0]};
  d.outputs = {0};
  d.units = y.numel();  // with its expression: a size that follows a symbol (run-time Pad pads)

  if (op == "NonMaxSuppression") {  // shaders/nms_select.comp, then shaders/nms_gather.comp
    if (n.outputs.size() < 5) return LErr(n, "internal: the extent and scratch outputs are missing");
    const Shape& ss = g.FindTensor(n.inputs.at(1))->shape;
    const Dim pairs = ss[0] * ss[1], slots = g.FindTensor(n.outputs[2])->shape.at(1);
    auto optional = [&](size_t k) { return k < n.inputs.size() && !n.inputs[k].empty(); };
    IndexDispatch s;
    s.kernel = "nms_select";
    s.inputs = {n.inputs[0], n.inputs[1]};
    for (size_t k = 2; k < 5; ++k) s.inputs.push_back(optional(k) ? n.inputs[k] : n.inputs[0]);
    s.outputs = {2, 3, 4};
    s.units = pairs * 256;  // one workgroup per (batch, class) pair
    s.spec = {ss[0], ss[1], ss[2], slots, U(n.GetInt("center_point_box", 0)), optional(2) ? 1u : 0u,
              optional(3) ? 1u : 0u, optional(4) ? 1u : 0u};
    s.detail = n.GetInt("center_point_box", 0) ? "center_point_box=1" : "corners";
    // One invocation per pair, no barriers, when its loops stay within the
    // loop budget (loop_budget.h): the kernel iterates about 3 N times to
    // fill and heapify plus (log N + selected) per selection. Larger inputs
    // keep the workgroup kernel, whose invocations iterate N / 256 per round
    // (both kernels report a loop a driver cut as an error, never fewer
    // boxes).
    const int64_t n_max = UpperBound(ss[2]), slots_max = UpperBound(slots);
    if (3 * n_max + slots_max * (24 + slots_max) <= kLoopBudget) {
      s.cpu_kernel = "nms_select_cpu";
      s.cpu_groups = pairs;
    }
    IndexDispatch c;
    c.kernel = "nms_gather";
    c.inputs = {n.outputs[2], n.outputs[3]};
    c.outputs = {0, 1};
    c.units = 256;
    c.spec = {pairs, ss[1], slots};
    c.detail = "concatenate the selections";
    r.dispatches.push_back(std::move(s));
    r.dispatches.push_back(std::move(c));
    return r;
  }
  if (op == "GatherElements" || op == "ScatterElements" || op == "Scatter") {
    const Tensor& ind = *g.FindTensor(n.inputs.at(1));
    // Indices sized by an extent read back (ir/extent.h) may be empty.
    if (ind.numel() == 0 && !ReadsDecidedSymbol(ind.numel()))
      return LErr(n, "empty indices '" + ind.name + "' are not supported");
    int64_t axis = n.GetInt("_axis", 0);
    OAAXVK_RETURN_IF_ERROR(CheckConstIndices(g, n, ind.name, [&](size_t) { return xs[axis]; }));
    int64_t ax6 = axis + 6 - rank;
    if (op == "GatherElements") {
      d.kernel = "gather_elements";
      d.inputs.push_back(ind.name);
      d.spec = {U(y.numel())};
      Push(&d.spec, Align6(ind.shape, 1));
      Push(&d.spec, Align6(DenseStrides(xs), 0));
      d.spec.push_back(U(ax6));
      d.spec.push_back(U(xs[axis]));
    } else {
      if (IsFloatLike(g.FindTensor(n.inputs.at(2))->dtype) != (in_float != 0))
        return LErr(n, "updates and data have different data types");
      r.dispatches.push_back(CopyDispatch(n, y.numel()));
      d.kernel = "scatter_elements";
      d.inputs = {ind.name, n.inputs[2]};
      // The positions of the indices off the axis (numel / axis extent,
      // without dividing by an extent that may be 0).
      Dim rows = 1;
      for (int64_t i = 0; i < rank; ++i)
        if (i != axis) rows = rows * ind.shape[i];
      d.units = rows;
      d.spec = {U(d.units)};
      Push(&d.spec, Align6(xs, 1));
      Push(&d.spec, Align6(ind.shape, 1));
      d.spec.push_back(U(ax6));
      d.spec.push_back(U(n.GetInt("_reduction", 0)));
      d.spec.push_back(in_float);
    }
    d.detail = StrFormat("axis=%lld", static_cast<long long>(axis));
  } else if (op == "GatherND" || op == "ScatterND") {
    const Tensor& ind = *g.FindTensor(n.inputs.at(1));
    const Shape& is = ind.shape;
    // Indices sized by an extent read back (ir/extent.h) may be empty.
    if (ind.numel() == 0 && !ReadsDecidedSymbol(ind.numel()))
      return LErr(n, "empty indices '" + ind.name + "' are not supported");
    int64_t b = op == "GatherND" ? n.GetInt("batch_dims", 0) : 0;
    int64_t K = is.back();
    if (K > 6) return LErr(n, "index tuples longer than 6 are not supported");
    std::vector<int64_t> kd(xs.begin() + b, xs.begin() + b + K);
    OAAXVK_RETURN_IF_ERROR(
        CheckConstIndices(g, n, ind.name, [&](size_t j) { return kd[j % static_cast<size_t>(K)]; }));
    int64_t slice = 1, kprod = 1, batch = 1, tuples = ind.numel() / K;
    for (int64_t i = b + K; i < rank; ++i) slice *= xs[i];
    for (int64_t v : kd) kprod *= v;
    for (int64_t i = 0; i < b; ++i) batch *= xs[i];
    d.inputs.push_back(ind.name);
    std::vector<int64_t> kd6 = kd, ks6;
    kd6.resize(6, 1);
    if (op == "GatherND") {
      int64_t s = slice;
      ks6.assign(6, 0);
      for (int64_t t = K - 1; t >= 0; --t) { ks6[t] = s; s *= kd[t]; }
      d.kernel = "gather_nd";
      d.spec = {U(y.numel()), U(K), FloorDiv(ind.numel(), Dim(K * batch)), U(slice), U(kprod * slice)};
      Push(&d.spec, ToDims(kd6));
      Push(&d.spec, ToDims(ks6));
      d.detail = StrFormat("batch_dims=%lld K=%lld", static_cast<long long>(b), static_cast<long long>(K));
    } else {
      if (IsFloatLike(g.FindTensor(n.inputs.at(2))->dtype) != (in_float != 0))
        return LErr(n, "updates and data have different data types");
      r.dispatches.push_back(CopyDispatch(n, y.numel()));
      d.kernel = "scatter_nd";
      d.inputs = {ind.name, n.inputs[2]};
      d.units = static_cast<uint64_t>(slice);
      d.spec = {U(slice), U(K), U(tuples)};
      Push(&d.spec, ToDims(kd6));
      d.spec.push_back(U(n.GetInt("_reduction", 0)));
      d.spec.push_back(in_float);
      d.detail = StrFormat("K=%lld updates=%lld", static_cast<long long>(K), static_cast<long long>(tuples));
    }
  } else if (op == "CumSum" && n.GetInt("_axis_by_value", 0) != 0) {
    // The axis is read from a graph input at run time (feature
    // value_symbols): rows, length and inner stride are expressions of it.
    const Dim a = g.FindTensor(n.inputs[1])->AsDims().at(0);
    const Dim axis = a + Lt(a, Dim(0)) * Dim(rank);
    Dim len = 0, inner = 0;
    for (int64_t i = 0; i < rank; ++i) {
      Dim after = 1;
      for (int64_t j = i + 1; j < rank; ++j) after = after * xs[j];
      len = len + Eq(axis, Dim(i)) * xs[i];
      inner = inner + Eq(axis, Dim(i)) * after;
    }
    // The run-time axis picks one of the dimensions: planned at the longest.
    int64_t len_max = 1;
    for (int64_t i = 0; i < rank; ++i) len_max = std::max(len_max, PlannedMax(xs[i]));
    const Dim rows = FloorDiv(y.numel(), Max(len, Dim(1)));
    return CumSumDispatches(n, rows, len, len_max, inner, in_float, true, "axis at run time");
  } else if (op == "CumSum") {
    const int64_t axis = n.GetInt("_axis", 0);
    Dim inner = 1;
    for (int64_t i = axis + 1; i < rank; ++i) inner = inner * xs[i];
    const Dim rows = FloorDiv(y.numel(), Max(xs[axis], Dim(1)));
    return CumSumDispatches(n, rows, xs[axis], PlannedMax(xs[axis]), inner, in_float, false,
                            StrFormat("axis=%lld", static_cast<long long>(axis)));
  } else if (op == "TopK") {
    if (n.outputs.size() < 2 || n.outputs[1].empty()) return LErr(n, "both outputs (Values, Indices) must be named");
    int64_t axis = n.GetInt("_axis", rank - 1), k = n.GetInt("_k", 1);
    Dim inner = 1, kd = k;
    for (int64_t i = axis + 1; i < rank; ++i) inner = inner * xs[i];
    const bool k_by_value = n.GetInt("_k_by_value", 0) != 0;  // K read at run time (feature value_symbols)
    if (k_by_value) kd = g.FindTensor(n.inputs[1])->AsDims().at(0);
    const std::string detail = StrFormat("axis=%lld k=%lld %s", static_cast<long long>(axis), static_cast<long long>(k),
                                         n.GetInt("largest", 1) ? "largest" : "smallest");
    if (PlannedMax(xs[axis]) > kTopKRankMax) {
      // The rows as the product of the other dimensions (times min(len, 1):
      // none when the axis is empty) rather than numel / len: equal at every
      // point, but a 1-D input sized by an extent read back then has one
      // row in the buffer bound too, not up to its length.
      Dim rows = Min(xs[axis], Dim(1));
      for (int64_t i = 0; i < rank; ++i)
        if (i != axis) rows = rows * xs[i];
      return TopKSelect(n, rows, xs[axis], inner, kd, k_by_value, in_float, detail);
    }
    d.kernel = "topk";
    d.outputs = {0, 1};
    d.units = x.numel();
    d.spec = {x.numel(), U(xs[axis]), inner, kd, n.GetInt("largest", 1) ? 1u : 0u, in_float};
    d.value_sizes = k_by_value;
    d.detail = detail;
  } else if (op == "Compress") {  // shaders/compress.comp
    Dim outer = 1, extent = x.numel(), inner = 1;
    if (n.HasAttr("axis")) {
      int64_t a = n.GetInt("axis", 0);
      if (a < 0) a += rank;
      for (int64_t i = 0; i < a; ++i) outer = outer * xs[i];
      extent = xs[a];
      for (int64_t i = a + 1; i < rank; ++i) inner = inner * xs[i];
    }
    // Slots in segments of 256 chunks (shaders/compress.comp: 2 * chunk +
    // 256 iterations per invocation within kLoopBudget) into a scratch value,
    // then one invocation per element copies (shaders/compress_copy.comp).
    const Dim cond_len = g.FindTensor(n.inputs[1])->numel();
    const int64_t len_max = std::max<int64_t>(std::min(PlannedMax(extent), PlannedMax(cond_len)), 1);
    const int64_t chunk = std::min<int64_t>((len_max + 255) / 256, (kLoopBudget - 512) / 2);
    const int64_t segment = 256 * chunk, segments = (len_max + segment - 1) / segment;
    r.scratch_words = {extent};
    for (int64_t s = 0; s < segments; ++s) {
      IndexDispatch p;
      p.kernel = "compress";
      p.inputs = {n.inputs.at(1)};
      p.outputs = {1};
      p.scratch = {0};
      p.units = 256;
      p.spec = {outer, extent, inner, cond_len, U(s * segment), U(chunk)};
      p.detail = "condition at run time, slots" +
                 (segments > 1 ? StrFormat(" (segment %lld of %lld)", static_cast<long long>(s + 1),
                                           static_cast<long long>(segments))
                               : std::string());
      r.dispatches.push_back(std::move(p));
    }
    d.kernel = "compress_copy";
    d.inputs = {n.inputs[0]};
    d.outputs = {0};
    d.scratch = {0};
    d.units = x.numel();
    d.spec = {outer, extent, inner, cond_len};
    d.detail = "condition at run time, copy";
  } else if (op == "TrainingDropout") {  // shaders/dropout.comp
    if (!in_float) return LErr(n, "training-mode Dropout needs float data");
    d.kernel = "dropout";
    d.inputs = {n.inputs[0], n.inputs.at(1), n.inputs.at(2)};
    d.outputs = {0, 1};
    d.spec = {x.numel(), static_cast<uint32_t>(n.GetInt("seed", 0))};
    d.detail = "training mode";
  } else if (op == "RandomUniformLike" || op == "RandomNormalLike") {  // shaders/random.comp
    const bool normal = op == "RandomNormalLike";
    const float a = normal ? n.GetFloat("mean", 0.f) : n.GetFloat("low", 0.f);
    const float b = normal ? n.GetFloat("scale", 1.f) : n.GetFloat("high", 1.f);
    if (!std::isfinite(a) || !std::isfinite(b) || (normal ? b < 0.f : b < a))
      return LErr(n, normal ? "scale must be finite and >= 0, and mean finite"
                            : "low and high must be finite with low <= high");
    auto bits = [](float v) {
      uint32_t u;
      std::memcpy(&u, &v, 4);
      return u;
    };
    // ONNX leaves the stream to the implementation; without `seed` one is
    // derived from the node's name (FNV-1a), so that two unseeded nodes draw
    // differently yet every inference of the bundle draws the same.
    uint32_t seed = 2166136261u;
    if (n.HasAttr("seed")) {
      seed = bits(n.GetFloat("seed", 0.f));
    } else {
      for (unsigned char c : n.name) seed = (seed ^ c) * 16777619u;
    }
    d.kernel = "random";
    d.spec = {y.numel(), seed, normal ? 1u : 0u, bits(a), bits(b)};
    d.detail = StrFormat("%s %g %g seed %s", normal ? "normal mean/scale" : "uniform low/high", a, b,
                         n.HasAttr("seed") ? "given" : "from the node name");
  } else if (op == "Unique") {  // shaders/unique.comp, or the sort-based unique_* kernels
    if (n.outputs.size() < 6) return LErr(n, "internal: the extent and scratch outputs are missing");
    Dim outer = 1, l = x.numel(), inner = 1;
    if (n.HasAttr("_axis")) {
      const int64_t a = n.GetInt("_axis", 0);
      for (int64_t i = 0; i < a; ++i) outer = outer * xs[i];
      l = xs[a];
      for (int64_t i = a + 1; i < rank; ++i) inner = inner * xs[i];
    }
    const uint32_t sorted = n.GetInt("sorted", 1) ? 1u : 0u;
    const std::string order = sorted ? "sorted" : "first occurrence order";
    const int64_t l_max = PlannedMax(l), slice = PlannedMax(outer) * PlannedMax(inner);
    // shaders/unique.comp compares every slice with every other in one
    // workgroup: an invocation iterates about 3 * ceil(L / 256) * L *
    // slice-size times. Small inputs take it (one dispatch); the others the
    // sort-based passes, whose invocations each compare at most about
    // log2(L) + 34 pairs of slices.
    const int64_t pairwise = 3 * ((l_max + 255) / 256) * l_max * slice + 256;
    if (l_max <= kUniquePairwiseMax && pairwise <= kLoopBudget) {
      d.kernel = "unique";
      d.outputs = {0, 1, 2, 3, 4, 5};
      d.units = 256;
      d.spec = {outer, l, inner, in_float, sorted};
      d.detail = order;
    } else {
      int64_t passes = 1;  // merge passes of widths 1, 2, 4, ... below L
      while ((int64_t{1} << passes) < l_max) ++passes;
      // A merge invocation compares up to passes + chunk slice pairs
      // (shaders/unique_sort.comp); chunks of 32 outputs make the binary
      // searches a small part of the work, smaller ones leave room for
      // longer slices.
      const int64_t chunk = std::min<int64_t>(32, kLoopBudget / std::max<int64_t>(slice, 1) - passes - 2);
      const int64_t sort_iterations = (passes + std::max<int64_t>(chunk, 1) + 2) * slice;
      if (chunk < 1)
        return InvalidArgument(StrFormat(
            "node '%s' (Unique): slices of %lld elements need about %lld loop iterations per invocation to sort "
            "%lld slices, above the per-invocation budget of %lld (docs/toolchain.md, \"Loop budget\"): the device "
            "Unique compares whole slices and supports slices of up to about %lld elements here; compute "
            "Unique outside the model for slices this large",
            n.name.c_str(), static_cast<long long>(slice), static_cast<long long>(sort_iterations),
            static_cast<long long>(l_max), static_cast<long long>(kLoopBudget),
            static_cast<long long>(kLoopBudget / (passes + 3))));
      // POS (output 5, [2L]) holds the two permutations of the merge sort; the
      // sorted one ends in half `half`, and the other half then holds the
      // first-occurrence flags and order. Scratch 0: run flags, then ranks
      // per sorted position; scratch 1: each run's first sorted position.
      const uint32_t half = static_cast<uint32_t>((passes - 1) % 2);
      r.scratch_words = {l, l};
      for (int64_t p = 0; p < passes; ++p) {
        IndexDispatch s;
        s.kernel = "unique_sort";
        s.outputs = {5};
        s.inputs = {n.inputs[0]};
        const int64_t width = int64_t{1} << p, per_pair = (2 * width + chunk - 1) / chunk;
        s.units = CeilDiv(l, Dim(2 * width)) * Dim(per_pair);
        s.spec = {outer, l, inner, in_float, U(width), U((p + 1) % 2), U(chunk)};
        s.detail = StrFormat("merge sort pass %lld of %lld", static_cast<long long>(p + 1),
                             static_cast<long long>(passes));
        r.dispatches.push_back(std::move(s));
      }
      IndexDispatch f;
      f.kernel = "unique_flags";
      f.inputs = {n.inputs[0]};
      f.outputs = {5};
      f.scratch = {0};
      f.units = l;
      f.spec = {outer, l, inner, in_float, half, sorted};
      f.detail = "run starts";
      r.dispatches.push_back(std::move(f));
      // Scans in segments of 256 chunks (shaders/unique_scan.comp: 2 * chunk +
      // 256 iterations per invocation within kLoopBudget).
      const int64_t scan_chunk =
          std::min<int64_t>((std::max<int64_t>(l_max, 1) + 255) / 256, (kLoopBudget - 512) / 2);
      const int64_t segment = 256 * scan_chunk, segments = (std::max<int64_t>(l_max, 1) + segment - 1) / segment;
      for (int ranks = 1; ranks >= (sorted ? 1 : 0); --ranks)
        for (int64_t sg = 0; sg < segments; ++sg) {
          IndexDispatch c;
          c.kernel = "unique_scan";
          c.outputs = ranks ? std::vector<size_t>{4} : std::vector<size_t>{4, 5};
          c.scratch = ranks ? std::vector<size_t>{0, 1} : std::vector<size_t>{0};
          c.units = 256;
          c.spec = {l, U(sg * segment), U(scan_chunk), ranks ? Dim(0) : (half ? Dim(0) : l), U(ranks)};
          c.detail = std::string(ranks ? "ranks" : "first occurrence order") +
                     (segments > 1 ? StrFormat(" (segment %lld of %lld)", static_cast<long long>(sg + 1),
                                               static_cast<long long>(segments))
                                   : std::string());
          r.dispatches.push_back(std::move(c));
        }
      d.kernel = "unique_emit";
      d.outputs = {0, 1, 2, 3, 4, 5};
      d.scratch = {0, 1};
      d.units = l;
      d.spec = {outer, l, inner, sorted, half};
      d.detail = order;
    }
  } else if (op == "NonZero") {  // shaders/nonzero.comp
    // One workgroup per segment of 256 chunks, each continuing the count
    // (shaders/nonzero.comp: chunk * (2 + rank) + 256 iterations per
    // invocation within kLoopBudget).
    const int64_t n_max = std::max<int64_t>(PlannedMax(x.numel()), 1);
    const int64_t chunk = std::min<int64_t>((n_max + 255) / 256, (kLoopBudget - 512) / (2 + rank));
    const int64_t segment = 256 * chunk, segments = (n_max + segment - 1) / segment;
    d.kernel = "nonzero";
    d.outputs = {0, 1};
    d.units = 256;
    d.spec = {x.numel(), U(rank), in_float};
    Push(&d.spec, std::vector<Dim>(xs.begin(), xs.end()));
    while (d.spec.size() < 9) d.spec.push_back(1);
    d.spec.push_back(0);
    d.spec.push_back(U(chunk));
    for (int64_t s = 1; s < segments; ++s) {
      r.dispatches.push_back(d);
      d.spec[9] = U(s * segment);
      d.detail = StrFormat("segment %lld of %lld", static_cast<long long>(s + 1), static_cast<long long>(segments));
    }
  } else if (op == "Pad") {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<Dim> pads, PadAmounts(g, n, rank));
    bool has_value = g.opset >= 11 && n.inputs.size() > 2 && !n.inputs[2].empty();
    uint32_t value_bits = 0;
    if (g.opset < 11) {
      float f = n.GetFloat("value", 0.f);
      if (in_float) std::memcpy(&value_bits, &f, 4);
      else value_bits = U(static_cast<int64_t>(f));
    }
    d.kernel = "pad";
    d.inputs.push_back(has_value ? n.inputs[2] : n.inputs[0]);
    d.spec = {U(y.numel()), U(n.GetInt("_mode", 0)), has_value ? 1u : 0u, value_bits};
    Push(&d.spec, Align6(y.shape, 1));
    Push(&d.spec, Align6(xs, 1));
    Push(&d.spec, Align6(std::vector<Dim>(pads.begin(), pads.begin() + rank), 0));
    d.detail = n.GetString("mode", "constant");
  } else {  // MaxPool with Indices
    if (xs.size() != 4) return LErr(n, "only 2-D pooling (4-D input) is supported");
    const Shape& ys = y.shape;
    std::vector<int64_t> k = n.GetInts("kernel_shape", {}), st = n.GetInts("strides", {1, 1}),
                         dl = n.GetInts("dilations", {1, 1}), pd = n.GetInts("_pads", {0, 0, 0, 0});
    if (k.size() != 2 || st.size() != 2 || dl.size() != 2 || pd.size() != 4)
      return Internal("node '" + n.name + "': MaxPool window attributes missing");
    int64_t so = n.GetInt("storage_order", 0);
    d.kernel = "maxpool_indices";
    d.outputs = {0, 1};
    d.spec = {U(xs[0] * xs[1]), U(xs[2]), U(xs[3]), U(ys[2]), U(ys[3]), U(k[0]), U(k[1]), U(st[0]), U(st[1]),
              U(pd[0]), U(pd[1]), U(dl[0]), U(dl[1]), so ? 1u : 0u, in_float};
    d.detail = StrFormat("%lldx%lld storage_order=%lld", static_cast<long long>(k[0]), static_cast<long long>(k[1]),
                         static_cast<long long>(so));
  }
  for (size_t o : d.outputs)
    if (o < n.outputs.size() && !n.outputs[o].empty() &&
        IsFloatLike(g.FindTensor(n.outputs[o])->dtype) != (o == 0 && op != "NonZero" ? in_float != 0 : false) &&
        op != "TrainingDropout" && op != "RandomUniformLike" && op != "RandomNormalLike")
      return LErr(n, "output '" + n.outputs[o] + "' has an unexpected data type");
  r.dispatches.push_back(std::move(d));
  return r;
}

}  // namespace oaaxvk::toolchain

#include "toolchain/passes/split_large.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"
#include "toolchain/ir/limits.h"

namespace oaaxvk::toolchain {

namespace {

// The device stores every float weight as float32 (lower.h Value::bytes).
constexpr uint64_t kDeviceElementBytes = 4;

// Columns per piece are rounded down to these multiples when the limit allows:
// gemm.glsl works in 64-column panels and the CPU kernels read vec4 texels, so
// aligned pieces keep the fast kernels.
constexpr int64_t kPanel = 64, kVec4 = 4;

std::string Bytes(uint64_t b) { return std::to_string(b) + " bytes"; }

// Elements [begin, end) of `t` along `axis`, as a new constant of t's dtype.
Tensor SliceConst(const Tensor& t, size_t axis, int64_t begin, int64_t end) {
  const size_t esz = DTypeSize(t.dtype);
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= t.shape[a].value();
  for (size_t a = axis + 1; a < t.shape.size(); ++a) inner *= t.shape[a].value();
  const int64_t d = t.shape[axis].value(), len = end - begin;
  Tensor s;
  s.dtype = t.dtype;
  s.shape = t.shape;
  s.shape[axis] = Dim(len);
  s.has_shape = true;
  s.is_const = true;
  s.data.resize(static_cast<size_t>(outer * len * inner) * esz);
  const size_t row = static_cast<size_t>(len * inner) * esz;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(s.data.data() + static_cast<size_t>(o) * row,
                t.data.data() + (static_cast<size_t>(o * d + begin) * static_cast<size_t>(inner)) * esz, row);
  return s;
}

// How one node's weight is split: which input, along which of its axes, the
// axis of the output that grows with it, and the bias input sliced with it.
struct SplitSite {
  size_t weight_input = 1;
  size_t weight_axis = 0;
  size_t out_axis = 0;
  int bias_input = -1;   // -1: none
  size_t bias_axis = 0;  // axis of the bias that has the weight's N entries
};

std::string Where(const Node& n) { return n.op_type + " '" + n.name + "'"; }

// The site of `n`, or false when `n` is not an operator this pass splits or
// its weight is not a constant float tensor.
bool FindSite(const Graph& g, const Node& n, SplitSite* s) {
  if (n.outputs.size() != 1 || n.inputs.size() < 2 || !g.IsConst(n.inputs[1])) return false;
  const Tensor& w = *g.FindTensor(n.inputs[1]);
  const Tensor* y = g.FindTensor(n.outputs[0]);
  if (w.dtype != DType::kFloat || !y || !y->has_shape || y->shape.empty()) return false;
  if (n.op_type == "Gemm") {
    if (w.shape.size() != 2) return false;
    s->weight_axis = n.GetInt("transB", 0) ? 0 : 1;
    s->out_axis = 1;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) s->bias_input = 2;
    return true;
  }
  if (n.op_type == "MatMul") {
    if (w.shape.size() < 2) return false;  // a vector B has no output axis to split
    s->weight_axis = w.shape.size() - 1;
    s->out_axis = y->shape.size() - 1;
    return true;
  }
  if (n.op_type == "Conv") {
    if (n.GetInt("group", 1) != 1 || w.shape.size() < 3) return false;
    s->weight_axis = 0;
    s->out_axis = 1;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) s->bias_input = 2;
    return true;
  }
  return false;
}

}  // namespace

Status SplitLargeWeights(Graph& g, PassResult* r) {
  r->name = "large weight splitting";
  r->nodes_before = g.nodes.size();
  r->details.clear();
  const uint64_t limit = CurrentLimits().max_binding_bytes;
  const std::string limit_text = "max_binding_bytes = " + std::to_string(limit);
  std::vector<Node> out;
  out.reserve(g.nodes.size());
  for (Node& n : g.nodes) {
    SplitSite site;
    if (!FindSite(g, n, &site)) {
      out.push_back(std::move(n));
      continue;
    }
    // g.tensors (a std::map) grows below; references to its elements stay valid.
    const Tensor& w = *g.FindTensor(n.inputs[site.weight_input]);
    uint64_t elements = 0;
    if (!CheckedProduct(w.shape, &elements)) return Internal("weight '" + w.name + "' has an invalid shape");
    const uint64_t bytes = elements * kDeviceElementBytes;
    if (bytes <= limit) {
      out.push_back(std::move(n));
      continue;
    }
    const int64_t cols = w.shape[site.weight_axis].value();
    const uint64_t col_bytes = bytes / static_cast<uint64_t>(cols);
    const std::string what = Where(n) + ": weight '" + w.name + "' " + ShapeToString(w.shape) + " is " + Bytes(bytes) +
                             ", over the binding limit " + limit_text;
    const std::string fix = " (raise max_binding_bytes in config.json \"limits\" when every target device's "
                            "maxStorageBufferRange allows it)";
    if (col_bytes > limit)
      return ResourceExhausted(what + ", and one output " + (n.op_type == "Conv" ? "channel" : "column") +
                               " alone takes " + Bytes(col_bytes) + ", so splitting along the output axis cannot "
                               "make it fit" + fix);
    int64_t per = static_cast<int64_t>(limit / col_bytes);
    const int64_t align = per >= kPanel ? kPanel : per >= kVec4 ? kVec4 : 1;
    per = per / align * align;
    const int64_t pieces = (cols + per - 1) / per;
    // Balanced pieces, each a multiple of `align` (still <= per) except the last.
    const int64_t step = std::min(per, ((cols + pieces - 1) / pieces + align - 1) / align * align);

    const Tensor* bias = site.bias_input >= 0 ? g.FindTensor(n.inputs[site.bias_input]) : nullptr;
    bool slice_bias = false;
    if (bias != nullptr) {
      if (!bias->has_shape) return Internal(Where(n) + ": bias without a shape");
      // Gemm's C broadcasts over [M, N]: only a C with N entries on its last
      // axis varies along N; Conv's bias is [N].
      slice_bias = !bias->shape.empty() && bias->shape.back().value() == cols && cols > 1;
      site.bias_axis = bias->shape.size() - 1;
      if (slice_bias && !bias->is_const)
        return Unimplemented(what + ", and its bias '" + bias->name + "' is computed at run time, which this "
                             "split does not slice; make the bias a constant" + fix);
    }
    const Tensor bias_copy = slice_bias ? *bias : Tensor{};
    const Tensor y = *g.FindTensor(n.outputs[0]);
    const bool residual = n.op_type == "Conv" && n.GetInt("_residual", 0) != 0;

    std::vector<std::string> parts;
    for (int64_t begin = 0, k = 0; begin < cols; begin += step, ++k) {
      const int64_t end = std::min(cols, begin + step);
      Node p = n;
      p.name = g.UniqueName(n.name + "/split" + std::to_string(k));
      Tensor ws = SliceConst(w, site.weight_axis, begin, end);
      ws.name = g.UniqueName(w.name + "/split" + std::to_string(k));
      p.inputs[site.weight_input] = ws.name;
      g.tensors[ws.name] = std::move(ws);
      if (slice_bias) {
        Tensor bs = SliceConst(bias_copy, site.bias_axis, begin, end);
        bs.name = g.UniqueName(bias_copy.name + "/split" + std::to_string(k));
        p.inputs[site.bias_input] = bs.name;
        g.tensors[bs.name] = std::move(bs);
      }
      if (residual) {
        // The residual is added after the Concat, and the activation after it.
        p.inputs.resize(3);
        for (const char* a : {"_residual", "_act", "_act_alpha", "_act_beta"}) p.attrs.erase(a);
      }
      Tensor ys;
      ys.name = g.UniqueName(y.name + "/split" + std::to_string(k));
      ys.dtype = y.dtype;
      ys.shape = y.shape;
      ys.shape[site.out_axis] = Dim(end - begin);
      ys.has_shape = true;
      p.outputs = {ys.name};
      parts.push_back(ys.name);
      g.tensors[ys.name] = std::move(ys);
      out.push_back(std::move(p));
    }
    Node cat;
    cat.op_type = "Concat";
    cat.name = g.UniqueName(n.name + "/concat");
    cat.inputs = parts;
    cat.SetInt("axis", static_cast<int64_t>(site.out_axis));
    if (residual) {
      Tensor joined = y;
      joined.name = g.UniqueName(y.name + "/joined");
      cat.outputs = {joined.name};
      g.tensors[joined.name] = std::move(joined);
      Node add;
      add.op_type = "Add";
      add.name = g.UniqueName(n.name + "/residual");
      add.inputs = {cat.outputs[0], n.inputs[3]};
      add.outputs = n.outputs;
      for (const char* a : {"_act", "_act_alpha", "_act_beta"})
        if (n.HasAttr(a)) add.attrs[a] = n.attrs.at(a);
      out.push_back(std::move(cat));
      out.push_back(std::move(add));
    } else {
      cat.outputs = n.outputs;
      out.push_back(std::move(cat));
    }
    r->details.push_back(StrFormat("split %s: weight '%s' %s (%llu bytes) into %zu pieces of at most %lld %s "
                                   "(%s)", Where(n).c_str(), w.name.c_str(), ShapeToString(w.shape).c_str(),
                                   static_cast<unsigned long long>(bytes), parts.size(),
                                   static_cast<long long>(step), n.op_type == "Conv" ? "channels" : "columns",
                                   limit_text.c_str()));
  }
  g.nodes = std::move(out);
  r->nodes_after = g.nodes.size();
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain

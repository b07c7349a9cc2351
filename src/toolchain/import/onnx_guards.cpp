#include "toolchain/import/onnx_guards.h"

#include <map>
#include <set>
#include <string>

#include "oaax_vulkan/oinf.h"
#include "onnx/onnx_pb.h"

namespace oaaxvk::toolchain {

namespace {

// Ranks known before inference: initializers, and graph inputs and
// value_info entries that carry a shape.
std::map<std::string, int> KnownRanks(const onnx::GraphProto& g, const std::map<std::string, int>& outer) {
  std::map<std::string, int> r = outer;
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      r[vi.name()] = vi.type().tensor_type().shape().dim_size();
  };
  for (const auto& vi : g.input()) add(vi);
  for (const auto& vi : g.value_info()) add(vi);
  for (const auto& t : g.initializer()) r[t.name()] = t.dims_size();
  return r;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::string NodeName(const onnx::NodeProto& n) {
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

Status CheckWindowAttributes(const onnx::NodeProto& n, int spatial) {
  for (const char* name : {"kernel_shape", "strides", "dilations", "pads"}) {
    const onnx::AttributeProto* a = Attr(n, name);
    if (!a) continue;
    const int want = std::string(name) == "pads" ? 2 * spatial : spatial;
    if (a->type() != onnx::AttributeProto::INTS || a->ints_size() != want)
      return InvalidArgument(NodeName(n) + ": attribute '" + name + "' must be a list of " + std::to_string(want) +
                             " integers for " + std::to_string(spatial) + " spatial dimensions (it has " +
                             std::to_string(a->ints_size()) + ")");
  }
  return Status::Ok();
}

Status CheckGraph(const onnx::GraphProto& g, const std::map<std::string, int>& outer) {
  const std::map<std::string, int> ranks = KnownRanks(g, outer);
  std::set<std::string> produced;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) produced.insert(o);
  auto rank_of = [&](const std::string& name) {
    auto it = ranks.find(name);
    return it == ranks.end() ? -1 : it->second;
  };
  for (const onnx::NodeProto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g()) OAAXVK_RETURN_IF_ERROR(CheckGraph(a.g(), ranks));
      for (const auto& sg : a.graphs()) OAAXVK_RETURN_IF_ERROR(CheckGraph(sg, ranks));
    }
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    const std::string& op = n.op_type();
    const bool conv = op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "QLinearConv";
    const bool pool = op == "MaxPool" || op == "AveragePool" || op == "LpPool";
    if (!conv && !pool) continue;
    const int w_index = op == "QLinearConv" ? 3 : 1;
    if (n.input_size() < 1 || (conv && n.input_size() <= w_index)) continue;  // the checker reports the arity
    const int x_rank = rank_of(n.input(0));
    if (x_rank >= 0 && x_rank < 3)
      return InvalidArgument(NodeName(n) + ": input '" + n.input(0) + "' has rank " + std::to_string(x_rank) +
                             "; " + op + " needs [N, C, spatial...] (rank 3 or more)");
    if (pool && !Attr(n, "kernel_shape"))
      return InvalidArgument(NodeName(n) + ": attribute 'kernel_shape' is required");
    int spatial = x_rank >= 0 ? x_rank - 2 : -1;
    if (conv) {
      const std::string& w = n.input(w_index);
      const int w_rank = rank_of(w);
      if (w_rank < 0 && !produced.count(w) && !outer.count(w))
        return InvalidArgument(NodeName(n) + ": weight '" + w + "' has no known type (give it a shape)");
      if (w_rank >= 0 && w_rank < 3)
        return InvalidArgument(NodeName(n) + ": weight '" + w + "' has rank " + std::to_string(w_rank) +
                               "; " + op + " weights are [M, C/group, kernel...] (rank 3 or more)");
      if (w_rank >= 0 && x_rank >= 0 && w_rank != x_rank)
        return InvalidArgument(NodeName(n) + ": weight '" + w + "' has rank " + std::to_string(w_rank) +
                               " but input '" + n.input(0) + "' has rank " + std::to_string(x_rank) +
                               " (they must be equal)");
      if (spatial < 0 && w_rank >= 0) spatial = w_rank - 2;
    }
    if (spatial < 0) {
      const onnx::AttributeProto* k = Attr(n, "kernel_shape");
      if (k) spatial = k->ints_size();
    }
    if (spatial >= 0) OAAXVK_RETURN_IF_ERROR(CheckWindowAttributes(n, spatial));
  }
  return Status::Ok();
}

}  // namespace

Status CheckShapeInferenceGuards(const onnx::GraphProto& graph) { return CheckGraph(graph, {}); }

Status CheckNamesAreUtf8(const onnx::GraphProto& g) {
  auto check = [&](const std::string& name, const char* what) {
    if (oinf::IsValidUtf8(name)) return Status::Ok();
    std::string shown;
    for (unsigned char ch : name) shown += ch >= 0x20 && ch < 0x7f ? std::string(1, static_cast<char>(ch)) : "?";
    return InvalidArgument(std::string(what) + " '" + shown + "' of graph '" + (oinf::IsValidUtf8(g.name()) ? g.name() : "?") +
                           "' is not well-formed UTF-8 (ONNX names are UTF-8 strings); re-export the model or rename it");
  };
  OAAXVK_RETURN_IF_ERROR(check(g.name(), "the name"));
  for (const auto& vi : g.input()) OAAXVK_RETURN_IF_ERROR(check(vi.name(), "graph input"));
  for (const auto& vi : g.output()) OAAXVK_RETURN_IF_ERROR(check(vi.name(), "graph output"));
  // Symbolic dimensions become the bundle's symbol names.
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& vi : *list)
      if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
        for (const auto& d : vi.type().tensor_type().shape().dim())
          if (d.has_dim_param()) OAAXVK_RETURN_IF_ERROR(check(d.dim_param(), "symbolic dimension"));
  for (const auto& t : g.initializer()) OAAXVK_RETURN_IF_ERROR(check(t.name(), "initializer"));
  for (const auto& n : g.node()) {
    OAAXVK_RETURN_IF_ERROR(check(n.name(), "node name"));
    for (const auto& x : n.input()) OAAXVK_RETURN_IF_ERROR(check(x, "node input"));
    for (const auto& x : n.output()) OAAXVK_RETURN_IF_ERROR(check(x, "node output"));
    for (const auto& a : n.attribute()) {
      if (a.has_g()) OAAXVK_RETURN_IF_ERROR(CheckNamesAreUtf8(a.g()));
      for (const auto& sg : a.graphs()) OAAXVK_RETURN_IF_ERROR(CheckNamesAreUtf8(sg));
    }
  }
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain

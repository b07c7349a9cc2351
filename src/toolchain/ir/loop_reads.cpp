#include "toolchain/ir/loop_reads.h"

#include <algorithm>
#include <map>

#include "toolchain/ir/limits.h"
#include "toolchain/ir/loop_nodes.h"

namespace oaaxvk::toolchain {

namespace {

const char kValueMark[] = "/value[";

// A static integer tensor of 1 to kMaxLoopReadElements elements.
bool IsSmallInt(const Tensor* t) {
  if (t == nullptr || !t->has_shape || (t->dtype != DType::kInt64 && t->dtype != DType::kInt32) ||
      AnySymbolic(t->shape))
    return false;
  const int64_t n = NumElements(t->shape).value();
  return n >= 1 && n <= kMaxLoopReadElements;
}

// Whether input `k` of an `op` node is a value that sizes its outputs.
bool IsShapeSlot(const std::string& op, size_t k) {
  if (op == "ConstantOfShape") return k == 0;
  if (op == "Resize" || op == "Slice" || op == "Pad" || op == "Range") return true;
  return k == 1 && (op == "Reshape" || op == "Expand" || op == "Tile" || op == "Upsample" || op == "TopK" ||
                    op == "Split" || op == "CenterCropPad" || op == "OneHot");
}

// Whether integer tensor `t` reaches a shape input through nodes whose
// results are small integer tensors too (shape arithmetic).
bool ReachesShapeSlot(const Graph& g, const std::map<std::string, std::vector<size_t>>& consumers,
                      const std::string& t) {
  std::vector<std::string> todo{t};
  std::set<std::string> seen{t};
  while (!todo.empty()) {
    const std::string v = todo.back();
    todo.pop_back();
    auto it = consumers.find(v);
    if (it == consumers.end()) continue;
    for (size_t i : it->second) {
      const Node& c = g.nodes[i];
      for (size_t k = 0; k < c.inputs.size(); ++k)
        if (c.inputs[k] == v && IsShapeSlot(c.op_type, k)) return true;
      for (const std::string& o : c.outputs)
        if (!o.empty() && IsSmallInt(g.FindTensor(o)) && seen.insert(o).second) todo.push_back(o);
    }
  }
  return false;
}

}  // namespace

std::vector<Symbol> FindLoopReads(const Graph& g) {
  std::vector<Symbol> out;
  std::vector<std::vector<size_t>> bodies;
  std::vector<int64_t> ends;
  if (!FindLoopBodies(g, &bodies, &ends).ok()) return out;  // the compilation reports it
  if (std::all_of(bodies.begin(), bodies.end(), [](const std::vector<size_t>& b) { return b.empty(); })) return out;
  const auto consumers = g.Consumers();
  // Tensors computed from constants and shapes only (a Shape, then
  // arithmetic, a ConstantOfShape, comparisons): the passes fold them, so
  // they are never device data, whatever ONNX's shape inference left unknown
  // about them at import.
  std::set<std::string> from_shapes;
  for (const auto& [name, t] : g.tensors)
    if (t.is_const) from_shapes.insert(name);
  for (const Node& n : g.nodes) {
    bool all = n.op_type == "Shape" || n.op_type == "Size";
    if (!all && !IsLoopNode(n) && !n.inputs.empty()) {
      all = true;
      for (const std::string& x : n.inputs) all = all && (x.empty() || from_shapes.count(x));
    }
    if (all)
      for (const std::string& o : n.outputs) from_shapes.insert(o);
  }
  const int64_t limit = static_cast<int64_t>(std::min<uint64_t>(CurrentLimits().max_loop_read_value, INT32_MAX));
  for (size_t b = 0; b < bodies.size(); ++b) {
    if (bodies[b].empty()) continue;
    const Node& begin = g.nodes[b];
    for (size_t i : bodies[b]) {
      const Node& n = g.nodes[i];
      if (n.op_type == "Shape" || n.op_type == "Size" || n.op_type == "_LoopRead") continue;  // sizes, not data
      // The node extracts small integers from device data: it reads a
      // tensor that is neither a constant, nor a value of the loop itself
      // (the iteration number), nor a small integer tensor (shape
      // arithmetic, which folds once its inputs are symbols).
      bool from_data = false;
      for (const std::string& x : n.inputs) {
        if (x.empty() || std::find(begin.outputs.begin(), begin.outputs.end(), x) != begin.outputs.end()) continue;
        const Tensor* xt = g.FindTensor(x);
        from_data = from_data || (xt != nullptr && !from_shapes.count(x) && !IsSmallInt(xt));
      }
      if (!from_data) continue;
      for (const std::string& o : n.outputs) {
        const Tensor* t = o.empty() ? nullptr : g.FindTensor(o);
        if (!IsSmallInt(t) || t->is_const || !ReachesShapeSlot(g, consumers, o)) continue;
        const int64_t numel = NumElements(t->shape).value();
        for (int64_t j = 0; j < numel; ++j) {
          Symbol y(o + kValueMark + std::to_string(j) + "]", -limit, limit, 1);
          y.decided = true;
          out.push_back(std::move(y));
        }
      }
    }
  }
  return out;
}

Status InsertLoopReads(Graph& g, const std::vector<Symbol>& symbols, const std::vector<int64_t>& point,
                       std::set<std::string>* used) {
  // tensor -> (element, symbol index), in symbol order.
  std::map<std::string, std::vector<std::pair<int64_t, size_t>>> reads;
  std::vector<std::string> order;
  for (size_t k = 0; k < symbols.size(); ++k) {
    const Symbol& y = symbols[k];
    const size_t m = y.name.rfind(kValueMark);
    if (!y.decided || m == std::string::npos || y.name.back() != ']') continue;
    const std::string index = y.name.substr(m + sizeof(kValueMark) - 1, y.name.size() - m - sizeof(kValueMark));
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string tensor = y.name.substr(0, m);
    if (!reads.count(tensor)) order.push_back(tensor);
    reads[tensor].push_back({std::stoll(index), k});
    used->insert(y.name);
  }
  if (reads.empty()) return Status::Ok();
  std::vector<std::vector<size_t>> bodies;
  std::vector<int64_t> ends;
  OAAXVK_RETURN_IF_ERROR(FindLoopBodies(g, &bodies, &ends));
  for (const std::string& tensor : order) {
    const std::vector<std::pair<int64_t, size_t>>& els = reads[tensor];
    const Tensor* t = g.FindTensor(tensor);
    const int p = g.Producer(tensor);
    if (t == nullptr || p < 0 || !IsSmallInt(t) || NumElements(t->shape).value() != static_cast<int64_t>(els.size()))
      return Internal("dynamic shapes: the value '" + tensor + "' read back inside a loop body is missing or has "
                      "another number of elements");
    std::string loop;
    for (size_t b = 0; b < bodies.size() && loop.empty(); ++b)
      if (std::find(bodies[b].begin(), bodies[b].end(), static_cast<size_t>(p)) != bodies[b].end())
        loop = g.nodes[b].GetString("_loop", g.nodes[b].name);
    if (loop.empty()) return Internal("dynamic shapes: the value '" + tensor + "' is not computed in a loop body");
    Node r;
    r.op_type = "_LoopRead";
    r.name = tensor + "#read";
    r.inputs = {tensor};
    const std::string value = g.UniqueName(tensor + "#read");
    std::vector<int64_t> syms(els.size()), values(els.size());
    for (const auto& [j, k] : els) {
      if (j < 0 || static_cast<size_t>(j) >= els.size())
        return Internal("dynamic shapes: symbol '" + symbols[k].name + "' names no element of '" + tensor + "'");
      syms[static_cast<size_t>(j)] = static_cast<int64_t>(k);
      values[static_cast<size_t>(j)] = point.at(k);
    }
    r.SetInts("_read_syms", std::move(syms));
    r.SetInts("_read_values", std::move(values));
    r.SetString("_loop", loop);
    r.SetString("_read_node", g.nodes[static_cast<size_t>(p)].name);
    r.SetString("_read_value", value);
    g.ReplaceUses(tensor, value);
    g.nodes.insert(g.nodes.begin() + p + 1, std::move(r));
    OAAXVK_RETURN_IF_ERROR(InferLoopReadShape(g, g.nodes[static_cast<size_t>(p) + 1]));
  }
  return Status::Ok();
}

Status InferLoopReadShape(Graph& g, Node& n) {
  const Tensor* x = n.inputs.size() == 1 ? g.FindTensor(n.inputs[0]) : nullptr;
  const std::vector<int64_t> syms = n.GetInts("_read_syms", {}), values = n.GetInts("_read_values", {});
  SymContext* c = SymContext::Current();
  const std::string value = n.GetString("_read_value", "");
  if (x == nullptr || value.empty() || !n.outputs.empty() || !IsSmallInt(x) ||
      NumElements(x->shape).value() != static_cast<int64_t>(syms.size()) || values.size() != syms.size())
    return Internal("node '" + n.name + "': malformed _LoopRead");
  std::vector<Dim> dims;
  for (size_t j = 0; j < syms.size(); ++j) {
    if (c == nullptr || syms[j] < 0 || static_cast<size_t>(syms[j]) >= c->symbols().size())
      return Internal("node '" + n.name + "': the value read back inside the loop body has no decided symbol (only "
                      "the conversion driver compiles it)");
    dims.push_back(Dim(values[j], c->SymbolNode(static_cast<size_t>(syms[j]))));
  }
  Tensor t = MakeConstFromDoubles(value, x->dtype, x->shape, std::vector<double>(values.begin(), values.end()));
  t.sym = std::move(dims);
  g.tensors[value] = std::move(t);
  return Status::Ok();
}

bool ReadsSymbols(const Tensor& t, const std::set<int64_t>& syms) {
  const SymContext* c = SymContext::Current();
  if (c == nullptr || syms.empty()) return false;
  std::vector<int32_t> stack;
  for (const std::vector<Dim>* ds : {&t.shape, &t.sym})
    for (const Dim& d : *ds)
      if (d.is_symbolic()) stack.push_back(d.expr());
  std::set<int32_t> seen;
  while (!stack.empty()) {
    const int32_t e = stack.back();
    stack.pop_back();
    if (e < 0 || static_cast<size_t>(e) >= c->nodes().size() || !seen.insert(e).second) continue;
    const SymNode& s = c->nodes()[static_cast<size_t>(e)];
    if (s.op == SymOp::kSymbol) {
      if (syms.count(s.a)) return true;
    } else if (s.op != SymOp::kConst) {
      stack.push_back(static_cast<int32_t>(s.a));
      stack.push_back(static_cast<int32_t>(s.b));
    }
  }
  return false;
}

}  // namespace oaaxvk::toolchain

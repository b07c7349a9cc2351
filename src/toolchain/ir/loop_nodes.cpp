#include "toolchain/ir/loop_nodes.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "toolchain/ir/dim.h"
#include "toolchain/ir/limits.h"
#include "toolchain/ir/loop_reads.h"

namespace oaaxvk::toolchain {

namespace {

// Placeholder slots (import/control_flow.cpp DeviceLoop).
constexpr int64_t kSlotTrip = 0, kSlotIteration = 1, kSlotCond = 2, kSlotState = 10;
constexpr int64_t kSlotCondOut = 1000, kSlotStateOut = 2000, kSlotScan = 3000;

Status LoopError(const std::string& loop, const std::string& msg) {
  return Unimplemented("node '" + loop + "' (Loop): " + msg);
}

}  // namespace

Status MergeLoopPlaceholders(Graph& g) {
  struct Parts {
    std::map<int64_t, size_t> slots;  // slot -> node index
    size_t first = 0, last = 0;
  };
  std::map<std::string, Parts> loops;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.HasAttr("_loop") || !n.HasAttr("_loop_slot") || IsLoopNode(n)) continue;
    const std::string name = n.GetString("_loop", "");
    // Only the import writes these attributes; a model's own node carrying
    // them is not a placeholder.
    if ((n.op_type != "Identity" && n.op_type != "Unsqueeze") || n.inputs.empty() || n.outputs.size() != 1)
      return InvalidArgument("node '" + n.name + "' (" + n.op_type + ") carries the attributes _loop and _loop_slot, "
                             "which the toolchain reserves for the Loops it compiles; remove them from the model");
    auto [it, fresh] = loops.emplace(name, Parts{});
    if (fresh) it->second.first = i;
    it->second.last = i;
    if (!it->second.slots.emplace(n.GetInt("_loop_slot", -1), i).second)
      return Internal("device Loop '" + name + "': two placeholders of one slot");
  }
  if (loops.empty()) return Status::Ok();
  std::map<size_t, Node> replace;  // node index -> the node replacing it
  std::set<size_t> drop;
  for (const auto& loop : loops) {
    const auto& name = loop.first;
    const auto& parts = loop.second;  // a reference lambdas may capture (not a structured binding: C++17)
    auto input = [&](int64_t slot) -> std::string {
      auto it = parts.slots.find(slot);
      return it == parts.slots.end() ? std::string() : g.nodes[it->second].inputs.at(0);
    };
    auto output = [&](int64_t slot) -> std::string {
      auto it = parts.slots.find(slot);
      return it == parts.slots.end() ? std::string() : g.nodes[it->second].outputs.at(0);
    };
    if (!parts.slots.count(kSlotIteration) || !parts.slots.count(kSlotCond) || !parts.slots.count(kSlotCondOut))
      return Internal("device Loop '" + name + "': placeholders missing");
    int64_t states = 0, scans = 0;
    while (parts.slots.count(kSlotState + states)) ++states;
    while (parts.slots.count(kSlotScan + scans)) ++scans;
    Node begin, end;
    begin.name = name + "/begin";
    begin.op_type = "_LoopBegin";
    begin.inputs = {input(kSlotTrip), input(kSlotCond)};
    begin.outputs = {output(kSlotIteration), output(kSlotCond)};
    end.name = name + "/end";
    end.op_type = "_LoopEnd";
    end.inputs = {input(kSlotCondOut)};
    for (int64_t k = 0; k < states; ++k) {
      if (!parts.slots.count(kSlotStateOut + k)) return Internal("device Loop '" + name + "': state result missing");
      begin.inputs.push_back(input(kSlotState + k));
      begin.outputs.push_back(output(kSlotState + k));
      end.inputs.push_back(input(kSlotStateOut + k));
      end.outputs.push_back(output(kSlotStateOut + k));
    }
    for (int64_t k = 0; k < scans; ++k) {
      end.inputs.push_back(input(kSlotScan + k));
      end.outputs.push_back(output(kSlotScan + k));
    }
    end.inputs.push_back(output(kSlotCond));  // the link to _LoopBegin
    for (Node* n : {&begin, &end}) {
      n->SetString("_loop", name);
      n->SetInt("_loop_states", states);
    }
    // The condition's placeholder output is read by nothing: _LoopEnd takes
    // the body's condition itself.
    const std::string unused = output(kSlotCondOut);
    size_t first_end = g.nodes.size();
    for (const auto& [slot, i] : parts.slots) {
      drop.insert(i);
      if (slot >= kSlotCondOut) first_end = std::min(first_end, i);
    }
    // Every begin placeholder precedes the body and every end one follows it.
    for (const auto& [slot, i] : parts.slots)
      if ((slot < kSlotCondOut) != (i < first_end))
        return Internal("device Loop '" + name + "': placeholders out of order");
    replace[parts.first] = std::move(begin);
    replace[parts.last] = std::move(end);
    g.tensors.erase(unused);
  }
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto r = replace.find(i);
    if (r != replace.end()) nodes.push_back(std::move(r->second));
    else if (!drop.count(i)) nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
  return Status::Ok();
}

Status InferLoopNodeShapes(Graph& g, Node& n) {
  const std::string loop = n.GetString("_loop", n.name);
  const size_t states = static_cast<size_t>(n.GetInt("_loop_states", 0));
  auto set = [&](const std::string& name, DType dt, Shape s) {
    if (name.empty()) return;
    Tensor& t = g.tensors[name];
    t.name = name;
    t.dtype = dt;
    t.shape = std::move(s);
    t.has_shape = true;
  };
  auto in = [&](const std::string& name) -> const Tensor* {
    const Tensor* t = name.empty() ? nullptr : g.FindTensor(name);
    return t != nullptr && t->has_shape ? t : nullptr;
  };
  if (n.op_type == "_LoopBegin") {
    if (n.inputs.size() != 2 + states || n.outputs.size() != 2 + states)
      return Internal("node '" + n.name + "': malformed _LoopBegin");
    set(n.outputs[0], DType::kInt64, {});
    set(n.outputs[1], DType::kBool, {});
    for (size_t k = 0; k < states; ++k) {
      const Tensor* x = in(n.inputs[2 + k]);
      if (x == nullptr) return LoopError(loop, "the shape of loop-carried value '" + n.inputs[2 + k] + "' is unknown");
      if (x->data_dependent_axis >= 0)
        return LoopError(loop, "the loop-carried value '" + n.inputs[2 + k] + "' has an extent only the device "
                               "knows; a device loop carries values of a shape known before it runs");
      set(n.outputs[2 + k], x->dtype, x->shape);
    }
    return Status::Ok();
  }
  // _LoopEnd: the shapes a value enters with are the _LoopBegin's.
  const Node* begin = nullptr;
  for (const Node& b : g.nodes)
    if (b.op_type == "_LoopBegin" && b.GetString("_loop", "") == loop) begin = &b;
  if (begin == nullptr || begin->inputs.size() != 2 + states || n.inputs.size() < 2 + states ||
      n.outputs.size() != n.inputs.size() - 2)
    return Internal("node '" + n.name + "': malformed _LoopEnd");
  for (size_t k = 0; k < states; ++k) {
    const Tensor* entry = in(begin->inputs[2 + k]);
    const Tensor* result = in(n.inputs[1 + k]);
    if (entry == nullptr || result == nullptr)
      return LoopError(loop, "the shape of loop-carried value " + std::to_string(k) + " is unknown");
    if (result->dtype != entry->dtype || !(result->shape == entry->shape) || result->data_dependent_axis >= 0)
      return LoopError(loop, "the loop-carried value " + std::to_string(k) + " ('" + begin->inputs[2 + k] +
                                 "') enters the loop as " + DTypeName(entry->dtype) + " " +
                                 ShapeToString(entry->shape) + " but the body returns '" + n.inputs[1 + k] + "' as " +
                                 DTypeName(result->dtype) + " " + ShapeToString(result->shape) +
                                 (result->data_dependent_axis >= 0 ? " (an extent only the device knows)" : "") +
                                 "; a loop run on the device keeps each loop-carried value in one buffer, so its "
                                 "shape and type may not change across iterations (export the model with "
                                 "fixed-size loop state, e.g. padded to its largest size)");
    set(n.outputs[k], entry->dtype, entry->shape);
  }
  // The scan outputs stack the iterations run: the count symbol.
  const int64_t cap = n.GetInt("_loop_cap", static_cast<int64_t>(CurrentLimits().max_loop_iterations));
  Dim count(cap);
  SymContext* c = SymContext::Current();
  const int64_t sym = n.GetInt("_loop_count", -1);
  if (c != nullptr && sym >= 0 && static_cast<size_t>(sym) < c->symbols().size())
    count = Dim(n.GetInt("_loop_count_value", cap), c->SymbolNode(static_cast<size_t>(sym)));
  for (size_t k = 1 + states; k + 1 < n.inputs.size(); ++k) {
    const Tensor* slice = in(n.inputs[k]);
    if (slice == nullptr) return LoopError(loop, "the shape of scan output '" + n.outputs[k - 1] + "' is unknown");
    if (slice->data_dependent_axis >= 0)
      return LoopError(loop, "the scan output '" + n.outputs[k - 1] + "' is built from '" + n.inputs[k] +
                                 "', whose extent only the device knows; a device loop stacks slices of one shape");
    Shape s = {count};
    s.insert(s.end(), slice->shape.begin(), slice->shape.end());
    set(n.outputs[k - 1], slice->dtype, std::move(s));
  }
  return Status::Ok();
}

Status FindLoopBodies(const Graph& g, std::vector<std::vector<size_t>>* body, std::vector<int64_t>* end) {
  body->assign(g.nodes.size(), {});
  end->assign(g.nodes.size(), -1);
  const auto consumers = g.Consumers();
  for (size_t b = 0; b < g.nodes.size(); ++b) {
    const Node& begin = g.nodes[b];
    if (begin.op_type != "_LoopBegin") continue;
    const std::string loop = begin.GetString("_loop", begin.name);
    std::set<size_t> in_body;
    std::vector<std::string> todo(begin.outputs.begin(), begin.outputs.end());
    while (!todo.empty()) {
      while (!todo.empty()) {
        const std::string t = todo.back();
        todo.pop_back();
        auto it = consumers.find(t);
        if (it == consumers.end()) continue;
        for (size_t i : it->second) {
          const Node& n = g.nodes[i];
          if (n.op_type == "_LoopEnd") {
            if (n.GetString("_loop", "") != loop)
              return LoopError(loop, "the body reaches the end of Loop '" + n.GetString("_loop", "") +
                                         "'; a Loop run on the device inside another one is not supported");
            (*end)[b] = static_cast<int64_t>(i);
            continue;
          }
          if (n.op_type == "_LoopBegin")
            return LoopError(loop, "the body holds Loop '" + n.GetString("_loop", "") +
                                       "', which also runs on the device; nested device loops are not supported "
                                       "(give the inner Loop a trip count known at conversion)");
          if (in_body.insert(i).second) todo.insert(todo.end(), n.outputs.begin(), n.outputs.end());
        }
      }
      // Values read back inside the body (ir/loop_reads.h) fold into
      // constants and shapes sized by their symbols: a node reading one
      // (a ConstantOfShape of such a shape) runs in every iteration too.
      // Only nodes before the _LoopEnd: a node after it reading a scan
      // output shaped by those symbols is no part of the body.
      std::set<int64_t> read_syms;
      for (size_t i : in_body)
        if (g.nodes[i].op_type == "_LoopRead")
          for (int64_t k : g.nodes[i].GetInts("_read_syms", {})) read_syms.insert(k);
      const size_t stop = (*end)[b] >= 0 ? static_cast<size_t>((*end)[b]) : g.nodes.size();
      for (size_t i = b + 1; i < stop && !read_syms.empty(); ++i) {
        const Node& n = g.nodes[i];
        if (in_body.count(i) || IsLoopNode(n)) continue;
        bool reads = false;
        for (const std::string& x : n.inputs) {
          const Tensor* xt = x.empty() ? nullptr : g.FindTensor(x);
          reads = reads || (xt != nullptr && ReadsSymbols(*xt, read_syms));
        }
        if (reads && in_body.insert(i).second) todo.insert(todo.end(), n.outputs.begin(), n.outputs.end());
      }
    }
    (*body)[b].assign(in_body.begin(), in_body.end());
  }
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain

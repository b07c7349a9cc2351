
#include "toolchain/ir/not_constant.h"
#include <set>
#include <vector>

#include "toolchain/ir/eval.h"

namespace oaaxvk::toolchain {

namespace {

std::string Join(const std::set<std::string>& names) {
  std::string r;
  for (const std::string& s : names) r += (r.empty() ? "'" : ", '") + s + "'";
  return r;
}

}  // namespace

std::string NotConstantMessage(const Graph& g, const std::string& what, const std::string& name,
                               const std::string& why) {
  std::string m = what + " input '" + name + "' is not a compile-time constant (" +
                  (why.empty() ? std::string("its value must be known at conversion") : why) + ")";
  for (const GraphIO& io : g.inputs)
    if (io.tensor == name)
      return m + "; bind it at conversion with config.json {\"input_values\": {\"" + io.name + "\": [...]}}";
  // Walk the producers back from `name`: graph inputs whose values reach it,
  // graph inputs whose shapes reach it (through Shape / Size), and the
  // nearest operator that has no constant evaluator (it runs on the device).
  std::set<std::string> seen, value_from, shape_from;
  std::string device_node;
  std::vector<std::string> todo = {name};
  auto input_name = [&](const std::string& t) -> std::string {
    for (const GraphIO& io : g.inputs)
      if (io.tensor == t) return io.name;
    return "";
  };
  for (size_t head = 0; head < todo.size() && seen.size() < 4096; ++head) {
    const std::string cur = todo[head];
    if (!seen.insert(cur).second || g.IsConst(cur)) continue;
    if (std::string in = input_name(cur); !in.empty()) {
      value_from.insert(in);
      continue;
    }
    const int p = g.Producer(cur);
    if (p < 0) continue;
    const Node& pn = g.nodes[static_cast<size_t>(p)];
    if (pn.op_type == "Shape" || pn.op_type == "Size") {
      // Only the shape is read: trace whose shape it is, not its values.
      std::vector<std::string> up = {pn.inputs.empty() ? "" : pn.inputs[0]};
      std::set<std::string> up_seen;
      for (size_t h = 0; h < up.size() && up_seen.size() < 4096; ++h) {
        if (up[h].empty() || !up_seen.insert(up[h]).second) continue;
        if (std::string in = input_name(up[h]); !in.empty()) { shape_from.insert(in); continue; }
        const int q = g.Producer(up[h]);
        if (q >= 0)
          for (const std::string& s : g.nodes[static_cast<size_t>(q)].inputs) up.push_back(s);
      }
      continue;
    }
    if (device_node.empty() && !IsEvaluableOp(pn.op_type))
      device_node = "'" + pn.name + "' (" + pn.op_type + ")";
    for (const std::string& in : pn.inputs)
      if (!in.empty()) todo.push_back(in);
  }
  if (value_from.size() == 1)
    return m + "; it is computed from graph input '" + *value_from.begin() +
           "': bind that input at conversion (config.json \"input_values\"), or name its values with ranges";
  if (!value_from.empty())
    return m + "; it is computed from graph inputs " + Join(value_from) +
           ": bind them at conversion (config.json \"input_values\")";
  bool symbolic = false;
  for (const GraphIO& io : g.inputs)
    if (shape_from.count(io.name)) {
      const Tensor* t = g.FindTensor(io.tensor);
      symbolic |= t == nullptr || !t->has_shape || AnySymbolic(t->shape);
    }
  if (!shape_from.empty() && (symbolic || device_node.empty()))
    return m + "; it is computed from the shape of graph input " + Join(shape_from) +
           ", whose sizes are not fixed: give every dimension a fixed size (config.json \"input_shapes\") or "
           "export the model with a fixed input size";
  if (!shape_from.empty())
    return m + "; it is computed from the shape of graph input " + Join(shape_from) + " through node " +
           device_node + ", which has no constant evaluator: export the model with this value as a constant "
           "(or simplify it, e.g. with onnx-simplifier, at this fixed input size)";
  if (!device_node.empty())
    return m + "; it is computed by node " + device_node +
           ", which runs on the device: export the model so that this value is a constant (a fixed input size)";
  return m + "; export the model with this value as a constant (a fixed input size)";
}

}  // namespace oaaxvk::toolchain

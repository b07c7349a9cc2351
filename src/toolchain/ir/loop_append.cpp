#include "toolchain/ir/loop_append.h"

#include <string>
#include <vector>

#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain {

namespace {

// Whether tensor `name` has a leading extent 0 that is known before shape
// inference: a static shape says so, or a ConstantOfShape builds it from a
// constant shape (or a Concat of pieces along axis 0) whose first entry is
// 0 (torchvision's `torch.zeros((0, 3, K))` with K from the model).
bool LeadsWithZero(const Graph& g, const std::string& name) {
  const Tensor* t = g.FindTensor(name);
  if (t == nullptr) return false;
  if (t->has_shape && !t->shape.empty()) return !t->shape[0].is_symbolic() && t->shape[0].value() == 0;
  const int p = g.Producer(name);
  if (p < 0 || g.nodes[static_cast<size_t>(p)].op_type != "ConstantOfShape") return false;
  std::string first = g.nodes[static_cast<size_t>(p)].inputs.at(0);
  const int q = g.Producer(first);
  if (q >= 0 && g.nodes[static_cast<size_t>(q)].op_type == "Concat" &&
      g.nodes[static_cast<size_t>(q)].GetInt("axis", 0) == 0 && !g.nodes[static_cast<size_t>(q)].inputs.empty())
    first = g.nodes[static_cast<size_t>(q)].inputs[0];
  const Tensor* s = g.FindTensor(first);
  if (s == nullptr || !s->is_const || IsFloatLike(s->dtype)) return false;
  const std::vector<int64_t> v = s->AsInts();
  return !v.empty() && v[0] == 0;
}

}  // namespace

Status StackAppendedLoopStates(Graph& g) {
  for (size_t b = 0; b < g.nodes.size(); ++b) {
    if (g.nodes[b].op_type != "_LoopBegin") continue;
    const std::string loop = g.nodes[b].GetString("_loop", g.nodes[b].name);
    int64_t e = -1;
    for (size_t i = b + 1; i < g.nodes.size() && e < 0; ++i)
      if (g.nodes[i].op_type == "_LoopEnd" && g.nodes[i].GetString("_loop", "") == loop) e = static_cast<int64_t>(i);
    if (e < 0) continue;
    for (int64_t k = g.nodes[b].GetInt("_loop_states", 0) - 1; k >= 0; --k) {
      Node& begin = g.nodes[b];
      Node& end = g.nodes[static_cast<size_t>(e)];
      const size_t in = 2 + static_cast<size_t>(k);
      if (begin.inputs.size() <= in || begin.outputs.size() <= in || end.inputs.size() <= 1 + in - 2 + 1 ||
          end.outputs.size() <= static_cast<size_t>(k))
        return Internal("node '" + begin.name + "': malformed _LoopBegin / _LoopEnd");
      const Tensor* init = g.FindTensor(begin.inputs[in]);
      if (init == nullptr || !LeadsWithZero(g, begin.inputs[in])) continue;
      const std::string state = begin.outputs[in], result = end.inputs[1 + static_cast<size_t>(k)];
      const auto consumers = g.Consumers();
      auto cs = consumers.find(state);
      auto rs = consumers.find(result);
      if (cs == consumers.end() || cs->second.size() != 1 || rs == consumers.end() || rs->second.size() != 1 ||
          g.IsGraphOutput(result))
        continue;
      // A Cast to the value's own type between it and the Concat (PyTorch
      // exports one for a list of floats) changes nothing: it goes too.
      std::string head = state;
      size_t cast = g.nodes.size();
      {
        const Node& r = g.nodes[cs->second[0]];
        // (The value's type: its initial value's; the body's view of it
        // has none before shape inference.)
        if (r.op_type == "Cast" && r.outputs.size() == 1 && init->dtype != DType::kUndefined &&
            r.GetInt("to", -1) == static_cast<int64_t>(init->dtype)) {
          auto rc = consumers.find(r.outputs[0]);
          if (rc == consumers.end() || rc->second.size() != 1 || g.IsGraphOutput(r.outputs[0])) continue;
          cast = cs->second[0];
          head = r.outputs[0];
          cs = rc;
        }
      }
      Node& cat = g.nodes[cs->second[0]];
      if (cat.op_type != "Concat" || cat.inputs.size() != 2 || cat.inputs[0] != head || cat.inputs[1] == head ||
          cat.outputs.size() != 1 || cat.outputs[0] != result || cat.GetInt("axis", 0) != 0)
        continue;
      // The Concat becomes the slice: Squeeze(appended, axes [0]).
      const std::string axes = g.UniqueName(result + "#axes");
      g.tensors[axes] = MakeConstI64(axes, {1}, {0});
      Node sq;
      sq.name = cat.name + "#slice";
      sq.op_type = "Squeeze";
      sq.inputs = {cat.inputs[1], axes};
      sq.outputs = {g.UniqueName(result + "#slice")};
      g.tensors[sq.outputs[0]].name = sq.outputs[0];
      const std::string slice = sq.outputs[0];
      cat = std::move(sq);
      g.tensors.erase(result);
      // The loop-carried value leaves both nodes; its final output becomes
      // the last scan output.
      const std::string final_out = end.outputs[static_cast<size_t>(k)];
      begin.inputs.erase(begin.inputs.begin() + static_cast<std::ptrdiff_t>(in));
      begin.outputs.erase(begin.outputs.begin() + static_cast<std::ptrdiff_t>(in));
      end.inputs.erase(end.inputs.begin() + 1 + k);
      end.outputs.erase(end.outputs.begin() + k);
      end.inputs.insert(end.inputs.end() - 1, slice);  // before the link to _LoopBegin
      end.outputs.push_back(final_out);
      begin.SetInt("_loop_states", begin.GetInt("_loop_states", 0) - 1);
      end.SetInt("_loop_states", end.GetInt("_loop_states", 0) - 1);
      g.tensors.erase(state);
      if (cast < g.nodes.size()) {
        g.tensors.erase(head);
        g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(cast));
        if (cast < static_cast<size_t>(e)) --e;
      }
    }
  }
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain

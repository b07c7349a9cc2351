#include "toolchain/driver/loop_symbols.h"

#include <algorithm>
#include <map>

#include "toolchain/ir/extent.h"
#include "toolchain/ir/limits.h"
#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {

namespace {
const char* const kSuffixes[3] = {"/trip_count", "/iterations", "/cond"};
}  // namespace

namespace {

// The trip count of _LoopBegin `n` of `g` when it is a single integer
// constant there; -1 otherwise.
int64_t ConstantTrip(const Graph& g, const Node& n) {
  const Tensor* m = n.inputs.empty() || n.inputs[0].empty() ? nullptr : g.FindTensor(n.inputs[0]);
  if (m == nullptr || !m->is_const || !m->sym.empty() || !(m->numel() == 1) || IsFloatLike(m->dtype)) return -1;
  return std::max<int64_t>(0, m->AsInts()[0]);
}

}  // namespace

std::vector<Symbol> FindDecidedLoops(const Graph& g) {
  std::vector<Symbol> out;
  // Trip counts that fold to a constant once the passes ran, with every
  // data-dependent extent at its planned largest value (a detector's
  // count of detections): their largest value (one run of the passes, only
  // for a model with such a loop).
  std::map<std::string, int64_t> folded;
  bool any = false;
  for (const Node& n : g.nodes) any = any || (n.op_type == "_LoopBegin" && !n.inputs.empty() &&
                                              !n.inputs[0].empty() && ConstantTrip(g, n) < 0);
  if (any) {
    Graph copy = g;
    ExtentRefusalRecorder recorder(/*keep_going=*/true);
    // A later refusal does not undo the folding before it (the compilation
    // reports that refusal).
    (void)RunDefaultPipeline(copy);
    for (const Node& n : copy.nodes)
      if (n.op_type == "_LoopBegin" && ConstantTrip(copy, n) >= 0)
        folded[n.GetString("_loop", n.name)] = ConstantTrip(copy, n);
  }
  for (const Node& n : g.nodes) {
    if (n.op_type != "_LoopBegin") continue;
    const std::string loop = n.GetString("_loop", n.name);
    int64_t cap = static_cast<int64_t>(std::min<uint64_t>(CurrentLimits().max_loop_iterations, INT32_MAX));
    // A constant trip count (the body may end the loop earlier) is the cap.
    const int64_t trip = ConstantTrip(g, n);
    if (trip >= 0) cap = std::min(trip, cap);
    auto f = folded.find(loop);
    if (trip < 0 && f != folded.end()) cap = std::min(f->second, cap);
    for (int k = 0; k < 3; ++k) {
      Symbol y(loop + kSuffixes[k], 0, k == 2 ? 1 : cap, 1);
      y.decided = true;
      out.push_back(std::move(y));
    }
  }
  return out;
}

Status AnnotateDecidedLoops(Graph& g, const std::vector<Symbol>& symbols, const std::vector<int64_t>& point,
                            std::set<std::string>* used) {
  for (Node& n : g.nodes) {
    if (n.op_type != "_LoopBegin" && n.op_type != "_LoopEnd") continue;
    const std::string loop = n.GetString("_loop", n.name);
    int64_t index[3] = {-1, -1, -1};
    for (size_t k = 0; k < symbols.size(); ++k)
      for (int j = 0; j < 3; ++j)
        if (symbols[k].decided && symbols[k].name == loop + kSuffixes[j]) index[j] = static_cast<int64_t>(k);
    if (std::min({index[0], index[1], index[2]}) < 0)
      return Internal("dynamic shapes: the decided symbols of device Loop '" + loop + "' are missing");
    n.SetInt("_loop_trip", index[0]);
    n.SetInt("_loop_count", index[1]);
    n.SetInt("_loop_cond", index[2]);
    n.SetInt("_loop_count_value", point.at(static_cast<size_t>(index[1])));
    n.SetInt("_loop_cap", symbols[static_cast<size_t>(index[1])].max);
    for (int j = 0; j < 3; ++j) used->insert(symbols[static_cast<size_t>(index[j])].name);
  }
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain

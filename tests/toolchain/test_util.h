// Helpers to build IR graphs in tests.
#ifndef OAAXVK_TESTS_TOOLCHAIN_TEST_UTIL_H_
#define OAAXVK_TESTS_TOOLCHAIN_TEST_UTIL_H_

#include <string>
#include <vector>

#include "toolchain/ir/graph.h"
#include "toolchain/lower/lower.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain::testing {

inline void AddInput(Graph& g, const std::string& name, const Shape& s) {
  Tensor t;
  t.name = name; t.dtype = DType::kFloat; t.shape = s; t.has_shape = true;
  g.tensors[name] = t;
  g.inputs.push_back({name, name});
}
inline void AddConst(Graph& g, const std::string& name, const Shape& s, float fill = 0.5f) {
  g.tensors[name] = MakeConstF32(name, s, std::vector<float>(NumElements(s), fill));
}
inline void AddConstI64(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  g.tensors[name] = MakeConstI64(name, {static_cast<int64_t>(v.size())}, v);
}
inline Node& AddNode(Graph& g, const std::string& op, const std::string& name, std::vector<std::string> in,
                     std::vector<std::string> out) {
  Node n;
  n.name = name; n.op_type = op; n.inputs = std::move(in); n.outputs = out;
  for (const std::string& o : out) g.tensors[o].name = o;
  g.nodes.push_back(std::move(n));
  return g.nodes.back();
}
inline void AddOutput(Graph& g, const std::string& name) { g.outputs.push_back({name, name}); }

// Folds constants, then lowers: the program the toolchain would plan for `g`.
inline StatusOr<Program> FoldAndLower(Graph& g) {
  PassResult r;
  OAAXVK_RETURN_IF_ERROR(FoldConstants(g, &r));
  return Lower(g);
}

}  // namespace oaaxvk::toolchain::testing

#endif  // OAAXVK_TESTS_TOOLCHAIN_TEST_UTIL_H_

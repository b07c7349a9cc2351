#include "toolchain/import/opset_forms.h"

#include <map>
#include <string>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace oaaxvk::toolchain {
namespace {

// Definitions newer than kLoweredOnnxOpset that the lowering implements:
// op type -> the since_version of that definition. Each entry names what
// changed and where the toolchain handles it.
const std::map<std::string, int>& LoweredNewerForms() {
  static const std::map<std::string, int> k = {
      // Opset 18 moved `axes` of every reduction from an attribute to an
      // optional input, as ReduceSum-13 already had it; the reduction shape
      // inference and lowering read either (shape_infer_float.cpp).
      {"ReduceL1", 18}, {"ReduceL2", 18}, {"ReduceLogSum", 18}, {"ReduceLogSumExp", 18},
      {"ReduceMax", 18}, {"ReduceMean", 18}, {"ReduceMin", 18}, {"ReduceProd", 18},
      {"ReduceSumSquare", 18},
      // Split-18 added `num_outputs` (equal chunks, the last one smaller);
      // passes/decompose.cpp turns it into split sizes.
      {"Split", 18},
  };
  return k;
}

int DefaultDomainOpset(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports, int fallback) {
  for (const onnx::OperatorSetIdProto& os : imports)
    if (os.domain().empty() || os.domain() == "ai.onnx") return static_cast<int>(os.version());
  return fallback;
}

void CheckGraph(const onnx::GraphProto& g, int opset, const std::string& where, std::vector<std::string>* refused) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    const std::string node = (n.name().empty() ? "#" + std::to_string(i) : n.name()) + where;
    if (n.domain().empty() || n.domain() == "ai.onnx") {
      const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
      if (s && s->SinceVersion() > kLoweredOnnxOpset) {
        auto it = LoweredNewerForms().find(n.op_type());
        if (it == LoweredNewerForms().end() || it->second != s->SinceVersion())
          refused->push_back("node '" + node + "' (" + n.op_type() + ", opset " + std::to_string(opset) + ": the " +
                             n.op_type() + "-" + std::to_string(s->SinceVersion()) + " definition)");
      }
    }
    for (const onnx::AttributeProto& a : n.attribute()) {
      const std::string sub = " in subgraph '" + a.name() + "' of node '" + node + "'";
      if (a.has_g()) CheckGraph(a.g(), opset, sub, refused);
      for (const onnx::GraphProto& sg : a.graphs()) CheckGraph(sg, opset, sub, refused);
    }
  }
}

}  // namespace

Status CheckLoweredOperatorVersions(const onnx::ModelProto& model) {
  const int opset = DefaultDomainOpset(model.opset_import(), 1);
  std::vector<std::string> refused;
  CheckGraph(model.graph(), opset, "", &refused);
  for (const onnx::FunctionProto& f : model.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = f.node();
    CheckGraph(body, DefaultDomainOpset(f.opset_import(), opset), " in function '" + f.name() + "'", &refused);
  }
  if (refused.empty()) return Status::Ok();
  std::string m = std::to_string(refused.size()) +
                  " node(s) use an operator definition newer than the toolchain lowers: ";
  for (size_t i = 0; i < refused.size(); ++i) m += (i ? "; " : "") + refused[i];
  m += ". The toolchain lowers every ai.onnx operator as defined up to opset " + std::to_string(kLoweredOnnxOpset) +
       " (and the newer forms of ReduceL1/L2/LogSum/LogSumExp/Max/Mean/Min/Prod/SumSquare-18 and Split-18); "
       "re-export the model with opset " + std::to_string(kLoweredOnnxOpset) + " or lower";
  return Unimplemented(m);
}

}  // namespace oaaxvk::toolchain

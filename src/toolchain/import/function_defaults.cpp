#include "toolchain/import/function_defaults.h"

#include <set>
#include <string>

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace oaaxvk::toolchain {
namespace {

void SpellOut(onnx::GraphProto* g, int opset) {
  for (onnx::NodeProto& n : *g->mutable_node()) {
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_g()) SpellOut(a.mutable_g(), opset);
      for (onnx::GraphProto& sg : *a.mutable_graphs()) SpellOut(&sg, opset);
    }
    if (!(n.domain().empty() || n.domain() == "ai.onnx")) continue;
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
    if (!s || !(s->HasFunction() || s->HasContextDependentFunction())) continue;
    std::set<std::string> present;
    for (const onnx::AttributeProto& a : n.attribute()) present.insert(a.name());
    for (const auto& [name, attr] : s->attributes()) {
      if (attr.required || present.count(name) || attr.default_value.type() == onnx::AttributeProto::UNDEFINED)
        continue;
      onnx::AttributeProto* added = n.add_attribute();
      *added = attr.default_value;
      added->set_name(name);
    }
  }
}

}  // namespace

void SpellOutFunctionDefaults(onnx::ModelProto& model) {
  int opset = 1;
  for (const onnx::OperatorSetIdProto& os : model.opset_import())
    if (os.domain().empty() || os.domain() == "ai.onnx") opset = static_cast<int>(os.version());
  SpellOut(model.mutable_graph(), opset);
}

}  // namespace oaaxvk::toolchain

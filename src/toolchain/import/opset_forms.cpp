#include "toolchain/import/opset_forms.h"

#include <algorithm>
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
const std::map<std::string, std::vector<int>>& LoweredNewerForms() {
  static const std::map<std::string, std::vector<int>> k = {
      // Opset 18 moved `axes` of every reduction from an attribute to an
      // optional input, as ReduceSum-13 already had it; the reduction shape
      // inference and lowering read either (shape_infer_float.cpp).
      {"ReduceL1", {18}}, {"ReduceL2", {18}}, {"ReduceLogSum", {18}}, {"ReduceLogSumExp", {18}},
      {"ReduceMax", {18, 20}}, {"ReduceMean", {18}}, {"ReduceMin", {18, 20}}, {"ReduceProd", {18}},
      {"ReduceSumSquare", {18}},
      // Split-18 added `num_outputs` (equal chunks, the last one smaller);
      // passes/decompose.cpp turns it into split sizes.
      {"Split", {18}},
      // ScatterElements-18 / ScatterND-18 added the reductions max and min,
      // which the scatter kernels implement (shape_infer_index.cpp Reduction).
      {"ScatterElements", {18}}, {"ScatterND", {18}},
      // Cast / CastLike-19, 21, 23, 24 added `saturate` (for conversions to
      // float8 only) and the float8, int4, float4 types; between the types
      // the IR has (every other one is refused at import) they convert as
      // Cast-13.
      {"Cast", {19, 21, 23, 24}}, {"CastLike", {19, 21, 23, 24}},
      // Operators first defined after opset 17. Mish-18 is the activation
      // kernel's Mish (activations_float.cpp); the others are decomposed:
      // Gelu-20 (decompose_math.cpp), GroupNormalization-18 (scale and bias
      // per group) and -21 (per channel, stash_type), RMSNormalization-23
      // (decompose_norm.cpp), CenterCropPad-18, Col2Im-18, AffineGrid-20
      // (decompose_spatial.cpp), Attention-23 and -24 (nonpad_kv_seqlen),
      // RotaryEmbedding-23 (decompose_attention.cpp).
      {"Mish", {18}}, {"Gelu", {20}}, {"GroupNormalization", {18, 21}}, {"RMSNormalization", {23}},
      {"CenterCropPad", {18}}, {"Col2Im", {18}}, {"AffineGrid", {20}}, {"Attention", {23, 24}},
      {"RotaryEmbedding", {23}},
      // DeformConv-19 (-22 admits bfloat16) has its own kernel (lower.cpp
      // DeformConv); TensorScatter-24 is a ScatterElements
      // (decompose_attention.cpp).
      {"DeformConv", {19, 22}}, {"TensorScatter", {24}},
      // AveragePool-19 added `dilations`, which the pool kernel applies to
      // both pools (shape_infer.cpp Window2D, lower.cpp Pool); LpPool-18
      // added `ceil_mode` and `dilations`, passed on to the AveragePool it is
      // decomposed into (decompose_nn.cpp). AveragePool / MaxPool-22 state
      // the ceil_mode rule that the output size already follows for every
      // opset (a window starting in the right padding is dropped:
      // shape_infer.cpp PoolOut) and admit bfloat16.
      {"AveragePool", {19, 22}}, {"LpPool", {18}}, {"MaxPool", {22}},
      // QLinearMatMul-21 gives the scales a type parameter (float16 and
      // bfloat16 too); the decomposition widens float16 scales to float32 and
      // refuses bfloat16.
      {"QLinearMatMul", {21}},
      // Pad-18's `axes` input is read by shape inference
      // (shape_infer_index.cpp PadAmounts); Pad-19's mode "wrap" is
      // decomposed into Slices and a Concat (decompose_spatial.cpp).
      {"Pad", {18, 19}},
      // Resize-18's `axes` and `keep_aspect_ratio_policy` become Resize-13
      // scales / sizes (decompose_nn.cpp ResizeNd); `antialias` and
      // Resize-19's half_pixel_symmetric are the Resize kernel's
      // (shaders/resize2d_antialias.glsl, resize2d.glsl src_coord).
      {"Resize", {18, 19}},
      // GridSample-20 renamed the modes (linear, cubic) and admits N-D
      // inputs: the names are mapped, 5-D inputs sampled by grid_sample3d,
      // others refused (decompose_spatial.cpp).
      {"GridSample", {20}},
      // QuantizeLinear / DequantizeLinear-19 to 24: float8, int4 and float4
      // types, `saturate` (float8 only), `block_size` (blocked parameters),
      // `output_dtype` and `precision` (checked against what the
      // decompositions compute: decompose_nn.cpp).
      {"QuantizeLinear", {19, 21, 23, 24}}, {"DequantizeLinear", {19, 21, 23, 24}},
      // BitwiseAnd / Or / Xor / Not-18: integer ops of the binary_int kernel
      // (lower_int.cpp, shape_infer_int.cpp).
      {"BitwiseAnd", {18}}, {"BitwiseOr", {18}}, {"BitwiseXor", {18}}, {"BitwiseNot", {18}},
      // DFT-20 reads `axis` from an input (default -2) (decompose_signal.cpp).
      // Swish-24 is the Swish activation (x * sigmoid(alpha * x), passes.cpp).
      {"DFT", {20}}, {"Swish", {24}},
      // OptionalHasElement / OptionalGetElement-18 also take a plain tensor
      // or sequence (HasElement: true, or false for a missing input;
      // GetElement: the value itself) besides an optional
      // (import/control_flow.cpp).
      {"OptionalHasElement", {18}}, {"OptionalGetElement", {18}},
  };
  return k;
}

// Definitions newer than kLoweredOnnxOpset that only admit more element
// types (bfloat16 in opset 22; float8, int4 and float4 in 19 / 21 / 23 / 24):
// their attributes, inputs and outputs are those of the definition before,
// so a node is lowered as that one. An element type the IR does not have
// (float8, int4, float4) is refused at import with the list of supported
// types, whichever the operator. TypeOnlyNewerVersions() is checked against
// the linked library by tests/toolchain/opset_forms_test.cpp (also their
// descriptions, which tell a new attribute value or a changed rule: MaxPool-22
// says how ceil_mode treats windows starting in the padding, so it is listed
// above, with where that rule is implemented).
const std::map<std::string, std::vector<int>>& TypeOnlyForms() {
  static const std::map<std::string, std::vector<int>> k = {
      {"Acos", {22}}, {"Acosh", {22}}, {"Asin", {22}}, {"Asinh", {22}}, {"Atan", {22}}, {"Atanh", {22}},
      {"Bernoulli", {22}}, {"Constant", {19, 21, 23, 24}}, {"ConstantOfShape", {20, 21, 23, 24}},
      {"Conv", {22}}, {"ConvTranspose", {22}}, {"Cos", {22}}, {"Cosh", {22}}, {"Det", {22}},
      {"Dropout", {22}}, {"Elu", {22}}, {"Equal", {19}}, {"EyeLike", {22}}, {"Flatten", {21, 23, 24}},
      {"GRU", {22}}, {"GlobalAveragePool", {22}}, {"GlobalLpPool", {22}}, {"GlobalMaxPool", {22}},
      {"HardSigmoid", {22}}, {"HardSwish", {22}}, {"Identity", {19, 21, 23, 24}}, {"If", {19, 21, 23, 24}},
      {"InstanceNormalization", {22}}, {"IsInf", {20}}, {"IsNaN", {20}}, {"LSTM", {22}},
      {"Mish", {22}}, {"LpPool", {22}}, {"GridSample", {22}}, {"Pad", {21, 23, 24}},
      {"Loop", {19, 21, 23, 24}}, {"LpNormalization", {22}}, {"MaxRoiPool", {22}},
      {"MaxUnpool", {22}}, {"Multinomial", {22}}, {"NegativeLogLikelihoodLoss", {22}}, {"RNN", {22}},
      {"RandomNormal", {22}}, {"RandomNormalLike", {22}}, {"RandomUniform", {22}}, {"RandomUniformLike", {22}},
      {"Reshape", {19, 21, 23, 24}}, {"RoiAlign", {22}}, {"Round", {22}}, {"Scan", {19, 21, 23, 24}},
      {"Selu", {22}}, {"Shape", {19, 21, 23, 24}}, {"Sin", {22}}, {"Sinh", {22}}, {"Size", {19, 21, 23, 24}},
      {"Softplus", {22}}, {"Softsign", {22}}, {"SplitToSequence", {24}}, {"Squeeze", {21, 23, 24}},
      {"Tan", {22}}, {"ThresholdedRelu", {22}}, {"TopK", {24}}, {"Transpose", {21, 23, 24}},
      {"Unsqueeze", {21, 23, 24}},
  };
  return k;
}

bool Listed(const std::map<std::string, std::vector<int>>& forms, const std::string& op, int since) {
  auto it = forms.find(op);
  return it != forms.end() && std::find(it->second.begin(), it->second.end(), since) != it->second.end();
}

bool Lowered(const std::string& op, int since) {
  return Listed(LoweredNewerForms(), op, since) || Listed(TypeOnlyForms(), op, since);
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
        if (!Lowered(n.op_type(), s->SinceVersion()))
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

std::vector<std::pair<std::string, int>> TypeOnlyNewerVersions() {
  std::vector<std::pair<std::string, int>> v;
  for (const auto& [op, versions] : TypeOnlyForms())
    for (int since : versions) v.emplace_back(op, since);
  return v;
}

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
       " (and the newer forms of ReduceL1/L2/LogSum/LogSumExp/Max/Mean/Min/Prod/SumSquare-18, Split-18, "
       "ScatterElements/ScatterND-18, Cast/CastLike-19 to 24, Mish-18, Gelu-20, GroupNormalization-18/21, "
       "RMSNormalization-23, DeformConv-19/22, TensorScatter-24, CenterCropPad-18, Col2Im-18, AffineGrid-20, Attention-23/24, RotaryEmbedding-23, "
       "AveragePool-19/22, LpPool-18/22, MaxPool-22, Pad-18 to 24, Resize-18/19, GridSample-20/22, "
       "QuantizeLinear/DequantizeLinear-19 to 24, BitwiseAnd/Or/Xor/Not-18, DFT-20, Swish-24, "
       "OptionalHasElement/OptionalGetElement-18, and every "
       "newer definition that only admits more element types); "
       "re-export the model with opset " + std::to_string(kLoweredOnnxOpset) + " or lower";
  return Unimplemented(m);
}

}  // namespace oaaxvk::toolchain

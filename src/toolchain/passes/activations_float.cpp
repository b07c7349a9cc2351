#include "toolchain/passes/activations_float.h"

#include <map>

namespace oaaxvk::toolchain {

namespace {

const std::map<std::string, Activation>& Codes() {
  static const std::map<std::string, Activation> k = {
      {"Log", Activation::kLog}, {"Floor", Activation::kFloor}, {"Ceil", Activation::kCeil},
      {"Round", Activation::kRound}, {"Sign", Activation::kSign}, {"Sin", Activation::kSin},
      {"Cos", Activation::kCos}, {"Tan", Activation::kTan}, {"Asin", Activation::kAsin},
      {"Acos", Activation::kAcos}, {"Atan", Activation::kAtan}, {"Sinh", Activation::kSinh},
      {"Cosh", Activation::kCosh}, {"Asinh", Activation::kAsinh}, {"Acosh", Activation::kAcosh},
      {"Atanh", Activation::kAtanh}, {"Erf", Activation::kErf}, {"Softplus", Activation::kSoftplus},
      {"Softsign", Activation::kSoftsign}, {"Elu", Activation::kElu}, {"Selu", Activation::kSelu},
      {"Celu", Activation::kCelu}, {"Mish", Activation::kMish}, {"ThresholdedRelu", Activation::kThresholdedRelu},
      {"Shrink", Activation::kShrink}};
  return k;
}

}  // namespace

bool IsFloatMathActivationOp(const std::string& op_type) { return Codes().count(op_type) != 0; }

Status GetFloatMathActivation(const Node& n, Activation* act, float* alpha, float* beta) {
  auto it = Codes().find(n.op_type);
  if (it == Codes().end()) return InvalidArgument("node '" + n.name + "' (" + n.op_type + ") is not an activation");
  *act = it->second;
  *alpha = 0.f;
  *beta = 0.f;
  switch (*act) {
    case Activation::kElu: *alpha = n.GetFloat("alpha", 1.f); break;
    case Activation::kCelu:
      *alpha = n.GetFloat("alpha", 1.f);
      if (*alpha == 0.f) return InvalidArgument("node '" + n.name + "' (Celu): alpha must not be 0");
      break;
    case Activation::kSelu:
      *alpha = n.GetFloat("alpha", 1.67326319217681884765625f);
      *beta = n.GetFloat("gamma", 1.05070102214813232421875f);
      break;
    case Activation::kThresholdedRelu: *alpha = n.GetFloat("alpha", 1.f); break;
    case Activation::kShrink:
      *alpha = n.GetFloat("lambd", 0.5f);
      *beta = n.GetFloat("bias", 0.f);
      break;
    default: break;
  }
  return Status::Ok();
}

const char* ActivationName(Activation a) {
  static const char* kBase[] = {"", "relu", "clip", "sigmoid", "hardsigmoid", "hardswish", "leakyrelu",
                                "swish", "sqrt", "neg", "exp", "abs", "tanh", "reciprocal"};
  uint32_t c = static_cast<uint32_t>(a);
  if (c < sizeof(kBase) / sizeof(kBase[0])) return kBase[c];
  if (a == Activation::kAffine) return "affine";
  for (const auto& [name, code] : Codes())
    if (code == a) return name.c_str();
  return "unknown";
}

}  // namespace oaaxvk::toolchain

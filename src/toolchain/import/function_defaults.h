// Spells out the default attributes of function-defined ONNX operators.
//
// ONNX's shape inference expands an operator with a function body (e.g.
// MeanVarianceNormalization, whose body reads `axes` through an attribute
// reference) and, for an attribute the node leaves at its default, drops the
// body's reference instead of substituting the default: the expanded body is
// then malformed (MeanVarianceNormalization's `Constant <value_ints = @axes>`
// with no value) and inference fails on a valid model. An attribute written
// with its default value means exactly what the omitted one means, so
// writing the defaults out changes no result.
#ifndef OAAXVK_TOOLCHAIN_IMPORT_FUNCTION_DEFAULTS_H_
#define OAAXVK_TOOLCHAIN_IMPORT_FUNCTION_DEFAULTS_H_

namespace onnx {
class ModelProto;
}

namespace oaaxvk::toolchain {

// For every default-domain node of the model's graph and subgraphs whose
// operator (at the model's ai.onnx opset) has a function body: adds each
// optional attribute the node omits and the schema gives a default value, with
// that value. Nodes of unknown operators are left as they are (the checker
// reports them). Never fails.
void SpellOutFunctionDefaults(onnx::ModelProto& model);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IMPORT_FUNCTION_DEFAULTS_H_

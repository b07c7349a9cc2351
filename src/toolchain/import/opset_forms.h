// Which operator versions the toolchain lowers. The linked ONNX library knows
// newer opsets than the lowering was written for; an operator whose
// definition changed in a newer opset (an input instead of an attribute, a new
// attribute, a new mode) would otherwise be lowered by its older form and
// give a silently wrong result. The check runs on the ONNX model before any
// conversion.
#ifndef OAAXVK_TOOLCHAIN_IMPORT_OPSET_FORMS_H_
#define OAAXVK_TOOLCHAIN_IMPORT_OPSET_FORMS_H_

#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"

namespace onnx {
class ModelProto;
}

namespace oaaxvk::toolchain {

// The newest default-domain (ai.onnx) opset whose every operator form the
// lowering implements.
constexpr int kLoweredOnnxOpset = 17;

// Every default-domain node of the model (main graph, every subgraph, every
// model-local function, each read at the opset its scope imports) resolves
// to an ONNX definition no newer than kLoweredOnnxOpset, or to a newer
// definition listed in opset_forms.cpp as lowered (e.g. ReduceMean-18 with
// `axes` as an input, Split-18 with `num_outputs`). Unimplemented naming each
// refused node, its op and opset, the definition's version and the newest
// opset that works otherwise. Nodes whose operator the linked ONNX library
// does not define are left to the checker.
Status CheckLoweredOperatorVersions(const onnx::ModelProto& model);

// The newer definitions (op type, since_version) lowered as the definition
// before them because they only admit more element types (same attributes,
// inputs and outputs). For tests that check each against the linked library.
std::vector<std::pair<std::string, int>> TypeOnlyNewerVersions();

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IMPORT_OPSET_FORMS_H_

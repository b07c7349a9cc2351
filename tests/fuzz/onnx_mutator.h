// Structured mutations of ONNX models for fuzzing the toolchain's import
// path. A byte-level mutator almost never produces a protobuf that parses;
// this one parses the input as an onnx::ModelProto, changes one thing a
// hostile or broken exporter could get wrong, and serializes it again, so
// every input reaches the checker, shape inference, the importer and the
// passes.
//
// The mutation kinds (MutationKind) are the classes of defect the
// toolchain must reject with a Status, never a crash, hang or abort:
// dimensions (0, negative, 2^31, 2^62, symbolic), initializer sizes and
// element types that disagree with their data, attribute values (special
// integers and floats, wrong attribute types, lists of the wrong length),
// dangling tensor names, cycles, duplicate outputs, opsets (unknown, huge,
// other domains), external-data locations (absolute, `..`, missing files,
// offsets and lengths beyond the file), and node-level edits (op type
// swaps, removed and duplicated nodes).
#ifndef OAAXVK_TESTS_FUZZ_ONNX_MUTATOR_H_
#define OAAXVK_TESTS_FUZZ_ONNX_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

namespace onnx {
class ModelProto;
}

namespace oaaxvk::fuzz {

enum class MutationKind {
  kDim,
  kInitializerShape,
  kInitializerType,
  kInitializerData,
  kAttribute,
  kDanglingName,
  kCycle,
  kDuplicateOutput,
  kOpset,
  kExternalData,
  kOpType,
  kRemoveNode,
  kDuplicateNode,
  kIrVersion,
  kCount
};

const char* MutationKindName(MutationKind kind);

// Applies one mutation of `kind` (or, when the model offers nothing for that
// kind, of another kind) to `model` in place. Deterministic for a given
// generator state. Returns the kind actually applied.
MutationKind MutateModel(onnx::ModelProto* model, std::mt19937_64* rng, MutationKind kind);

// Mutates serialized model bytes: parses `in` as a ModelProto, applies
// 1–3 random mutations and serializes. Returns false when `in` does not
// parse (the caller then falls back to a byte-level mutation).
bool MutateModelBytes(const std::string& in, uint64_t seed, std::string* out);

}  // namespace oaaxvk::fuzz

#endif  // OAAXVK_TESTS_FUZZ_ONNX_MUTATOR_H_

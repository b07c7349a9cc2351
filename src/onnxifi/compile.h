// The ONNXIFI backend's use of the toolchain: the support analysis behind
// onnxGetBackendCompatibility, the in-process compilation behind
// onnxInitGraph (with the weights a client passes as tensor descriptors), the
// compiled-bundle cache, and the mapping of toolchain failures to ONNXIFI
// status codes.
#ifndef OAAXVK_ONNXIFI_COMPILE_H_
#define OAAXVK_ONNXIFI_COMPILE_H_

#include <onnx/onnxifi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::onnxifi {

// A failure with its ONNXIFI status code and a human-readable reason.
struct Result {
  onnxStatus status = ONNXIFI_STATUS_SUCCESS;
  std::string message;
  bool ok() const { return status == ONNXIFI_STATUS_SUCCESS; }
};

// The ONNXIFI status for a toolchain failure: parse failures ->
// INVALID_PROTOBUF, checker failures -> INVALID_MODEL, unsupported
// operators / attributes / shapes / data types / versions -> the matching
// UNSUPPORTED_* code (never FALLBACK), resource limits -> NO_SYSTEM_MEMORY,
// a lost or missing device -> BACKEND_UNAVAILABLE, bugs -> INTERNAL_ERROR.
onnxStatus StatusFor(const Status& s);

// The IR versions ("3 4 5 6 7 8") and default-domain opset ("ai.onnx:17")
// this backend accepts, as onnxGetBackendInfo reports them.
std::string SupportedIrVersions();
std::string SupportedOpsets();

// onnxGetBackendCompatibility: parses the model, checks its IR and opset
// versions, then runs the toolchain's conversion on it (import with the
// operator support check, ONNX checker and shape inference; run-time value
// symbols; passes; lowering; plan; bundle), exactly what onnxInitGraph
// compiles, and keeps the bundle in the cache for it. SUCCESS only when the
// conversion succeeds and the bundle's outputs have fixed shapes.
Result CheckCompatibility(const void* model, size_t size, const std::string& device_key);

// A compiled bundle (model.oinf bytes), shared by every graph made from it.
struct CompiledModel {
  std::string key;             // SHA-256 of the model bytes compiled | device
  std::vector<uint8_t> bundle;
  double compile_ms = 0;       // how long the conversion took
};

// Statistics of the process-wide compiled-bundle cache.
struct CacheStats {
  uint64_t hits = 0, misses = 0;
  size_t entries = 0;
};
CacheStats GetCacheStats();

// onnxInitGraph's compilation: validates the weight descriptors (tag, name,
// memory type, buffer, data type, shape; each failure with its own status),
// merges them into the model (a descriptor replaces the initializer of its
// name, which must match its data type and shape, or supplies a graph input
// that has none), then returns the bundle from the cache (key: SHA-256 of the
// resulting model bytes and `device_key`) or converts it with the toolchain
// (as `oaax-vulkan-toolchain` does, through a private temporary directory)
// and caches it (*from_cache tells which). Everything the caller passed is copied before
// this returns.
Result CompileModel(const void* model, size_t size, uint32_t weights_count, const onnxTensorDescriptorV1* weights,
                    const std::string& device_key, std::shared_ptr<const CompiledModel>* out, bool* from_cache);

// Validation shared by weight and I/O descriptors: tag, name pointer, memory
// type, buffer, data type, shape pointer and zero dimensions.
Result CheckDescriptor(const onnxTensorDescriptorV1& d, const char* what);
// Bytes per element of an ONNXIFI data type (0: not one this backend knows;
// BOOL, code 9, is accepted as a one-byte extension).
size_t DataTypeSize(onnxEnum dtype);

}  // namespace oaaxvk::onnxifi

#endif  // OAAXVK_ONNXIFI_COMPILE_H_

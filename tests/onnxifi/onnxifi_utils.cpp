// onnx::testing::ProtoToOnnxTensorDescriptor, declared by Debian's
// onnx/onnxifi_utils.h and called by ONNX's ONNXIFI test driver
// (driver_test.cc). The library that defined it went with ONNXIFI out of
// upstream ONNX; the driver links the pinned ONNX, so the test build defines
// the function itself.
//
// The descriptor points into `proto_tensor` (name, raw_data) and into the
// shape vector appended to `shape_pool`: both must outlive the descriptor.
// The test data carries every tensor in raw_data (little-endian, as ONNXIFI
// buffers are on the hosts the tests run on); a tensor with elements but no
// raw_data throws std::runtime_error naming it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "onnx/onnxifi_utils.h"

namespace ONNX_NAMESPACE {
namespace testing {

onnxTensorDescriptorV1 ProtoToOnnxTensorDescriptor(const ONNX_NAMESPACE::TensorProto& proto_tensor,
                                                   std::vector<std::vector<uint64_t>>& shape_pool) {
  uint64_t elements = 1;
  for (int64_t d : proto_tensor.dims()) elements *= static_cast<uint64_t>(d < 0 ? 0 : d);
  if (elements != 0 && proto_tensor.raw_data().empty())
    throw std::runtime_error("test tensor '" + proto_tensor.name() +
                             "' has no raw_data; the ONNXIFI test driver passes raw bytes only");
  shape_pool.emplace_back(proto_tensor.dims().begin(), proto_tensor.dims().end());
  onnxTensorDescriptorV1 d{};
  d.tag = ONNXIFI_TAG_TENSOR_DESCRIPTOR_V1;
  d.name = proto_tensor.name().c_str();
  d.dataType = static_cast<onnxEnum>(proto_tensor.data_type());
  d.memoryType = ONNXIFI_MEMORY_TYPE_CPU;
  d.dimensions = static_cast<uint32_t>(shape_pool.back().size());
  d.shape = shape_pool.back().data();
  d.buffer = reinterpret_cast<onnxPointer>(proto_tensor.raw_data().data());
  return d;
}

}  // namespace testing
}  // namespace ONNX_NAMESPACE

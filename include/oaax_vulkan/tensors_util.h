// Helpers for the OAAX tensors_struct (interface.h), shared by the runtime
// and by the hosts (oaax-run, oaax-ocr, the conformance runner, tests).
//
// Header-only (C++ inline functions): using it adds no library dependency and,
// in libRuntimeLibrary.so, no exported symbol.
//
// Ownership: a tensors_struct crosses the OAAX boundary as a block of separate
// malloc() allocations, as OAAX hosts expect (spec section 5): the struct
// itself, each of its five arrays (names, data_types, ranks, shapes, data), and
// each names[i], shapes[i] and data[i]. Whoever owns the struct releases every
// one of them with free(): FreeTensors does exactly that. AllocTensors and
// SetTensor build a struct of that form; every function here is noexcept and
// reports running out of host memory by its return value.
#ifndef OAAX_VULKAN_TENSORS_UTIL_H_
#define OAAX_VULKAN_TENSORS_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "oaax_vulkan/interface.h"

namespace oaaxvk {

// Bytes per element of an OAAX tensor_data_type (interface.h; the values equal
// the ONNX TensorProto.DataType codes; FLOAT16, BFLOAT16 and the low-bit
// types are this project's extensions, see interface.h). 0 for STRING and for
// codes neither defines (e.g. the ONNX COMPLEX64). The 4-bit types (UINT4,
// INT4, FLOAT4E2M1) give 1, the byte that holds an element; their tensors
// take TensorByteSize bytes, about half of elements × 1.
inline size_t TensorElementSize(uint32_t dtype) noexcept {
  switch (dtype) {
    case DATA_TYPE_FLOAT: return 4;
    case DATA_TYPE_UINT8: return 1;
    case DATA_TYPE_INT8: return 1;
    case DATA_TYPE_UINT16: return 2;
    case DATA_TYPE_INT16: return 2;
    case DATA_TYPE_INT32: return 4;
    case DATA_TYPE_INT64: return 8;
    case DATA_TYPE_BOOL: return 1;
    case DATA_TYPE_DOUBLE: return 8;
    case DATA_TYPE_UINT32: return 4;
    case DATA_TYPE_UINT64: return 8;
    case DATA_TYPE_FLOAT16: return 2;
    case DATA_TYPE_BFLOAT16: return 2;
    case DATA_TYPE_FLOAT8E4M3FN: case DATA_TYPE_FLOAT8E4M3FNUZ: case DATA_TYPE_FLOAT8E5M2:
    case DATA_TYPE_FLOAT8E5M2FNUZ: case DATA_TYPE_FLOAT8E8M0: return 1;
    case DATA_TYPE_UINT4: case DATA_TYPE_INT4: case DATA_TYPE_FLOAT4E2M1: return 1;
    default: return 0;  // DATA_TYPE_STRING (8) and unknown values
  }
}

// True for the 4-bit types, packed two elements per byte (interface.h).
inline bool IsPacked4Bit(uint32_t dtype) noexcept {
  return dtype == DATA_TYPE_UINT4 || dtype == DATA_TYPE_INT4 || dtype == DATA_TYPE_FLOAT4E2M1;
}

// Bytes of a dense tensor of `elements` elements of `dtype`: elements ×
// TensorElementSize, except (elements + 1) / 2 for the packed 4-bit types.
// 0 for the types TensorElementSize gives 0. The caller checks overflow of
// elements × 8 beforehand where elements comes from the host.
inline uint64_t TensorByteSize(uint32_t dtype, uint64_t elements) noexcept {
  if (IsPacked4Bit(dtype)) return elements / 2 + (elements & 1u);
  return elements * TensorElementSize(dtype);
}

// Elements a dense tensor of `nbytes` bytes of `dtype` holds at most: the
// inverse of TensorByteSize (2 × nbytes for the 4-bit types). 0 for the
// types TensorElementSize gives 0.
inline uint64_t TensorMaxElements(uint32_t dtype, uint64_t nbytes) noexcept {
  const size_t es = TensorElementSize(dtype);
  if (es == 0) return 0;
  return IsPacked4Bit(dtype) ? nbytes * 2 : nbytes / es;
}

// Frees a tensors_struct deeply: each names[i], shapes[i], data[i] (for i <
// num_tensors), then the five arrays, then the struct, all with free().
// NULL-tolerant at every level (a NULL struct, NULL arrays, NULL entries), so
// it also releases a partially built struct from AllocTensors.
inline void FreeTensors(tensors_struct* t) noexcept {
  if (t == nullptr) return;
  for (size_t i = 0; i < t->num_tensors; ++i) {
    if (t->names) std::free(t->names[i]);
    if (t->shapes) std::free(t->shapes[i]);
    if (t->data) std::free(t->data[i]);
  }
  std::free(t->names);
  std::free(t->data_types);
  std::free(t->ranks);
  std::free(t->shapes);
  std::free(t->data);
  std::free(t);
}

// A newly calloc'ed tensors_struct with num_tensors = n and its five arrays
// calloc'ed (at least one element each, so they are non-NULL even for n = 0);
// every names[i], shapes[i], data[i] is NULL and every data_types[i], ranks[i]
// 0, for the caller to fill (SetTensor). nullptr when host memory ran out
// (nothing is leaked then). The caller owns the result (FreeTensors).
inline tensors_struct* AllocTensors(size_t n) noexcept {
  auto* t = static_cast<tensors_struct*>(std::calloc(1, sizeof(tensors_struct)));
  if (t == nullptr) return nullptr;
  const size_t cap = n > 0 ? n : 1;
  t->num_tensors = n;
  t->names = static_cast<char**>(std::calloc(cap, sizeof(char*)));
  t->data_types = static_cast<tensor_data_type*>(std::calloc(cap, sizeof(tensor_data_type)));
  t->ranks = static_cast<size_t*>(std::calloc(cap, sizeof(size_t)));
  t->shapes = static_cast<size_t**>(std::calloc(cap, sizeof(size_t*)));
  t->data = static_cast<void**>(std::calloc(cap, sizeof(void*)));
  if (!t->names || !t->data_types || !t->ranks || !t->shapes || !t->data) {
    FreeTensors(t);
    return nullptr;
  }
  return t;
}

// Fills tensor i (< num_tensors) of a struct from AllocTensors whose entry i
// is still empty: names[i] = a malloc'ed copy of the NUL-terminated `name`,
// data_types[i] = dtype, ranks[i] = rank, shapes[i] = a malloc'ed copy of
// shape[0 .. rank-1] (each dimension converted to size_t; at least one
// element allocated), data[i] = a malloc'ed copy of the `nbytes` bytes at
// `data` (at least one byte allocated; `data` may be NULL when nbytes is 0).
// Returns false when host memory ran out; what was allocated then stays in
// the struct, so FreeTensors releases it.
template <typename Dim>
inline bool SetTensor(tensors_struct* t, size_t i, const char* name, tensor_data_type dtype, const Dim* shape,
                      size_t rank, const void* data, size_t nbytes) noexcept {
  const size_t name_bytes = std::strlen(name) + 1;
  t->names[i] = static_cast<char*>(std::malloc(name_bytes));
  t->shapes[i] = static_cast<size_t*>(std::malloc((rank > 0 ? rank : 1) * sizeof(size_t)));
  t->data[i] = std::malloc(nbytes > 0 ? nbytes : 1);
  if (!t->names[i] || !t->shapes[i] || !t->data[i]) return false;
  std::memcpy(t->names[i], name, name_bytes);
  t->data_types[i] = dtype;
  t->ranks[i] = rank;
  for (size_t a = 0; a < rank; ++a) t->shapes[i][a] = static_cast<size_t>(shape[a]);
  if (nbytes > 0) std::memcpy(t->data[i], data, nbytes);
  return true;
}

}  // namespace oaaxvk

#endif  // OAAX_VULKAN_TENSORS_UTIL_H_

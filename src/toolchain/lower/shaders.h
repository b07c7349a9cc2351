// SPIR-V modules compiled from shaders/*.comp at build time (validated with
// spirv-val) and embedded by embed_spirv.cmake.
#ifndef OAAXVK_TOOLCHAIN_LOWER_SHADERS_H_
#define OAAXVK_TOOLCHAIN_LOWER_SHADERS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace oaaxvk::toolchain {

struct EmbeddedShader {
  const char* name;       // file stem, e.g. "conv2d_gemm"
  const uint32_t* words;  // static storage
  size_t word_count;
};
const std::vector<EmbeddedShader>& EmbeddedShaders();

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_SHADERS_H_

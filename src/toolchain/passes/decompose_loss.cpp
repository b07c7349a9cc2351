#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

const std::map<std::string, DecomposeFn>& LossDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {};
  return k;
}

}  // namespace oaaxvk::toolchain

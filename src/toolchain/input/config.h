// Values of config.json "input_values" (conversion-time input binding), shared
// by the config parser (toolchain/input/archive.h) and the importer.
#ifndef OAAXVK_TOOLCHAIN_INPUT_CONFIG_H_
#define OAAXVK_TOOLCHAIN_INPUT_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace oaaxvk::toolchain {

// One JSON number. `is_integer`: the token was a JSON integer that fits int64
// (`integer` holds it exactly; `value` is its double approximation).
struct ConfigNumber {
  double value = 0;
  bool is_integer = false;
  int64_t integer = 0;
};

// Graph input name -> flat row-major values (checked against the input's
// dtype and static shape by the importer).
using InputValues = std::map<std::string, std::vector<ConfigNumber>>;

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_INPUT_CONFIG_H_

// Model input resolution for `oaax-vulkan-toolchain <input-path>`: a plain
// `.onnx` file, or a `.zip` / `.tar.gz` (`.tgz`) archive holding exactly one
// `model.onnx` plus an optional `config.json` (and, optionally, the model's
// ONNX external-data files next to it). Archives are read with libarchive.
//
// Archive safety: every entry is checked before anything is written. Entries
// with an absolute path, a `..` component, a backslash or NUL, symbolic links,
// hard links and device/FIFO entries are rejected (naming the entry). Limits:
// at most `max_entries` entries, each regular file at most `max_entry_bytes`
// and all of them together at most `max_total_bytes` (checked on the bytes
// actually decompressed, not on the sizes the headers claim). Accepted files
// are written into a fresh private directory (mkdtemp, mode 0700) which
// ResolvedInput removes when destroyed.
#ifndef OAAXVK_TOOLCHAIN_INPUT_ARCHIVE_H_
#define OAAXVK_TOOLCHAIN_INPUT_ARCHIVE_H_

#include "toolchain/ir/dim.h"
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"
#include "toolchain/input/config.h"
#include "toolchain/ir/limits.h"

namespace oaaxvk::toolchain {

struct ArchiveLimits {
  uint64_t max_entries = 4096;
  uint64_t max_entry_bytes = 2ull << 30;   // 2 GiB (protobuf's own model limit)
  uint64_t max_total_bytes = 8ull << 30;   // model + external data together
};

// The `config.json` of an archive (or of `--config FILE`):
//   {"input_shapes": {"<input name>": [d0, d1, ...], ...},
//    "input_values": {"<input name>": [v0, v1, ...], ...}}
// input_values binds a graph input to a value at conversion (flat row-major
// numbers; non-finite floats are not representable in JSON). Unknown
// top-level keys are an error (so a typo does not go unnoticed).
//   "fp16_weights": false  omits the binary16 weight copies and their GPU
//   rows (default true; docs/bundle-format.md "Device-specific variants").
//   "gpu_conv_tiles": "all" gives every Conv its GPU-class tile row
//   (conv2d_gemm_gpu), also where the default row's grid already fills a
//   GPU; "auto" (default) keeps conv2d_gemm there (docs/kernels.md
//   "GPU-class GEMM tiles"). For measuring the tile and for tests.
//   input_shapes entries may name a symbolic dimension instead of a number
//   ("H"); every symbol needs a range in
//   "dimensions": {"H": {"min": 32, "max": 960, "multiple_of": 32}, ...}
//   (WIA-AI-011 "Dynamic Shapes"; multiple_of defaults to 1). A symbol the
//   ONNX model itself names (a dim_param) may be given a range there too.
//   A sequence input's entry is a list of element shapes ([[2, 3], [4, 3]],
//   [] for an empty sequence), an empty optional input's entry is null
//   (docs/toolchain.md "Sequences and optionals").
struct ModelConfig {
  std::map<std::string, std::vector<int64_t>> input_shapes;  // 0 where input_symbols names a symbol
  // Per input_shapes entry: the symbol name of each dimension ("" = the number).
  std::map<std::string, std::vector<std::string>> input_symbols;
  // Sequence inputs: name -> number of elements, whose shapes are the
  // input_shapes entries "name[0]", "name[1]", ...; -1: an empty optional.
  std::map<std::string, int64_t> sequence_lengths;
  // "dimensions": symbol name -> its range, as written (not yet rounded to multiple_of).
  std::map<std::string, Symbol> dimensions;
  InputValues input_values;
  // input_values entries that name their elements: graph input -> one
  // "dimensions" name per element (row-major). The runtime reads these values
  // from the input's data at send_input (run-time value symbols).
  std::map<std::string, std::vector<std::string>> value_symbols;
  bool fp16_weights = true;
  // "gpu_conv_tiles": true for "all", false for "auto" (LowerOptions::all_conv_gpu_tiles).
  bool all_conv_gpu_tiles = false;
  // "limits": {"max_folded_bytes": N, "max_tensor_elements": N,
  // "max_tensor_bytes": N, "max_arena_bytes": N, "max_dispatches": N}
  // (ir/limits.h; omitted keys keep their defaults).
  ConversionLimits limits;
};

// Parses config.json text; errors name the offending key / value.
StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text);

// A resolved input: the path of the .onnx file to import and the parsed
// config (empty when none). Owns the extraction directory of an archive.
class ResolvedInput {
 public:
  ResolvedInput() = default;
  ~ResolvedInput();
  ResolvedInput(const ResolvedInput&) = delete;
  ResolvedInput& operator=(const ResolvedInput&) = delete;
  ResolvedInput(ResolvedInput&& o) noexcept;
  ResolvedInput& operator=(ResolvedInput&& o) noexcept;

  std::string model_path;           // the .onnx to import
  bool from_archive = false;
  bool has_config = false;
  ModelConfig config;
  std::vector<std::string> entries;  // archive entries accepted, in archive order

 private:
  friend StatusOr<ResolvedInput> ResolveModelInput(const std::string&, const ArchiveLimits&);
  std::string temp_dir_;             // removed (recursively) by the destructor
};

// True for names ending in .zip, .tar.gz or .tgz (case-insensitive).
bool IsArchivePath(const std::string& path);

// Resolves `path`: a `.onnx` file is used as is; an archive is validated and
// extracted as described above. Errors:
//   kNotFound            the path does not exist
//   kInvalidArgument     not a regular file, unknown extension, unsafe entry,
//                        no / several model.onnx, malformed config.json,
//                        corrupt archive (libarchive's message included)
//   kResourceExhausted   a limit was exceeded (which one, and the entry)
StatusOr<ResolvedInput> ResolveModelInput(const std::string& path, const ArchiveLimits& limits = {});

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_INPUT_ARCHIVE_H_

// Builds bundles per docs/bundle-format.md with the OINF Writer, from the
// test kernels compiled at build time (tests/runtime/shaders/*.comp).
#ifndef OAAXVK_TESTS_RUNTIME_TEST_BUNDLES_H_
#define OAAXVK_TESTS_RUNTIME_TEST_BUNDLES_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "oaax_vulkan/oinf.h"

namespace oaaxvk::test {

inline uint64_t Align256(uint64_t v) { return (v + 255) / 256 * 256; }

inline std::vector<uint32_t> ReadSpirv(const std::string& name) {
  std::ifstream f(std::string(OAAXVK_RUNTIME_TEST_SPV_DIR) + "/" + name + ".spv", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  if (!words.empty()) memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

// A bundle described field by field; tests tweak any field to make it bad.
struct BundleSpec {
  struct Io {
    std::string name;
    uint32_t dtype = 1;  // FLOAT
    std::vector<int64_t> shape;
    uint64_t offset = 0, nbytes = 0;
    std::vector<uint8_t> bound{};  // inputs: tensor io.input.<i>.bound when non-empty
  };
  struct Kernel {
    std::string name;
    std::vector<uint32_t> spirv;
    uint32_t bindings = 0, spec_constants = 0;
    std::string binding_types{};  // kernel.<j>.binding_types ("" = omitted)
    std::string required{};       // kernel.<j>.requires ("" = omitted; feature device_variants)
    int64_t fp32_kernel = -1;     // kernel.<j>.fp32_kernel (-1 = omitted; feature device_variants)
    int64_t fp16_kernel = -1;     // kernel.<j>.fp16_kernel (-1 = omitted; feature device_variants)
    int64_t matrix_kernel = -1;   // kernel.<j>.matrix_kernel (-1 = omitted; feature device_variants)
  };
  std::string format = "oaax-vulkan-bundle";
  uint32_t format_version = 1;
  std::vector<Io> inputs, outputs;
  uint64_t inputs_bytes = 0, outputs_bytes = 0, arena_bytes = 0;
  std::vector<uint8_t> weights;
  std::vector<Kernel> kernels;
  std::vector<std::array<uint32_t, 8>> dispatch;  // kernel, gx, gy, gz, first_binding, n_bindings, first_spec, n_spec
  std::vector<std::array<uint64_t, 3>> bindings;  // kind, offset, size
  std::vector<uint32_t> spec;
  std::vector<uint8_t> barrier;
  uint32_t max_invocations = 64;
  uint32_t max_workgroup_count = 1;
  uint32_t max_shared_memory_bytes = 0;
  std::string features;  // bundle.features ("" = omitted)
  // Feature kernel_variants: program.dispatch.cpu (written when not empty).
  std::vector<std::array<uint32_t, 8>> dispatch_cpu;
  // Feature device_variants: program.dispatch.gpu (written when not empty)
  // and tensor weights_f16 (written when set, possibly empty).
  std::vector<std::array<uint32_t, 8>> dispatch_gpu;
  std::optional<std::vector<uint8_t>> weights_f16;
  // Feature dynamic_shapes (docs/bundle-format.md, "Dynamic shapes"): the
  // shape.* entries are written when `symbols` is not empty or `write_shape`.
  struct Symbol {
    std::string name;
    int64_t min = 1, max = 1, multiple_of = 1;
    // Feature value_symbols: shape.symbol.<s>.input / .element (written when input >= 0).
    int64_t input = -1;
    uint64_t element = 0;
    // Feature float_value_symbols: shape.symbol.<s>.scale (written when set).
    std::optional<uint64_t> scale{};
    // Feature exact_value_symbols: shape.symbol.<s>.exact (written when set).
    std::optional<uint32_t> exact{};
    // Feature segment_program: shape.symbol.<s>.decided (written when set).
    std::optional<uint32_t> decided{};
  };
  // Feature segment_program: control.* (written when `control_segments` is not empty).
  std::vector<std::array<uint32_t, 2>> control_segments;  // begin, end
  std::vector<std::array<int64_t, 4>> control_program;    // opcode, a, b, c
  std::vector<std::array<uint64_t, 5>> control_reads;     // buffer_kind, offset, dtype, mode, text
  std::vector<std::string> control_texts;
  // Feature value_symbols: shape.guards and shape.guard.<g>.text (written when not empty).
  std::vector<std::string> guards;
  std::vector<Symbol> symbols;
  std::vector<std::array<int64_t, 3>> shape_program;  // opcode, a, b
  std::vector<std::array<uint32_t, 4>> shape_refs;    // kind, index, sub, expr
  bool write_shape = false;
  // Feature parameter_buffer: metadata shape.params (written when set).
  std::optional<uint32_t> shape_params;
  // Sizevars; unset: one per symbol (its name, value max).
  std::optional<std::vector<std::pair<std::string, uint64_t>>> sizevars;

  oaaxvk::Status Write(const std::string& path) const {
    using oinf::MetadataValue;
    using oinf::ValueType;
    oinf::Writer w;
    auto u8array = [](const std::string& s) {
      return MetadataValue::NdArray(ValueType::kU8, {s.size()}, std::vector<uint8_t>(s.begin(), s.end()));
    };
    w.AddMetadata("format", MetadataValue::String(format));
    w.AddMetadata("format_version", MetadataValue::Scalar<uint32_t>(format_version));
    w.AddMetadata("producer", MetadataValue::String("runtime-tests"));
    if (!features.empty()) w.AddMetadata("bundle.features", u8array(features));  // UTF-8 ndarray
    w.AddMetadata("model.name", u8array("test model"));
    w.AddMetadata("model.opset", MetadataValue::Scalar<int64_t>(17));
    w.AddMetadata("device.max_workgroup_invocations", MetadataValue::Scalar<uint32_t>(max_invocations));
    w.AddMetadata("device.max_workgroup_size_x", MetadataValue::Scalar<uint32_t>(64));
    w.AddMetadata("device.max_workgroup_size_y", MetadataValue::Scalar<uint32_t>(1));
    w.AddMetadata("device.max_workgroup_size_z", MetadataValue::Scalar<uint32_t>(1));
    w.AddMetadata("device.max_shared_memory_bytes", MetadataValue::Scalar<uint32_t>(max_shared_memory_bytes));
    w.AddMetadata("device.max_workgroup_count", MetadataValue::Scalar<uint32_t>(max_workgroup_count));
    uint64_t max_range = 0;
    for (auto& b : bindings) max_range = std::max(max_range, b[2]);
    w.AddMetadata("device.max_storage_buffer_range", MetadataValue::Scalar<uint64_t>(max_range));
    w.AddMetadata("device.shader_float16", MetadataValue::Bool(false));
    w.AddMetadata("device.storage_buffer_16bit", MetadataValue::Bool(false));
    w.AddTensor("weights", ValueType::kU8, {weights.size()}, weights);
    if (weights_f16) w.AddTensor("weights_f16", ValueType::kU8, {weights_f16->size()}, *weights_f16);
    w.AddMetadata("arena.bytes", MetadataValue::Scalar<uint64_t>(arena_bytes));
    w.AddMetadata("io.inputs_bytes", MetadataValue::Scalar<uint64_t>(inputs_bytes));
    w.AddMetadata("io.outputs_bytes", MetadataValue::Scalar<uint64_t>(outputs_bytes));
    auto io = [&](const char* kind, const std::vector<Io>& v) {
      w.AddMetadata(std::string("io.") + kind + "s", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(v.size())));
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string p = std::string("io.") + kind + "." + std::to_string(i) + ".";
        w.AddMetadata(p + "name", u8array(v[i].name));
        w.AddMetadata(p + "dtype", MetadataValue::Scalar<uint32_t>(v[i].dtype));
        std::vector<uint8_t> shape(v[i].shape.size() * 8);
        if (!shape.empty()) memcpy(shape.data(), v[i].shape.data(), shape.size());
        w.AddMetadata(p + "shape", MetadataValue::NdArray(ValueType::kI64, {v[i].shape.size()}, shape));
        w.AddMetadata(p + "offset", MetadataValue::Scalar<uint64_t>(v[i].offset));
        w.AddMetadata(p + "nbytes", MetadataValue::Scalar<uint64_t>(v[i].nbytes));
        if (!v[i].bound.empty()) w.AddTensor(p + "bound", ValueType::kU8, {v[i].bound.size()}, v[i].bound);
      }
    };
    io("input", inputs);
    io("output", outputs);
    w.AddMetadata("kernels.count", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(kernels.size())));
    for (size_t j = 0; j < kernels.size(); ++j) {
      const std::string p = "kernel." + std::to_string(j) + ".";
      w.AddTensor(p + "spirv", ValueType::kU32, {kernels[j].spirv.size()}, kernels[j].spirv.data(),
                  kernels[j].spirv.size() * 4);
      w.AddMetadata(p + "name", MetadataValue::String(kernels[j].name));
      w.AddMetadata(p + "bindings", MetadataValue::Scalar<uint32_t>(kernels[j].bindings));
      w.AddMetadata(p + "spec_constants", MetadataValue::Scalar<uint32_t>(kernels[j].spec_constants));
      if (!kernels[j].binding_types.empty())
        w.AddMetadata(p + "binding_types", MetadataValue::String(kernels[j].binding_types));
      if (!kernels[j].required.empty()) w.AddMetadata(p + "requires", MetadataValue::String(kernels[j].required));
      if (kernels[j].fp32_kernel >= 0)
        w.AddMetadata(p + "fp32_kernel", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(kernels[j].fp32_kernel)));
      if (kernels[j].fp16_kernel >= 0)
        w.AddMetadata(p + "fp16_kernel", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(kernels[j].fp16_kernel)));
      if (kernels[j].matrix_kernel >= 0)
        w.AddMetadata(p + "matrix_kernel",
                      MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(kernels[j].matrix_kernel)));
    }
    w.AddTensor("program.dispatch", ValueType::kU32, {dispatch.size(), 8}, dispatch.data(), dispatch.size() * 32);
    if (!dispatch_cpu.empty())
      w.AddTensor("program.dispatch.cpu", ValueType::kU32, {dispatch_cpu.size(), 8}, dispatch_cpu.data(),
                  dispatch_cpu.size() * 32);
    if (!dispatch_gpu.empty())
      w.AddTensor("program.dispatch.gpu", ValueType::kU32, {dispatch_gpu.size(), 8}, dispatch_gpu.data(),
                  dispatch_gpu.size() * 32);
    w.AddTensor("program.bindings", ValueType::kU64, {bindings.size(), 3}, bindings.data(), bindings.size() * 24);
    w.AddTensor("program.spec", ValueType::kU32, {spec.size()}, spec.data(), spec.size() * 4);
    w.AddTensor("program.barrier", ValueType::kU8, {barrier.size()}, barrier.data(), barrier.size());
    std::vector<uint32_t> ops(dispatch.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      ops[i] = static_cast<uint32_t>(i);
      w.AddMetadata("program.op_name." + std::to_string(i), u8array("/node/" + std::to_string(i)));
    }
    w.AddTensor("program.op", ValueType::kU32, {ops.size()}, ops.data(), ops.size() * 4);
    if (!symbols.empty() || write_shape) {
      if (sizevars) {
        for (const auto& [name, value] : *sizevars) w.AddSizeVar(name, value);
      } else {
        for (const Symbol& y : symbols) w.AddSizeVar(y.name, static_cast<uint64_t>(y.max));
      }
      w.AddMetadata("shape.symbols", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(symbols.size())));
      for (size_t k = 0; k < symbols.size(); ++k) {
        const std::string p = "shape.symbol." + std::to_string(k) + ".";
        w.AddMetadata(p + "name", u8array(symbols[k].name));
        w.AddMetadata(p + "min", MetadataValue::Scalar<int64_t>(symbols[k].min));
        w.AddMetadata(p + "max", MetadataValue::Scalar<int64_t>(symbols[k].max));
        w.AddMetadata(p + "multiple_of", MetadataValue::Scalar<int64_t>(symbols[k].multiple_of));
        if (symbols[k].input >= 0) {
          w.AddMetadata(p + "input", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(symbols[k].input)));
          w.AddMetadata(p + "element", MetadataValue::Scalar<uint64_t>(symbols[k].element));
        }
        if (symbols[k].scale) w.AddMetadata(p + "scale", MetadataValue::Scalar<uint64_t>(*symbols[k].scale));
        if (symbols[k].exact) w.AddMetadata(p + "exact", MetadataValue::Scalar<uint32_t>(*symbols[k].exact));
        if (symbols[k].decided) w.AddMetadata(p + "decided", MetadataValue::Scalar<uint32_t>(*symbols[k].decided));
      }
      if (!guards.empty()) {
        w.AddMetadata("shape.guards", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(guards.size())));
        for (size_t g = 0; g < guards.size(); ++g) w.AddMetadata("shape.guard." + std::to_string(g) + ".text", u8array(guards[g]));
      }
      w.AddTensor("shape.program", ValueType::kI64, {shape_program.size(), 3}, shape_program.data(),
                  shape_program.size() * 24);
      w.AddTensor("shape.refs", ValueType::kU32, {shape_refs.size(), 4}, shape_refs.data(), shape_refs.size() * 16);
    }
    if (shape_params) w.AddMetadata("shape.params", MetadataValue::Scalar<uint32_t>(*shape_params));
    if (!control_segments.empty()) {
      w.AddTensor("control.segments", ValueType::kU32, {control_segments.size(), 2}, control_segments.data(),
                  control_segments.size() * 8);
      w.AddTensor("control.program", ValueType::kI64, {control_program.size(), 4}, control_program.data(),
                  control_program.size() * 32);
      w.AddTensor("control.reads", ValueType::kU64, {control_reads.size(), 5}, control_reads.data(),
                  control_reads.size() * 40);
      w.AddMetadata("control.texts", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(control_texts.size())));
      for (size_t t = 0; t < control_texts.size(); ++t)
        w.AddMetadata("control.text." + std::to_string(t), u8array(control_texts[t]));
    }
    return w.WriteFile(path);
  }
};

inline uint32_t Groups(uint64_t n) { return static_cast<uint32_t>((n + 63) / 64); }

// y = relu(x * w + b): x and y of shape [1, n]; 3 dispatches (mul, add, relu)
// with barriers before the two dependent ones; w and b in the weights blob.
inline BundleSpec AffineReluBundle(uint32_t n, const std::vector<float>& w, const std::vector<float>& b) {
  BundleSpec s;
  const uint64_t bytes = 4ull * n;
  s.inputs.push_back({"x", 1, {1, static_cast<int64_t>(n)}, 0, bytes});
  s.outputs.push_back({"y", 1, {1, static_cast<int64_t>(n)}, 0, bytes});
  s.inputs_bytes = bytes;
  s.outputs_bytes = bytes;
  const uint64_t b_off = Align256(bytes);
  s.weights.assign(b_off + bytes, 0);
  memcpy(s.weights.data(), w.data(), bytes);
  memcpy(s.weights.data() + b_off, b.data(), bytes);
  const uint64_t t2 = Align256(bytes);
  s.arena_bytes = t2 + bytes;
  s.kernels = {{"mul", ReadSpirv("mul"), 3, 1}, {"add", ReadSpirv("add"), 3, 1}, {"relu", ReadSpirv("relu"), 2, 1}};
  s.bindings = {{2, 0, bytes}, {0, 0, bytes}, {1, 0, bytes},     // mul: x, w -> t1
                {1, 0, bytes}, {0, b_off, bytes}, {1, t2, bytes},  // add: t1, b -> t2
                {1, t2, bytes}, {3, 0, bytes}};                    // relu: t2 -> y
  s.spec = {n, n, n};
  const uint32_t g = Groups(n);
  s.dispatch = {{0, g, 1, 1, 0, 3, 0, 1}, {1, g, 1, 1, 3, 3, 1, 1}, {2, g, 1, 1, 6, 2, 2, 1}};
  s.barrier = {0, 1, 1};
  s.max_workgroup_count = g;
  return s;
}

// IEEE binary16 bits of the binary16 value nearest to `f` (ties to even), for
// finite |f| <= 65504: the fp16 weight copies of feature device_variants.
inline uint16_t FloatToHalfBits(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  // The spacing of binary16 values around a: 2^-24 below 2^-14 (subnormals),
  // else 2^(exponent - 10); nearbyint rounds to nearest even.
  const double quantum = a < std::ldexp(1.0, -14) ? std::ldexp(1.0, -24) : std::ldexp(1.0, std::ilogb(a) - 10);
  const double r = std::nearbyint(a / quantum) * quantum;  // may carry to the next power of two
  if (r < std::ldexp(1.0, -14)) return static_cast<uint16_t>(sign | static_cast<uint16_t>(r / std::ldexp(1.0, -24)));
  const int e = std::ilogb(r);
  const uint16_t mant = static_cast<uint16_t>((r / std::ldexp(1.0, e) - 1.0) * 1024.0);
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | mant);
}

// Features device_variants and kernel_variants on AffineRelu: each table
// computes something observably different.
//   program.dispatch      relu(x * w + b)
//   program.dispatch.gpu  relu(x * fp16(w) + b): dispatch 0 runs mul_f16w
//                         (requires storageBuffer16BitAccess) reading the
//                         binary16 copy of w from weights_f16 (at offset 256)
//   program.dispatch.cpu  relu(x * w * b): dispatch 1 runs mul instead of add
// `cpu_table` = false leaves out the CPU table and the kernel_variants feature.
inline BundleSpec AffineReluWithDeviceVariants(uint32_t n, const std::vector<float>& w, const std::vector<float>& b,
                                               bool cpu_table) {
  BundleSpec s = AffineReluBundle(n, w, b);
  s.features = cpu_table ? "kernel_variants device_variants" : "device_variants";
  const uint64_t bytes = 4ull * n, f16_off = 256, f16_bytes = 2ull * n;
  std::vector<uint8_t> f16(f16_off + f16_bytes, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const uint16_t h = FloatToHalfBits(w[i]);
    memcpy(f16.data() + f16_off + 2 * i, &h, 2);
  }
  s.weights_f16 = f16;
  s.kernels.push_back({"mul_f16w", ReadSpirv("mul_f16w"), 3, 1, "", "storageBuffer16BitAccess"});
  s.bindings.push_back({2, 0, bytes});              // row 8: x
  s.bindings.push_back({4, f16_off, f16_bytes});    // row 9: fp16(w), in weights_f16
  s.bindings.push_back({1, 0, bytes});              // row 10: t1
  s.dispatch_gpu = s.dispatch;
  s.dispatch_gpu[0][0] = 3;  // mul_f16w
  s.dispatch_gpu[0][4] = 8;  // its own binding rows
  if (cpu_table) {
    s.dispatch_cpu = s.dispatch;
    s.dispatch_cpu[1][0] = 0;  // mul instead of add
  }
  return s;
}

// y[r] = sum_k x[r, k] for x [rows, len], y [rows] (feature device_variants):
// program.dispatch runs row_sum (one invocation per row), program.dispatch.gpu
// row_sum_sg (one workgroup per row, subgroupAdd; `required` is its
// kernel.1.requires, normally "subgroupArithmetic"). weights_f16 is empty.
inline BundleSpec RowSumBundle(uint32_t rows, uint32_t len, const std::string& required) {
  BundleSpec s;
  const uint64_t in_bytes = 4ull * rows * len, out_bytes = 4ull * rows;
  s.inputs.push_back({"x", 1, {rows, len}, 0, in_bytes});
  s.outputs.push_back({"y", 1, {rows}, 0, out_bytes});
  s.inputs_bytes = in_bytes;
  s.outputs_bytes = out_bytes;
  s.features = "device_variants";
  s.weights_f16 = std::vector<uint8_t>();
  s.kernels = {{"row_sum", ReadSpirv("row_sum"), 2, 2}, {"row_sum_sg", ReadSpirv("row_sum_sg"), 2, 2, "", required}};
  s.bindings = {{2, 0, in_bytes}, {3, 0, out_bytes}};
  s.spec = {rows, len};
  s.dispatch = {{0, Groups(rows), 1, 1, 0, 2, 0, 2}};
  s.dispatch_gpu = {{1, rows, 1, 1, 0, 2, 0, 2}};
  s.barrier = {0};
  s.max_workgroup_count = std::max(rows, Groups(rows));
  s.max_shared_memory_bytes = 64 * 4;
  return s;
}

// Two inputs ("input:0" [1, n], "画像" [n]) and two outputs
// ("sum/out" [n] = a + b, "prod:0" [1, n] = a * b): independent dispatches.
inline BundleSpec TwoInTwoOutBundle(uint32_t n) {
  BundleSpec s;
  const uint64_t bytes = 4ull * n, off = Align256(bytes);
  const int64_t sn = n;
  s.inputs = {{"input:0", 1, {1, sn}, 0, bytes}, {"\xe7\x94\xbb\xe5\x83\x8f", 1, {sn}, off, bytes}};
  s.outputs = {{"sum/out", 1, {sn}, 0, bytes}, {"prod:0", 1, {1, sn}, off, bytes}};
  s.inputs_bytes = off + bytes;
  s.outputs_bytes = off + bytes;
  s.kernels = {{"add", ReadSpirv("add"), 3, 1}, {"mul", ReadSpirv("mul"), 3, 1}};
  s.bindings = {{2, 0, bytes}, {2, off, bytes}, {3, 0, bytes}, {2, 0, bytes}, {2, off, bytes}, {3, off, bytes}};
  s.spec = {n};
  const uint32_t g = Groups(n);
  s.dispatch = {{0, g, 1, 1, 0, 3, 0, 1}, {1, g, 1, 1, 3, 3, 0, 1}};
  s.barrier = {0, 0};
  s.max_workgroup_count = g;
  return s;
}

// 4-bit I/O (two elements per byte): input "q" of `dtype` (21 UINT4, 22
// INT4 or 23 FLOAT4E2M1) [n] in ceil(n / 2) bytes, copied word by word
// (shaders/copy_words.comp) into output "r" of the same type and shape.
inline BundleSpec Packed4CopyBundle(uint32_t dtype, uint32_t n) {
  BundleSpec s;
  const uint64_t bytes = (n + 1) / 2, words = (bytes + 3) / 4;
  s.inputs = {{"q", dtype, {static_cast<int64_t>(n)}, 0, bytes}};
  s.outputs = {{"r", dtype, {static_cast<int64_t>(n)}, 0, bytes}};
  s.inputs_bytes = words * 4;
  s.outputs_bytes = words * 4;
  s.kernels = {{"copy_words", ReadSpirv("copy_words"), 2, 1}};
  s.bindings = {{2, 0, words * 4}, {3, 0, words * 4}};
  s.spec = {static_cast<uint32_t>(words)};
  s.dispatch = {{0, 1, 1, 1, 0, 2, 0, 1}};
  s.barrier = {0};
  return s;
}

// y ([1, 5 n]) = shaders/signed_zeros.comp of x ([1, n]): five results per
// element whose sign of zero, infinity or NaN only IEEE arithmetic keeps.
inline BundleSpec SignedZerosBundle(uint32_t n) {
  BundleSpec s;
  const uint64_t in_bytes = 4ull * n, out_bytes = 5 * in_bytes;
  s.inputs.push_back({"x", 1, {1, static_cast<int64_t>(n)}, 0, in_bytes});
  s.outputs.push_back({"y", 1, {1, 5 * static_cast<int64_t>(n)}, 0, out_bytes});
  s.inputs_bytes = in_bytes;
  s.outputs_bytes = out_bytes;
  s.kernels = {{"signed_zeros", ReadSpirv("signed_zeros"), 2, 1}};
  s.bindings = {{2, 0, in_bytes}, {3, 0, out_bytes}};
  s.spec = {n};
  const uint32_t g = Groups(n);
  s.dispatch = {{0, g, 1, 1, 0, 2, 0, 1}};
  s.barrier = {0};
  s.max_workgroup_count = g;
  return s;
}

// y = x ([1, n]) through one deliberately slow dispatch (shaders/spin.comp:
// `iterations` dependent multiply-adds per element): a frame that takes long
// enough to observe receive_timeout_ms expiring.
inline BundleSpec SpinBundle(uint32_t n, uint32_t iterations) {
  BundleSpec s;
  const uint64_t bytes = 4ull * n;
  s.inputs.push_back({"x", 1, {1, static_cast<int64_t>(n)}, 0, bytes});
  s.outputs.push_back({"y", 1, {1, static_cast<int64_t>(n)}, 0, bytes});
  s.inputs_bytes = bytes;
  s.outputs_bytes = bytes;
  s.kernels = {{"spin", ReadSpirv("spin"), 2, 2}};
  s.bindings = {{2, 0, bytes}, {3, 0, bytes}};
  s.spec = {n, iterations};
  const uint32_t g = Groups(n);
  s.dispatch = {{0, g, 1, 1, 0, 2, 0, 2}};
  s.barrier = {0};
  s.max_workgroup_count = g;
  return s;
}

// Feature texel_bindings with one binding row viewed in two formats: y =
// w * (x + w) for x, w, y of shape [1, n]. Binding rows 0 x, 1 w, 2 t (arena),
// 3 y; three dispatches, each after a barrier but the first:
//   0: mul_texel "vfs" on rows 0-2   t = x (as RGBA32) * w (as R32)
//   1: add_texel "fvs" on rows 0-2   t = x (as R32) + w (as RGBA32)
//   2: mul_texel "vfs" on rows 1-3   y = w (as RGBA32) * t (as R32)
// so x and w each have two views and t one: five views for four rows.
inline BundleSpec SharedRowTexelBundle(uint32_t n, const std::vector<float>& w) {
  BundleSpec s;
  const uint64_t bytes = 4ull * n;
  s.inputs.push_back({"x", 1, {1, static_cast<int64_t>(n)}, 0, bytes});
  s.outputs.push_back({"y", 1, {1, static_cast<int64_t>(n)}, 0, bytes});
  s.inputs_bytes = bytes;
  s.outputs_bytes = bytes;
  s.weights.assign(bytes, 0);
  memcpy(s.weights.data(), w.data(), bytes);
  s.arena_bytes = bytes;
  s.features = "texel_bindings";
  s.kernels = {{"mul_texel", ReadSpirv("mul_texel"), 3, 1, "vfs"}, {"add_texel", ReadSpirv("add_texel"), 3, 1, "fvs"}};
  s.bindings = {{2, 0, bytes}, {0, 0, bytes}, {1, 0, bytes}, {3, 0, bytes}};
  s.spec = {n};
  const uint32_t g = Groups(n);
  s.dispatch = {{0, g, 1, 1, 0, 3, 0, 1}, {1, g, 1, 1, 0, 3, 0, 1}, {0, g, 1, 1, 1, 3, 0, 1}};
  s.barrier = {0, 1, 1};
  s.max_workgroup_count = g;
  return s;
}

// ---------------------------------------------------------------- dynamic shapes

// Opcodes of shape.program and kinds of shape.refs (docs/bundle-format.md,
// "Dynamic shapes").
enum : int64_t { kOpConst = 0, kOpSymbol, kOpAdd, kOpSub, kOpMul, kOpFloorDiv, kOpCeilDiv, kOpMod, kOpMin, kOpMax,
                 kOpEq, kOpLt };
enum : uint32_t { kRefGroups = 0, kRefSpec = 1, kRefInput = 2, kRefOutput = 3, kRefParam = 4, kRefGuard = 5 };

// AffineRelu compiled for x, y of shape [1, N], N in [min, max] on
// multiple_of (feature dynamic_shapes): the plan and weights are those of
// AffineReluBundle(max); every dispatch's group count x is ceildiv(N, 64)
// and its specialization value N. shape.program:
//   0: symbol N   1: const 64   2: ceildiv(v0, v1)
inline BundleSpec DynamicAffineBundle(uint32_t min, uint32_t max, uint32_t multiple_of, const std::vector<float>& w,
                                      const std::vector<float>& b) {
  BundleSpec s = AffineReluBundle(max, w, b);
  s.features = "dynamic_shapes";
  s.symbols = {{"N", min, max, multiple_of}};
  s.shape_program = {{kOpSymbol, 0, 0}, {kOpConst, 64, 0}, {kOpCeilDiv, 0, 1}};
  s.shape_refs = {{kRefInput, 0, 1, 0}, {kRefOutput, 0, 1, 0}};
  for (uint32_t d = 0; d < 3; ++d) {
    s.shape_refs.push_back({kRefGroups, d, 0, 2});  // table 0, axis x
    s.shape_refs.push_back({kRefSpec, d, 0, 0});    // program.spec[d] = N
  }
  return s;
}

// AffineRelu over 6 elements whose output shape is read at run time (feature
// value_symbols): a second input 'shape' (int64 [2]) holds the output's two
// dimensions (symbols shape[0], shape[1], each in [1, 6]); a guard requires
// shape[0] * shape[1] == 6. The kernels see only static sizes. shape.program:
//   0: symbol shape[0]   1: symbol shape[1]   2: mul(v0, v1)   3: const 6   4: eq(v2, v3)
inline BundleSpec ValueShapedAffineBundle(const std::vector<float>& w, const std::vector<float>& b) {
  BundleSpec s = AffineReluBundle(6, w, b);
  const uint64_t off = Align256(24);
  s.inputs.push_back({"shape", 7, {2}, off, 16});
  s.inputs_bytes = off + 16;
  s.outputs[0].shape = {6, 6};  // the program at every symbol's max (a placeholder; not a valid point)
  s.features = "dynamic_shapes value_symbols";
  s.symbols = {{"shape[0]", 1, 6, 1, 1, 0}, {"shape[1]", 1, 6, 1, 1, 1}};
  s.sizevars = std::vector<std::pair<std::string, uint64_t>>{{"shape_0_", 6}, {"shape_1_", 6}};  // names made charset-safe
  s.guards = {"the target shape must hold 6 elements"};
  s.shape_program = {{kOpSymbol, 0, 0}, {kOpSymbol, 1, 0}, {kOpMul, 0, 1}, {kOpConst, 6, 0}, {kOpEq, 2, 3}};
  s.shape_refs = {{kRefOutput, 0, 0, 0}, {kRefOutput, 0, 1, 1}, {kRefGuard, 0, 0, 4}};
  return s;
}

// ValueShapedAffineBundle whose input 'shape' is int64 [K], K a symbol in
// [1, 2] (input dimension and value source at once): sent with K = 1 it holds
// no element 1, which symbol shape[1] reads. shape.program gains
//   5: symbol K
inline BundleSpec ValueShapedSymbolicLengthBundle(const std::vector<float>& w, const std::vector<float>& b) {
  BundleSpec s = ValueShapedAffineBundle(w, b);
  s.symbols.push_back({"K", 1, 2, 1});
  s.sizevars->push_back({"K", 2});
  s.shape_program.push_back({kOpSymbol, 2, 0});
  s.shape_refs.push_back({kRefInput, 1, 0, 5});
  return s;
}

// ValueShapedAffineBundle whose target shape comes from a float input
// (feature float_value_symbols): 'factors' ([2] of `dtype`: 1 float32, 10
// float16 or 11 float64) holds e0, e1, and the output's dimensions are the
// symbols R = floor(e0 x 2) and C = floor(e1 x 3) (shape.symbol.<s>.scale 2
// and 3), each in [1, 6]; the guard requires R * C == 6. Same program.
inline BundleSpec ScaledValueAffineBundle(const std::vector<float>& w, const std::vector<float>& b,
                                          uint32_t dtype = 1) {
  BundleSpec s = ValueShapedAffineBundle(w, b);
  const uint64_t bytes = 2 * (dtype == 11 ? 8 : dtype == 10 ? 2 : 4);
  s.inputs[1] = {"factors", dtype, {2}, s.inputs[1].offset, bytes};
  s.inputs_bytes = s.inputs[1].offset + bytes;
  s.features = "dynamic_shapes value_symbols float_value_symbols";
  s.symbols = {{"R", 1, 6, 1, 1, 0, 2}, {"C", 1, 6, 1, 1, 1, 3}};
  s.sizevars = std::vector<std::pair<std::string, uint64_t>>{{"R", 6}, {"C", 6}};
  return s;
}

// y[r] = sum_k x[r, k] for x [R, L], y [R] (shaders/row_sum.comp), with two
// symbols: R in [r_min, r_max] and L in [l_min, l_max] on multiple_of
// l_multiple. Group count ceildiv(R, 64); specialization values R and L.
//   0: symbol R   1: symbol L   2: const 64   3: ceildiv(v0, v2)
inline BundleSpec DynamicRowSumBundle(uint32_t r_min, uint32_t r_max, uint32_t l_min, uint32_t l_max,
                                      uint32_t l_multiple) {
  BundleSpec s;
  const uint64_t in_bytes = 4ull * r_max * l_max, out_bytes = 4ull * r_max;
  s.inputs.push_back({"x", 1, {r_max, l_max}, 0, in_bytes});
  s.outputs.push_back({"y", 1, {r_max}, 0, out_bytes});
  s.inputs_bytes = in_bytes;
  s.outputs_bytes = out_bytes;
  s.kernels = {{"row_sum", ReadSpirv("row_sum"), 2, 2}};
  s.bindings = {{2, 0, in_bytes}, {3, 0, out_bytes}};
  s.spec = {r_max, l_max};
  s.dispatch = {{0, Groups(r_max), 1, 1, 0, 2, 0, 2}};
  s.barrier = {0};
  s.max_workgroup_count = Groups(r_max);
  s.features = "dynamic_shapes";
  s.symbols = {{"R", r_min, r_max, 1}, {"L", l_min, l_max, l_multiple}};
  s.shape_program = {{kOpSymbol, 0, 0}, {kOpSymbol, 1, 0}, {kOpConst, 64, 0}, {kOpCeilDiv, 0, 2}};
  s.shape_refs = {{kRefInput, 0, 0, 0}, {kRefInput, 0, 1, 1}, {kRefOutput, 0, 0, 0},
                  {kRefGroups, 0, 0, 3}, {kRefSpec, 0, 0, 0}, {kRefSpec, 1, 0, 1}};
  return s;
}

// DynamicRowSumBundle whose kernel reads R and L from the parameter buffer
// (features dynamic_shapes and parameter_buffer; shaders/row_sum_params.comp):
// program.spec holds the slot markers 0x7FFF0000 | 0 (R) and | 1 (L), and
// shape.params = 2 slots take symbol R (slot 0) and symbol L (slot 1). One
// pipeline serves every shape.
inline BundleSpec DynamicRowSumParamsBundle(uint32_t r_min, uint32_t r_max, uint32_t l_min, uint32_t l_max,
                                            uint32_t l_multiple) {
  BundleSpec s = DynamicRowSumBundle(r_min, r_max, l_min, l_max, l_multiple);
  s.kernels = {{"row_sum_params", ReadSpirv("row_sum_params"), 2, 2}};
  s.features = "dynamic_shapes parameter_buffer";
  s.spec = {0x7FFF0000u, 0x7FFF0001u};
  s.shape_params = 2;
  s.shape_refs = {{kRefInput, 0, 0, 0}, {kRefInput, 0, 1, 1}, {kRefOutput, 0, 0, 0},
                  {kRefGroups, 0, 0, 3}, {kRefParam, 0, 0, 0}, {kRefParam, 1, 0, 1}};
  return s;
}

// TwoInTwoOutBundle(max) with one symbol N in [1, max] shared by both inputs
// ("input:0" [1, N], "画像" [N]) and both outputs ("sum/out" [N], "prod:0"
// [1, N]).
inline BundleSpec DynamicTwoInTwoOutBundle(uint32_t max) {
  BundleSpec s = TwoInTwoOutBundle(max);
  s.features = "dynamic_shapes";
  s.symbols = {{"N", 1, max, 1}};
  s.shape_program = {{kOpSymbol, 0, 0}, {kOpConst, 64, 0}, {kOpCeilDiv, 0, 1}};
  s.shape_refs = {{kRefInput, 0, 1, 0}, {kRefInput, 1, 0, 0}, {kRefOutput, 0, 0, 0}, {kRefOutput, 1, 1, 0},
                  {kRefGroups, 0, 0, 2}, {kRefGroups, 1, 0, 2}, {kRefSpec, 0, 0, 0}};
  return s;
}

// A Loop whose trip count only the device knows (feature segment_program):
// inputs x (float [1, 4]) and t (int32 [1]); outputs y = x * 2^M (float
// [1, 4]) and z = the first M rows of a [cap, 4] table of 0, 1, 2, ...
// (float [M, 4]), where M = t as the device copies it into the arena and
// the control program reads it back (decided symbol M in [0, cap], counter
// i in [0, cap]). Segments: 0 = copy t to the arena, copy x to y; 1 = the
// body, y = y * 2; 2 = z, sized by M (spec N = 4M, ceil(4M / 64) groups:
// none at M = 0). cap <= 16.
//   shape.program: 0 const 0, 1 const 1, 2 symbol M, 3 symbol i, 4 lt(i, M),
//                  5 add(i, 1), 6 const 4, 7 mul(M, 4), 8 const 64, 9 ceildiv(v7, v8)
//   control.program: 0 run 0; 1 read M; 2 set i = v0; 3 branch_zero v4 -> 7;
//                    4 run 1; 5 set i = v5; 6 jump 3 (limit jump_limit); 7 run 2
inline BundleSpec SegmentLoopBundle(uint32_t cap, int64_t jump_limit) {
  BundleSpec s;
  s.features = "dynamic_shapes segment_program";
  s.inputs = {{"x", 1, {1, 4}, 0, 16}, {"t", 6, {1}, 256, 4}};
  s.inputs_bytes = 260;
  s.outputs = {{"y", 1, {1, 4}, 0, 16}, {"z", 1, {cap, 4}, 256, uint64_t{cap} * 16}};
  s.outputs_bytes = 256 + uint64_t{cap} * 16;
  s.arena_bytes = 256;
  s.weights.resize(256 + uint64_t{cap} * 16);
  const float two[4] = {2, 2, 2, 2};
  memcpy(s.weights.data(), two, 16);
  for (uint32_t k = 0; k < 4 * cap; ++k) {
    const float v = static_cast<float>(k);
    memcpy(s.weights.data() + 256 + 4 * k, &v, 4);
  }
  s.kernels = {{"copy_words", ReadSpirv("copy_words"), 2, 1}, {"mul", ReadSpirv("mul"), 3, 1}};
  s.bindings = {{2, 256, 4}, {1, 0, 4},                    // row 0: t -> arena
                {2, 0, 16}, {3, 0, 16},                    // row 1: x -> y
                {3, 0, 16}, {0, 0, 16}, {3, 0, 16},        // row 2: y = y * w
                {0, 256, uint64_t{cap} * 16}, {3, 256, uint64_t{cap} * 16}};  // row 3: table -> z
  s.spec = {1, 4, 4, 4 * cap};
  s.dispatch = {{0, 1, 1, 1, 0, 2, 0, 1}, {0, 1, 1, 1, 2, 2, 1, 1}, {1, 1, 1, 1, 4, 3, 2, 1}, {0, 1, 1, 1, 7, 2, 3, 1}};
  s.barrier = {0, 0, 1, 1};
  s.symbols = {{"M", 0, cap, 1}, {"i", 0, cap, 1}};
  s.symbols[0].decided = 1;
  s.symbols[1].decided = 1;
  s.shape_program = {{kOpConst, 0, 0}, {kOpConst, 1, 0}, {kOpSymbol, 0, 0}, {kOpSymbol, 1, 0}, {kOpLt, 3, 2},
                     {kOpAdd, 3, 1},   {kOpConst, 4, 0}, {kOpMul, 2, 6},    {kOpConst, 64, 0}, {kOpCeilDiv, 7, 8}};
  s.shape_refs = {{kRefOutput, 1, 0, 2}, {kRefGroups, 3, 0, 9}, {kRefSpec, 3, 0, 7}};
  s.control_segments = {{0, 2}, {2, 3}, {3, 4}};
  s.control_program = {{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 1, 0, 0}, {3, 4, 7, 0},
                       {0, 1, 0, 0}, {2, 1, 5, 0}, {4, 3, jump_limit, 1}, {0, 2, 0, 0}};
  s.control_reads = {{1, 0, 6, 0, 0}};  // arena offset 0, INT32, refuse
  s.control_texts = {"the trip count of Loop 'loop'", "Loop 'loop'"};
  return s;
}

// An If whose condition only the device knows and whose branches give
// outputs of different shapes (feature segment_program): inputs x (float
// [1, 4]) and c (int32 [1]); output z = x * w (float [4]) when c is 1,
// the first two weights w[0..1] (float [2]) when c is 0, w = 10, 20, 30,
// 40. The device copies c into the arena, the control program reads it
// back into decided symbol cond ([0, 1], refused outside), sets the
// output's extent N (decided, [0, 4]) and runs one branch's segment.
//   shape.program: 0 symbol cond, 1 symbol N, 2 const 4, 3 const 2
//   control.program: 0 run 0; 1 read cond; 2 branch_zero v0 -> 6; 3 set N = v2;
//                    4 run 1 (then); 5 jump 8; 6 set N = v3; 7 run 2 (else)
inline BundleSpec SegmentIfBundle() {
  BundleSpec s;
  s.features = "dynamic_shapes segment_program";
  s.inputs = {{"x", 1, {1, 4}, 0, 16}, {"c", 6, {1}, 256, 4}};
  s.inputs_bytes = 260;
  s.outputs = {{"z", 1, {4}, 0, 16}};
  s.outputs_bytes = 16;
  s.arena_bytes = 256;
  const float w[4] = {10, 20, 30, 40};
  s.weights.resize(16);
  memcpy(s.weights.data(), w, 16);
  s.kernels = {{"copy_words", ReadSpirv("copy_words"), 2, 1}, {"mul", ReadSpirv("mul"), 3, 1}};
  s.bindings = {{2, 256, 4}, {1, 0, 4},              // row 0: c -> arena
                {2, 0, 16}, {0, 0, 16}, {3, 0, 16},  // row 1 (then): z = x * w
                {0, 0, 8}, {3, 0, 8}};               // row 2 (else): z = w[0..1]
  s.spec = {1, 4, 2};
  s.dispatch = {{0, 1, 1, 1, 0, 2, 0, 1}, {1, 1, 1, 1, 2, 3, 1, 1}, {0, 1, 1, 1, 5, 2, 2, 1}};
  s.barrier = {0, 0, 0};
  s.symbols = {{"cond", 0, 1, 1}, {"N", 0, 4, 1}};
  s.symbols[0].decided = 1;
  s.symbols[1].decided = 1;
  s.shape_program = {{kOpSymbol, 0, 0}, {kOpSymbol, 1, 0}, {kOpConst, 4, 0}, {kOpConst, 2, 0}};
  s.shape_refs = {{kRefOutput, 0, 0, 1}};
  s.control_segments = {{0, 1}, {1, 2}, {2, 3}};
  s.control_program = {{0, 0, 0, 0}, {1, 0, 0, 0}, {3, 0, 6, 0}, {2, 1, 2, 0},
                       {0, 1, 0, 0}, {4, 8, -1, 0}, {2, 1, 3, 0}, {0, 2, 0, 0}};
  s.control_reads = {{1, 0, 6, 0, 0}};  // arena offset 0, INT32, refuse
  s.control_texts = {"the condition of If 'if'"};
  return s;
}

}  // namespace oaaxvk::test

#endif  // OAAXVK_TESTS_RUNTIME_TEST_BUNDLES_H_

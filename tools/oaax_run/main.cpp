// oaax-run: a generic OAAX host, the first tool to reach for (as trtexec is
// for TensorRT). Loads any OAAX runtime library with dlopen, loads a model,
// feeds given (.npy) or seeded random inputs, keeps up to K inputs in flight,
// writes the outputs as .npy and reports latency percentiles, throughput,
// model-load time and host overhead (text, or JSON with --json).
//
//   oaax-run [--runtime PATH.so] --model FILE [--input NAME=FILE.npy ...]
//            [--shape NAME=D0,D1,... ...] [--output-dir DIR] [--iterations N]
//            [--warmup N] [--depth K] [--seed S] [--arg KEY=VALUE ...]
//            [--cast-inputs] [--float32-outputs] [--json] [--quiet]
//
// float16 is numpy's '<f2'; bfloat16 and the low-bit types are the ml_dtypes
// package's dtypes in .npy files (npy_tensor.h has the forms and rules):
// --cast-inputs lets float32/float64 files feed such inputs (rounded as ONNX
// Cast), --float32-outputs writes such outputs as float32.
//
// Latency is measured at depth 1 by default (one inference in flight, so no
// queueing counts in it); throughput runs ask for more with --depth. For a
// batched model (the first input's first dimension > 1) the report gives
// items/s beside inferences/s.
//
// Manifest mode (the form tools/reference/ort_run.js reads and writes), kept
// for the model tests: --inputs DIR (DIR/manifest.json: [{"name", "dtype",
// "shape", "file"}] with raw little-endian data in DIR/<file>) and
// --outputs DIR (the outputs in the same form). Several --inputs (each with
// its --outputs, in the same order) run one inference per input set on the
// one loaded model, in order, so many sets cost one model load: a set the
// runtime rejects is reported (naming its directory) and the others still
// run; the exit status is 1 when any set failed.
//
// Random inputs need the model's input names, dtypes and shapes: they are read
// from the model file when it is an oaax-vulkan bundle (io.input.<i>.* in
// docs/bundle-format.md), which also lets every --input file be checked before
// the runtime is touched; for other model formats every input must be given.
// The OAAX Vulkan runtime runs only bundles: given it and any other file (an
// .onnx above all), oaax-run says how to convert the model instead of passing
// the file on.
// For a bundle compiled for a range of shapes (feature dynamic_shapes) the
// random inputs take the maximum shape unless --shape picks another, and
// every given shape is checked against the symbols' ranges.
//
// Exit status: 0 success, 1 error (message on stderr, naming the file, tensor
// or runtime call), 2 bad usage.
#include <dlfcn.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "npy.h"
#include "npy_tensor.h"
#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/oinf.h"
#include "oaax_vulkan/status.h"
#include "oaax_vulkan/tensors_util.h"

namespace {

using oaaxvk::Status;
using oaaxvk::StatusOr;
using oaaxvk::npy::DType;
using Clock = std::chrono::steady_clock;

// runtime_name() of this project's runtime: the one that runs only bundles.
constexpr const char* kVulkanRuntimeName = "OAAX Vulkan Runtime";

// The --help footer: every argument the OAAX Vulkan runtime takes (its
// runtime_initialization_with_args keys, docs/runtime.md "Arguments"); other
// OAAX runtimes ignore keys they do not know.
// The --help section on the .npy forms of the types numpy lacks (the rules
// are npy_tensor.h's).
constexpr const char* kTypes = R"(
Types (.npy files of --input and --output-dir; docs/runtime.md "oaax-run"):
  float16                  '<f2', numpy's float16
  bfloat16, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,
  int4, uint4, float4_e2m1fn
                           the ml_dtypes types (pip install ml_dtypes): outputs are written with
                           the ml_dtypes name as descr, so `import ml_dtypes; np.load(f)` gives
                           that dtype; one byte per element for the 4-bit types (the code in
                           the low nibble), as ml_dtypes stores them. Inputs are taken in that
                           form or as np.save writes an ml_dtypes array ('<V2' for bfloat16,
                           '<V1' for the others, '<f1' for float8_e5m2; the model input gives
                           the type).
  --cast-inputs            float32/float64 files feed these inputs, rounded as ONNX Cast:
                           nearest even, the 8-bit and 4-bit floats saturate, int4/uint4
                           truncate and wrap, float8_e8m0fnu rounds up
  --float32-outputs        these outputs written as float32 (exact) instead
)";

constexpr const char* kRuntimeArgs = R"(
Runtime arguments of the OAAX Vulkan runtime (--arg KEY=VALUE; docs/runtime.md "Arguments"):
  device=NAME|INDEX        the Vulkan device: an index or a case-insensitive name substring
                           (default: the best device found)
  frames_in_flight=N       1-16 frame slots, inferences the runtime holds at once (default 2)
  receive_timeout_ms=MS    how long receive_output waits for a frame, 0 = poll (runtime default
                           5000; oaax-run passes 300000 unless given)
  log_level=L              0 trace ... 6 off (default 3); 2 (info) logs the device, the load
                           summary and the warm-up time, 1 (debug) every dispatch
  log_file=PATH            append the log there (default stderr)
  validation=0|1           Vulkan validation layer; any message fails runtime_destruction (default 0)
  pipeline_cache=auto|off|FILE
                           persistent pipeline cache: auto = one file per bundle and device in
                           pipeline_cache_dir, off = none, else that file (default auto)
  pipeline_cache_dir=DIR   directory of the auto cache files (default $XDG_CACHE_HOME/oaax-vulkan)
  load_warmup=0|1          run every pipeline once at load, so the first inference is not slow
                           (default 1)
  profile=0|1              per-dispatch GPU timestamps, logged at info level (log_level=2) (default 0)
  kernel_variant=auto|default|gpu|cpu
                           which dispatch table of the bundle runs (default auto: by device type)
  fp16_weights=0|1         let GPU rows read binary16 weight copies (fp32 accumulation) (default 0)
  shape_cache_size=N       1-1024 command buffers per frame slot kept for a dynamic-shape bundle,
                           one per input shape (default 8)

Latency is measured at --depth 1 (one inference in flight); throughput runs raise --depth
(e.g. 4) so the device never waits for the host. A batched model (first input's first
dimension > 1) reports items/s beside inferences/s. The model is a model.oinf written by
oaax-vulkan-toolchain (an .onnx file must be converted first). See docs/runtime.md, "oaax-run".
)";

double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// ---------------------------------------------------------------- runtime library

struct Api {
  void* handle = nullptr;
  int (*init_with_args)(int, const char**, const void**) = nullptr;
  int (*load)(const char*) = nullptr;
  int (*send)(tensors_struct*) = nullptr;
  int (*receive)(tensors_struct**) = nullptr;
  int (*destroy)() = nullptr;
  const char* (*error)() = nullptr;
  const char* (*name)() = nullptr;
  const char* (*version)() = nullptr;
};

Status LoadApi(const std::string& path, Api* api) {
  // A bare name goes through the dynamic linker's search; a path is used as is.
  api->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api->handle) {
    const char* e = dlerror();
    return oaaxvk::NotFound("cannot load runtime library '" + path + "': " + (e ? e : "unknown dlopen error"));
  }
  std::vector<std::string> missing;
  auto sym = [&](const char* name, auto* out) {
    *out = reinterpret_cast<std::remove_pointer_t<decltype(out)>>(dlsym(api->handle, name));
    if (!*out) missing.push_back(name);
  };
  sym("runtime_initialization_with_args", &api->init_with_args);
  sym("runtime_model_loading", &api->load);
  sym("send_input", &api->send);
  sym("receive_output", &api->receive);
  sym("runtime_destruction", &api->destroy);
  sym("runtime_error_message", &api->error);
  sym("runtime_name", &api->name);
  sym("runtime_version", &api->version);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    dlclose(api->handle);
    api->handle = nullptr;
    return oaaxvk::NotFound("runtime library '" + path + "' is not an OAAX runtime: missing symbol(s) " + list);
  }
  return Status::Ok();
}

std::string DefaultRuntime() {
  std::error_code ec;
  auto exe = std::filesystem::canonical("/proc/self/exe", ec);
  if (!ec) {
    auto candidate = exe.parent_path() / "libRuntimeLibrary.so";
    if (std::filesystem::exists(candidate)) return candidate.string();
  }
  return "libRuntimeLibrary.so";
}

// ---------------------------------------------------------------- tensors

// One named input or output, owned by oaax-run.
struct Tensor {
  std::string name;
  const DType* dtype = nullptr;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> data;
  std::string source;  // file or "random(seed)"
};

// A malloc'ed tensors_struct (every field separately, as OAAX hosts do);
// nullptr when host memory ran out.
tensors_struct* ToStruct(const std::vector<Tensor>& ts) {
  tensors_struct* t = oaaxvk::AllocTensors(ts.size());
  for (size_t i = 0; t && i < ts.size(); ++i) {
    if (!oaaxvk::SetTensor(t, i, ts[i].name.c_str(), ts[i].dtype->type, ts[i].shape.data(), ts[i].shape.size(),
                           ts[i].data.data(), ts[i].data.size())) {
      oaaxvk::FreeTensors(t);
      return nullptr;
    }
  }
  return t;
}

// Copies a runtime's output struct (checking what a foreign runtime returns).
StatusOr<std::vector<Tensor>> FromStruct(const tensors_struct* t) {
  if (!t) return oaaxvk::Internal("receive_output returned success but a NULL struct");
  std::vector<Tensor> out;
  for (size_t i = 0; i < t->num_tensors; ++i) {
    Tensor x;
    x.name = t->names && t->names[i] ? t->names[i] : "#" + std::to_string(i);
    x.dtype = t->data_types ? oaaxvk::npy::FindDType(t->data_types[i]) : nullptr;
    if (!x.dtype || !t->ranks || !t->shapes || !t->data || (t->ranks[i] && !t->shapes[i]))
      return oaaxvk::Internal("output '" + x.name + "': unsupported data type or NULL field in the runtime's output");
    x.shape.assign(t->shapes[i], t->shapes[i] + t->ranks[i]);
    uint64_t numel = 1;
    for (uint64_t d : x.shape) numel *= d;
    const uint64_t nbytes = oaaxvk::TensorByteSize(x.dtype->type, numel);
    if (nbytes && !t->data[i]) return oaaxvk::Internal("output '" + x.name + "': NULL data");
    const auto* p = static_cast<const uint8_t*>(t->data[i]);
    if (nbytes) x.data.assign(p, p + nbytes);
    out.push_back(std::move(x));
  }
  return out;
}

std::string DimsString(const std::vector<uint64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// ---------------------------------------------------------------- model inputs

struct InputDesc {
  std::string name;
  const DType* dtype = nullptr;
  std::vector<uint64_t> shape;  // the stored shape (the maximum one of a dynamic bundle)
  std::vector<int> symbol;      // per dimension: the symbol it is (feature dynamic_shapes), -1 = static
};

// A symbolic dimension of a dynamic bundle (docs/bundle-format.md, "Dynamic shapes").
struct SymbolDesc {
  std::string name;
  int64_t min = 1, max = 1, multiple_of = 1;
};

// What oaax-run knows of a bundle's inputs.
struct ModelInputs {
  std::vector<InputDesc> inputs;
  std::vector<SymbolDesc> symbols;
};

// "[1, 3, H, W]".
std::string ModelShape(const InputDesc& d, const std::vector<SymbolDesc>& symbols) {
  std::string r = "[";
  for (size_t i = 0; i < d.shape.size(); ++i)
    r += (i ? ", " : "") + (d.symbol[i] >= 0 ? symbols[static_cast<size_t>(d.symbol[i])].name : std::to_string(d.shape[i]));
  return r + "]";
}

std::string RangeString(const SymbolDesc& y) {
  std::string r = "[" + std::to_string(y.min) + ", " + std::to_string(y.max) + "]";
  if (y.multiple_of != 1) r += " (multiple of " + std::to_string(y.multiple_of) + ")";
  return r;
}

// The model's inputs when `path` is an oaax-vulkan bundle; an empty optional
// (false) when it is another kind of file; an error for a broken bundle.
StatusOr<bool> ReadBundleInputs(const std::string& path, ModelInputs* model) {
  std::vector<InputDesc>* out = &model->inputs;
  auto file = oaaxvk::oinf::File::Open(path);
  if (!file.ok()) {
    if (file.status().code() == oaaxvk::StatusCode::kNotFound) return file.status();
    return false;  // not an OINF file: the runtime decides what it is
  }
  const auto& f = file.value();
  const auto* format = f.FindMetadata("format");
  if (!format || format->type != oaaxvk::oinf::ValueType::kString || format->string_value != "oaax-vulkan-bundle")
    return false;
  auto err = [&](const std::string& what) { return oaaxvk::DataLoss(path + ": bundle metadata " + what); };
  uint32_t count = 0;
  const auto* m = f.FindMetadata("io.inputs");
  if (!m || !m->GetScalar(&count)) return err("'io.inputs' (u32) is missing");
  for (uint32_t i = 0; i < count; ++i) {
    const std::string p = "io.input." + std::to_string(i) + ".";
    InputDesc d;
    const auto* name = f.FindMetadata(p + "name");
    if (!name || name->type != oaaxvk::oinf::ValueType::kNdArray ||
        name->ndarray.element_type != oaaxvk::oinf::ValueType::kU8)
      return err("'" + p + "name' (u8 ndarray) is missing");
    d.name.assign(reinterpret_cast<const char*>(name->ndarray.data.data), name->ndarray.data.size);
    uint32_t dt = 0;
    const auto* dtype = f.FindMetadata(p + "dtype");
    if (!dtype || !dtype->GetScalar(&dt)) return err("'" + p + "dtype' (u32) is missing");
    d.dtype = oaaxvk::npy::FindDType(static_cast<tensor_data_type>(dt));
    if (!d.dtype) return err("'" + p + "dtype' = " + std::to_string(dt) + " is not a supported OAAX data type");
    const auto* shape = f.FindMetadata(p + "shape");
    if (!shape || shape->type != oaaxvk::oinf::ValueType::kNdArray ||
        shape->ndarray.element_type != oaaxvk::oinf::ValueType::kI64)
      return err("'" + p + "shape' (i64 ndarray) is missing");
    for (uint64_t k = 0; k < shape->ndarray.numel; ++k) {
      int64_t v;
      memcpy(&v, shape->ndarray.data.data + 8 * k, 8);
      if (v < 0) return err("'" + p + "shape' has a negative dimension");
      d.shape.push_back(static_cast<uint64_t>(v));
    }
    d.symbol.assign(d.shape.size(), -1);
    out->push_back(std::move(d));
  }
  // Feature dynamic_shapes: the symbols and which input dimensions they are
  // (shape.refs rows of kind 2 name `symbol` instructions of shape.program).
  // The runtime validates all of it at load; this reads what --shape needs.
  if (f.FindMetadata("shape.symbols")) {
    uint32_t ns = 0;
    if (!f.FindMetadata("shape.symbols")->GetScalar(&ns)) return err("'shape.symbols' is not a u32");
    auto integer = [&](const std::string& key, int64_t* v) -> bool {
      const auto* m = f.FindMetadata(key);
      return m && m->GetScalar(v);
    };
    for (uint32_t k = 0; k < ns; ++k) {
      const std::string p = "shape.symbol." + std::to_string(k) + ".";
      SymbolDesc y;
      const auto* name = f.FindMetadata(p + "name");
      if (!name || name->type != oaaxvk::oinf::ValueType::kNdArray ||
          name->ndarray.element_type != oaaxvk::oinf::ValueType::kU8)
        return err("'" + p + "name' (u8 ndarray) is missing");
      y.name.assign(reinterpret_cast<const char*>(name->ndarray.data.data), name->ndarray.data.size);
      if (!integer(p + "min", &y.min) || !integer(p + "max", &y.max) || !integer(p + "multiple_of", &y.multiple_of) ||
          y.multiple_of < 1)
        return err("'" + p + "min', 'max' or 'multiple_of' (i64) is missing or invalid");
      model->symbols.push_back(std::move(y));
    }
    const auto* prog = f.FindTensor("shape.program");
    const auto* refs = f.FindTensor("shape.refs");
    if (!prog || prog->dtype != oaaxvk::oinf::ValueType::kI64 || prog->dims.size() != 2 || prog->dims[1] != 3 ||
        !refs || refs->dtype != oaaxvk::oinf::ValueType::kU32 || refs->dims.size() != 2 || refs->dims[1] != 4)
      return err("tensors 'shape.program' (i64[K, 3]) and 'shape.refs' (u32[R, 4]) are missing or malformed");
    for (uint64_t r = 0; r < refs->dims[0]; ++r) {
      uint32_t ref[4];
      memcpy(ref, refs->data.data + 16 * r, 16);
      if (ref[0] != 2) continue;  // input dimensions only
      int64_t in[3] = {-1, -1, -1};
      if (ref[3] < prog->dims[0]) memcpy(in, prog->data.data + 24 * static_cast<uint64_t>(ref[3]), 24);
      if (ref[1] >= out->size() || ref[2] >= (*out)[ref[1]].shape.size() || in[0] != 1 || in[1] < 0 ||
          static_cast<uint64_t>(in[1]) >= model->symbols.size())
        return err("'shape.refs' row " + std::to_string(r) + " is not a valid input dimension of a symbol");
      (*out)[ref[1]].symbol[ref[2]] = static_cast<int>(in[1]);
    }
  }
  return true;
}

bool EndsWithCI(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

// Why `path` (not an oaax-vulkan bundle) cannot run on the OAAX Vulkan
// runtime, and how to get a bundle from it.
std::string NotABundleMessage(const std::string& path) {
  const std::string convert = "convert it first with oaax-vulkan-toolchain " + path +
                              " out/ and run out/model.oinf (oaax-run --model out/model.oinf)";
  if (EndsWithCI(path, ".onnx")) return "model '" + path + "': this is an ONNX file: " + convert;
  if (EndsWithCI(path, ".zip") || EndsWithCI(path, ".tar.gz") || EndsWithCI(path, ".tgz"))
    return "model '" + path + "': this is a model archive for the toolchain: " + convert;
  char magic[5] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(magic, sizeof magic);
  const bool oinf = f.gcount() == 5 && memcmp(magic, "OINF", 5) == 0;
  if (oinf) {
    auto file = oaaxvk::oinf::File::Open(path);
    if (!file.ok())
      return "model '" + path + "': a damaged OINF file: " + file.status().message() +
             "; convert the model again with oaax-vulkan-toolchain";
    return "model '" + path + "': an OINF file but not an oaax-vulkan bundle (its metadata 'format' is not "
           "\"oaax-vulkan-bundle\"); the OAAX Vulkan runtime runs the model.oinf that oaax-vulkan-toolchain writes";
  }
  return "model '" + path + "': not an oaax-vulkan bundle (model.oinf, starting with \"OINF\"): the OAAX Vulkan "
         "runtime runs only the bundles oaax-vulkan-toolchain writes; for an ONNX model, convert it first with "
         "oaax-vulkan-toolchain model.onnx out/ and run out/model.oinf";
}

// The runtime library's name (runtime_name() needs no initialization), ""
// when it cannot be loaded: the load reports that later with its reason.
std::string RuntimeName(const std::string& path) {
  Api probe;
  if (!LoadApi(path, &probe).ok()) return "";
  const std::string name = probe.name ? probe.name() : "";
  dlclose(probe.handle);
  return name;
}

// "dir/name.npy" without a doubled '/' when `dir` ends with one.
std::string JoinPath(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

// Checks `shape` (from `source`) against input `d` of a bundle: its rank, its
// static dimensions, and each symbolic dimension's range, multiple and value
// (*values: the symbols' values so far, -1 = not yet known; *where: what set
// each one). The error names the source, dimension, symbol and range.
Status CheckShape(const InputDesc& d, const std::vector<SymbolDesc>& symbols, const std::vector<uint64_t>& shape,
                  const std::string& source, std::vector<int64_t>* values, std::vector<std::string>* where) {
  const std::string want = "the model expects " + ModelShape(d, symbols);
  if (shape.size() != d.shape.size())
    return oaaxvk::InvalidArgument("input '" + d.name + "': " + source + " has shape " + DimsString(shape) + ", " + want);
  for (size_t i = 0; i < shape.size(); ++i) {
    const int s = d.symbol[i];
    if (s < 0) {
      if (shape[i] != d.shape[i])
        return oaaxvk::InvalidArgument("input '" + d.name + "': " + source + " has shape " + DimsString(shape) + ", " +
                                       want);
      continue;
    }
    const SymbolDesc& y = symbols[static_cast<size_t>(s)];
    const std::string dim = "input '" + d.name + "': " + source + " has dimension " + std::to_string(i) + " (" +
                            y.name + ") = " + std::to_string(shape[i]);
    if (shape[i] < static_cast<uint64_t>(y.min) || shape[i] > static_cast<uint64_t>(y.max))
      return oaaxvk::InvalidArgument(dim + ", outside " + y.name + "'s range " + RangeString(y));
    if (shape[i] % static_cast<uint64_t>(y.multiple_of) != 0)
      return oaaxvk::InvalidArgument(dim + ", not a multiple of " + std::to_string(y.multiple_of) + " (" + y.name +
                                     "'s range " + RangeString(y) + ")");
    int64_t& v = (*values)[static_cast<size_t>(s)];
    if (v >= 0 && v != static_cast<int64_t>(shape[i]))
      return oaaxvk::InvalidArgument(dim + ", but " + (*where)[static_cast<size_t>(s)] + " gives " + y.name + " = " +
                                     std::to_string(v));
    v = static_cast<int64_t>(shape[i]);
    (*where)[static_cast<size_t>(s)] = "input '" + d.name + "' (" + source + ")";
  }
  return Status::Ok();
}

// --shape NAME=D0,D1,... (NAME= for a scalar): the name and dimensions.
StatusOr<std::pair<std::string, std::vector<uint64_t>>> ParseShapeSpec(const std::string& spec) {
  const size_t eq = spec.rfind('=');
  auto bad = [&]() {
    return oaaxvk::InvalidArgument("--shape '" + spec + "' is not NAME=D0,D1,... (non-negative integers)");
  };
  if (eq == std::string::npos || eq == 0) return bad();
  std::vector<uint64_t> dims;
  const std::string list = spec.substr(eq + 1);
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string d = list.substr(pos, end - pos);
    if (d.empty() || d.size() > 18 || d.find_first_not_of("0123456789") != std::string::npos) return bad();
    dims.push_back(std::stoull(d));
    pos = end + 1;
    if (end + 1 == list.size()) return bad();  // trailing comma
  }
  return std::make_pair(spec.substr(0, eq), dims);
}

void FillRandom(Tensor* t, std::mt19937_64* rng) {
  uint64_t numel = 1;
  for (uint64_t d : t->shape) numel *= d;
  t->data.assign(oaaxvk::TensorByteSize(t->dtype->type, numel), 0);
  auto put = [&](uint64_t i, auto v) { memcpy(t->data.data() + i * sizeof(v), &v, sizeof(v)); };
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  if (oaaxvk::npy::IsConvertible(t->dtype->type)) {
    // Reals in [-1, 1] rounded to the type; small integers for int4 / uint4;
    // powers of two in [2^-5, 2^4] for float8_e8m0fnu (no sign, no zero).
    const tensor_data_type type = t->dtype->type;
    t->data = oaaxvk::npy::TensorFromCodes(type, numel, [&](uint64_t) -> uint32_t {
      if (type == DATA_TYPE_UINT4 || type == DATA_TYPE_INT4) return static_cast<uint32_t>(small(*rng) % 8);
      if (type == DATA_TYPE_FLOAT8E8M0) return static_cast<uint32_t>(127 - 5 + small(*rng));
      return oaaxvk::npy::CodeOf(type, real(*rng));
    });
    return;
  }
  for (uint64_t i = 0; i < numel; ++i) {
    switch (t->dtype->type) {
      case DATA_TYPE_FLOAT: put(i, static_cast<float>(real(*rng))); break;
      case DATA_TYPE_DOUBLE: put(i, real(*rng)); break;
      case DATA_TYPE_BOOL: put(i, static_cast<uint8_t>(small(*rng) & 1)); break;
      case DATA_TYPE_UINT8: put(i, static_cast<uint8_t>(small(*rng))); break;
      case DATA_TYPE_INT8: put(i, static_cast<int8_t>(small(*rng))); break;
      case DATA_TYPE_UINT16: put(i, static_cast<uint16_t>(small(*rng))); break;
      case DATA_TYPE_INT16: put(i, static_cast<int16_t>(small(*rng))); break;
      case DATA_TYPE_INT32: put(i, static_cast<int32_t>(small(*rng))); break;
      case DATA_TYPE_UINT32: put(i, static_cast<uint32_t>(small(*rng))); break;
      case DATA_TYPE_INT64: put(i, static_cast<int64_t>(small(*rng))); break;
      case DATA_TYPE_UINT64: put(i, static_cast<uint64_t>(small(*rng))); break;
      default: break;
    }
  }
}

// Inputs from --input NAME=FILE.npy and seeded random data (of the shapes
// --shape picks, else the stored ones), checked against the bundle's declared
// inputs when known.
// Each file's array becomes the tensor of the model input's type
// (npy_tensor.h: the ml_dtypes forms, and with `cast` float32 / float64
// rounded to float16, bfloat16 or a low-bit type).
StatusOr<std::vector<Tensor>> BuildInputs(const std::vector<std::string>& specs,
                                          const std::vector<std::string>& shape_specs, bool have_desc,
                                          const ModelInputs& model, uint64_t seed, bool cast) {
  const std::vector<InputDesc>& desc = model.inputs;
  std::map<std::string, Tensor> given;
  std::map<std::string, oaaxvk::npy::Array> arrays;
  for (const std::string& s : specs) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      return oaaxvk::InvalidArgument("--input '" + s + "' is not NAME=FILE.npy");
    Tensor t;
    t.name = s.substr(0, eq);
    t.source = s.substr(eq + 1);
    if (given.count(t.name)) return oaaxvk::InvalidArgument("--input '" + t.name + "' is given twice");
    oaaxvk::npy::Array a;
    OAAXVK_RETURN_IF_ERROR(oaaxvk::npy::Read(t.source, &a).WithContext("input '" + t.name + "'"));
    t.shape = a.shape;
    arrays[t.name] = std::move(a);
    given[t.name] = std::move(t);
  }
  std::map<std::string, std::vector<uint64_t>> shapes;
  for (const std::string& s : shape_specs) {
    OAAXVK_ASSIGN_OR_RETURN(auto named, ParseShapeSpec(s));
    if (shapes.count(named.first)) return oaaxvk::InvalidArgument("--shape '" + named.first + "' is given twice");
    if (given.count(named.first))
      return oaaxvk::InvalidArgument("--shape '" + named.first + "': the input is given with --input, which fixes its "
                                     "shape; --shape picks the shape of generated random inputs");
    shapes[named.first] = named.second;
  }
  std::vector<Tensor> out;
  if (!have_desc) {
    if (!shapes.empty())
      return oaaxvk::InvalidArgument("--shape '" + shapes.begin()->first + "': the model is not an oaax-vulkan bundle, "
                                     "so oaax-run cannot generate its inputs; give every input with --input NAME=FILE.npy");
    if (given.empty())
      return oaaxvk::InvalidArgument(
          "the model is not an oaax-vulkan bundle, so its inputs are unknown: give every input with --input NAME=FILE.npy");
    for (auto& kv : given) {
      // Without the model's input types each array goes as its own type.
      const oaaxvk::npy::Array& a = arrays[kv.first];
      if (a.dtype->type == oaaxvk::npy::kOpaque)
        return oaaxvk::InvalidArgument("input '" + kv.first + "': " + kv.second.source + " has the untyped dtype '" +
                                       a.dtype->descr + "' (np.save's form of an ml_dtypes array), and the model is "
                                       "not an oaax-vulkan bundle, so its input type is unknown: save the array "
                                       "with its ml_dtypes name as descr (oaax-run --help, \"Types\")");
      kv.second.dtype = a.dtype;
      OAAXVK_RETURN_IF_ERROR(oaaxvk::npy::ArrayToTensorData(a, a.dtype->type, false, kv.first, kv.second.source,
                                                            &kv.second.data));
      out.push_back(std::move(kv.second));
    }
    return out;
  }
  std::string names;
  for (const InputDesc& d : desc) names += (names.empty() ? "'" : ", '") + d.name + "'";
  std::set<std::string> known;
  for (const InputDesc& d : desc) known.insert(d.name);
  for (const auto& kv : given)
    if (!known.count(kv.first))
      return oaaxvk::InvalidArgument("--input '" + kv.first + "': the model has no input of that name; its inputs are " +
                                     names);
  for (const auto& kv : shapes)
    if (!known.count(kv.first))
      return oaaxvk::InvalidArgument("--shape '" + kv.first + "': the model has no input of that name; its inputs are " +
                                     names);
  // Every given shape (files, then --shape) against the model, fixing the
  // symbols' values; random inputs without --shape take those values (the
  // maximum for symbols nothing fixes).
  std::vector<int64_t> values(model.symbols.size(), -1);
  std::vector<std::string> where(model.symbols.size());
  for (const InputDesc& d : desc) {
    auto it = given.find(d.name);
    if (it == given.end()) continue;
    Tensor& t = it->second;
    OAAXVK_RETURN_IF_ERROR(
        oaaxvk::npy::ArrayToTensorData(arrays[d.name], d.dtype->type, cast, d.name, t.source, &t.data));
    t.dtype = d.dtype;
    OAAXVK_RETURN_IF_ERROR(CheckShape(d, model.symbols, t.shape, t.source, &values, &where));
  }
  for (const InputDesc& d : desc) {
    auto it = shapes.find(d.name);
    if (it != shapes.end())
      OAAXVK_RETURN_IF_ERROR(CheckShape(d, model.symbols, it->second, "--shape", &values, &where));
  }
  std::mt19937_64 rng(seed);
  for (const InputDesc& d : desc) {
    auto it = given.find(d.name);
    if (it != given.end()) {
      out.push_back(std::move(it->second));
      continue;
    }
    Tensor t;
    t.name = d.name;
    t.dtype = d.dtype;
    auto sh = shapes.find(d.name);
    if (sh != shapes.end()) {
      t.shape = sh->second;
    } else {
      t.shape = d.shape;
      for (size_t i = 0; i < t.shape.size(); ++i)
        if (d.symbol[i] >= 0 && values[static_cast<size_t>(d.symbol[i])] >= 0)
          t.shape[i] = static_cast<uint64_t>(values[static_cast<size_t>(d.symbol[i])]);
    }
    t.source = "random(seed " + std::to_string(seed) + ")";
    FillRandom(&t, &rng);
    out.push_back(std::move(t));
  }
  return out;
}

// ---------------------------------------------------------------- manifest mode

StatusOr<std::vector<Tensor>> ReadManifest(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  nlohmann::json manifest;
  try {
    std::ifstream in(path);
    if (!in) return oaaxvk::NotFound("cannot read " + path);
    manifest = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return oaaxvk::InvalidArgument(path + ": " + e.what());
  }
  if (!manifest.is_array()) return oaaxvk::InvalidArgument(path + " must be a JSON array");
  std::vector<Tensor> out;
  try {
    for (const auto& e : manifest) {
      Tensor t;
      t.name = e.at("name").get<std::string>();
      const std::string dtype = e.at("dtype").get<std::string>(), file = e.at("file").get<std::string>();
      t.dtype = oaaxvk::npy::FindDType(dtype);
      if (!t.dtype) return oaaxvk::InvalidArgument(path + ": input '" + t.name + "': unsupported dtype " + dtype);
      t.shape = e.at("shape").get<std::vector<uint64_t>>();
      t.source = JoinPath(dir, file);
      uint64_t numel = 1;
      for (uint64_t s : t.shape) numel *= s;
      std::ifstream f(t.source, std::ios::binary);
      if (!f) return oaaxvk::NotFound("input '" + t.name + "': cannot read " + t.source);
      t.data.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      const uint64_t nbytes = oaaxvk::TensorByteSize(t.dtype->type, numel);
      if (t.dtype->type == oaaxvk::npy::kOpaque)
        return oaaxvk::InvalidArgument(path + ": input '" + t.name + "': unsupported dtype " + dtype);
      if (t.data.size() != nbytes)
        return oaaxvk::InvalidArgument("input '" + t.name + "': " + t.source + " has " + std::to_string(t.data.size()) +
                                       " bytes, shape " + DimsString(t.shape) + " needs " + std::to_string(nbytes));
      out.push_back(std::move(t));
    }
  } catch (const std::exception& e) {
    return oaaxvk::InvalidArgument(path + ": " + e.what());
  }
  return out;
}

Status WriteManifest(const std::string& dir, const std::vector<Tensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return oaaxvk::NotFound("cannot create " + dir + ": " + ec.message());
  nlohmann::json m = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string file = std::to_string(i) + ".bin";
    std::ofstream f(dir + "/" + file, std::ios::binary);
    f.write(reinterpret_cast<const char*>(outputs[i].data.data()), static_cast<std::streamsize>(outputs[i].data.size()));
    if (!f) return oaaxvk::Internal("cannot write " + dir + "/" + file);
    m.push_back({{"name", outputs[i].name}, {"dtype", outputs[i].dtype->name}, {"shape", outputs[i].shape}, {"file", file}});
  }
  std::ofstream(dir + "/manifest.json") << m.dump(1) << "\n";
  return Status::Ok();
}

// A file name for a tensor name (ONNX names may hold '/', ':', any UTF-8).
std::string FileStem(const std::string& name) {
  std::string s;
  for (unsigned char c : name) s += (isalnum(c) || c == '.' || c == '-' || c == '_') ? static_cast<char>(c) : '_';
  if (s.empty() || s[0] == '.') s = "_" + s;
  return s;
}

// ---------------------------------------------------------------- statistics

struct Summary {
  double min = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Percentiles by linear interpolation between closest ranks (numpy's default).
Summary Summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto pct = [&](double p) {
    const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.p50 = pct(50);
  s.p90 = pct(90);
  s.p99 = pct(99);
  return s;
}

nlohmann::json ToJson(const Summary& s) {
  return {{"min", s.min}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

int Error(const std::string& message) {
  fprintf(stderr, "oaax-run: %s\n", message.c_str());
  return 1;
}

// Several --inputs: one inference per set, in order, on the loaded model;
// set i's outputs go to out_dirs[i] (when given). A set the runtime rejects
// (send_input or receive_output failing) is reported by its directory and
// the next set still runs. Returns 0 when every set ran, else 1.
int RunInputSets(const Api& api, const std::vector<std::vector<Tensor>>& sets, const std::vector<std::string>& in_dirs,
                 const std::vector<std::string>& out_dirs, bool quiet) {
  int rc = 0;
  for (size_t i = 0; i < sets.size(); ++i) {
    const std::string where = "input set " + std::to_string(i + 1) + " of " + std::to_string(sets.size()) + " ('" +
                              in_dirs[i] + "')";
    tensors_struct* t = ToStruct(sets[i]);
    if (!t) return Error(where + ": out of host memory building the inputs");
    const auto t0 = Clock::now();
    if (api.send(t) != 0) {
      oaaxvk::FreeTensors(t);  // on failure the caller still owns the inputs
      rc = Error(where + ": send_input failed: " + api.error());
      continue;
    }
    tensors_struct* out = nullptr;
    if (api.receive(&out) != 0) {
      rc = Error(where + ": receive_output failed: " + api.error());
      continue;
    }
    const double ms = MsSince(t0);
    StatusOr<std::vector<Tensor>> o = FromStruct(out);
    oaaxvk::FreeTensors(out);
    if (!o.ok()) {
      rc = Error(where + ": " + o.status().message());
      continue;
    }
    if (!out_dirs.empty()) {
      if (Status s = WriteManifest(out_dirs[i], o.value()); !s.ok()) {
        rc = Error(where + ": " + s.message());
        continue;
      }
    }
    if (!quiet) {
      fprintf(stderr, "oaax-run: %s: %.3f ms%s%s\n", where.c_str(), ms, out_dirs.empty() ? "" : " -> ",
              out_dirs.empty() ? "" : out_dirs[i].c_str());
    }
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"oaax-run: run and benchmark a model through any OAAX runtime library."};
  std::string runtime = DefaultRuntime(), model, output_dir;
  std::vector<std::string> in_dirs, out_dirs;
  std::vector<std::string> input_specs, shape_specs, args;
  uint64_t iterations = 1, warmup = 0, depth = 1, seed = 0;
  bool json = false, quiet = false, cast_inputs = false, float32_outputs = false;
  app.add_option("--runtime", runtime, "OAAX runtime shared library (default: libRuntimeLibrary.so beside oaax-run)");
  app.add_option("--model", model, "model file for the runtime (model.oinf)")->required();
  app.add_option("--input", input_specs, "NAME=FILE.npy (repeatable); inputs not given are seeded random data");
  app.add_option("--shape", shape_specs,
                 "NAME=D0,D1,... (repeatable): the shape of the random data for input NAME, for bundles compiled for "
                 "a range of shapes (default: the bundle's stored, i.e. maximum, shape)");
  app.add_option("--output-dir", output_dir, "write the last iteration's outputs here as <name>.npy");
  app.add_flag("--cast-inputs", cast_inputs,
               "accept float32/float64 .npy files for float16, bfloat16 and low-bit inputs, rounded as ONNX Cast "
               "rounds (see \"Types\" below)");
  app.add_flag("--float32-outputs", float32_outputs,
               "write float16, bfloat16 and low-bit outputs as float32 .npy (exact), for readers without ml_dtypes");
  app.add_option("--iterations", iterations, "timed inferences (default 1)")->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--warmup", warmup, "untimed inferences before the timed ones (default 0)");
  app.add_option("--depth", depth,
                 "inputs kept in flight (default 1: latency without queueing; throughput runs raise it, e.g. 4)")->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  app.add_option("--seed", seed, "seed of the random inputs (default 0)");
  app.add_option("--arg", args, "runtime argument KEY=VALUE (repeatable), e.g. --arg device=llvmpipe; the OAAX "
                               "Vulkan runtime's keys are listed below");
  app.add_flag("--json", json, "print a machine-readable JSON report on stdout");
  app.add_flag("--quiet", quiet, "no progress lines on stderr");
  auto* inputs_opt = app.add_option("--inputs", in_dirs,
                                    "manifest mode: directory with manifest.json and raw inputs (repeatable: one "
                                    "inference per input set on the one loaded model)");
  app.add_option("--outputs", out_dirs,
                 "manifest mode: directory for manifest.json and raw outputs (repeatable: one per --inputs, in order)");
  inputs_opt->excludes(app.get_option("--input"));
  inputs_opt->excludes(app.get_option("--shape"));
  app.footer(std::string(kTypes) + kRuntimeArgs);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (out_dirs.size() > std::max<size_t>(in_dirs.size(), 1) ||
      (in_dirs.size() > 1 && !out_dirs.empty() && out_dirs.size() != in_dirs.size())) {
    fprintf(stderr, "oaax-run: %zu --outputs for %zu --inputs: give one output directory per input set, in the same "
                    "order (or none)\n", out_dirs.size(), in_dirs.size());
    return 2;
  }
  const bool several_sets = in_dirs.size() > 1;
  if (several_sets && (iterations != 1 || warmup != 0 || depth != 1 || json || !output_dir.empty())) {
    fprintf(stderr, "oaax-run: several --inputs run one inference per input set and write each set's outputs to its "
                    "--outputs; --iterations, --warmup, --depth, --json and --output-dir apply to a single input set\n");
    return 2;
  }
  std::vector<std::string> keys, values;
  for (const std::string& a : args) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      fprintf(stderr, "oaax-run: --arg '%s' is not KEY=VALUE\n", a.c_str());
      return 2;
    }
    keys.push_back(a.substr(0, eq));
    values.push_back(a.substr(eq + 1));
  }

  // ---- inputs: validated before the runtime is touched ----
  std::vector<Tensor> inputs;
  std::vector<std::vector<Tensor>> sets;  // several --inputs: every set, read before the runtime is touched
  for (size_t i = 0; several_sets && i < in_dirs.size(); ++i) {
    StatusOr<std::vector<Tensor>> r = ReadManifest(in_dirs[i]);
    if (!r.ok()) return Error(r.status().message());
    sets.push_back(std::move(r).value());
  }
  if (!several_sets) {
    StatusOr<std::vector<Tensor>> r = std::vector<Tensor>();
    if (!in_dirs.empty()) {
      r = ReadManifest(in_dirs[0]);
    } else {
      ModelInputs desc;
      StatusOr<bool> have = ReadBundleInputs(model, &desc);
      if (!have.ok()) return Error("model '" + model + "': " + have.status().message());
      if (!have.value() && RuntimeName(runtime) == kVulkanRuntimeName) return Error(NotABundleMessage(model));
      r = BuildInputs(input_specs, shape_specs, have.value(), desc, seed, cast_inputs);
    }
    if (!r.ok()) return Error(r.status().message());
    inputs = std::move(r).value();
  }

  // ---- runtime ----
  Api api;
  if (Status s = LoadApi(runtime, &api); !s.ok()) return Error(s.message());
  // A host that wants a result waits generously for each frame (software
  // drivers run big models for seconds per inference) unless told otherwise;
  // OAAX runtimes ignore keys they do not know.
  if (std::find(keys.begin(), keys.end(), "receive_timeout_ms") == keys.end()) {
    keys.push_back("receive_timeout_ms");
    values.push_back("300000");
  }
  std::vector<const char*> kp, vp;
  for (size_t i = 0; i < keys.size(); ++i) {
    kp.push_back(keys[i].c_str());
    vp.push_back(values[i].c_str());
  }
  if (api.init_with_args(static_cast<int>(kp.size()), kp.data(), reinterpret_cast<const void**>(vp.data())) != 0)
    return Error(std::string("runtime_initialization_with_args failed: ") + api.error());
  const std::string rt_name = api.name(), rt_version = api.version();
  if (!quiet) fprintf(stderr, "oaax-run: %s %s\n", rt_name.c_str(), rt_version.c_str());
  int rc = 0;
  auto fail = [&](const std::string& m) {
    rc = Error(m);
    if (api.destroy() != 0) Error(std::string("runtime_destruction failed: ") + api.error());
    return rc;
  };
  const auto load_start = Clock::now();
  if (api.load(model.c_str()) != 0)
    return fail("runtime_model_loading('" + model + "') failed: the runtime rejects the model: " + api.error());
  const double load_ms = MsSince(load_start);
  if (several_sets) {
    if (!quiet) fprintf(stderr, "oaax-run: model loaded in %.1f ms\n", load_ms);
    rc = RunInputSets(api, sets, in_dirs, out_dirs, quiet);
    if (api.destroy() != 0) rc = Error(std::string("runtime_destruction failed: ") + api.error());
    dlclose(api.handle);
    return rc;
  }

  // ---- run: warmup + iterations, at most `depth` in flight ----
  const uint64_t total = warmup + iterations;
  std::vector<Clock::time_point> sent_at(total);
  std::vector<double> latency_ms, host_ms, send_ms, receive_ms;
  latency_ms.reserve(iterations);
  std::vector<Tensor> last_outputs;
  uint64_t sent = 0, received = 0;
  Clock::time_point timed_start = Clock::now(), last_progress = Clock::now();
  const auto run_start = Clock::now();
  while (received < total) {
    // Timed inferences start once every warm-up one is back.
    while (sent < total && sent - received < depth && (sent != warmup || received == warmup)) {
      if (sent == warmup) timed_start = Clock::now();
      const auto t0 = Clock::now();
      tensors_struct* t = ToStruct(inputs);
      if (!t) return fail("out of host memory building input #" + std::to_string(sent));
      const auto t1 = Clock::now();
      sent_at[sent] = t1;
      if (api.send(t) != 0) {
        oaaxvk::FreeTensors(t);  // on failure the caller still owns the inputs
        return fail("send_input failed (inference #" + std::to_string(sent) + "): " + api.error());
      }
      if (sent >= warmup) {
        host_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        send_ms.push_back(MsSince(t1));
      }
      ++sent;
    }
    tensors_struct* out = nullptr;
    const auto r0 = Clock::now();
    if (api.receive(&out) != 0)
      return fail("receive_output failed (inference #" + std::to_string(received) + "): " + api.error());
    const auto r1 = Clock::now();
    const bool timed = received >= warmup;
    if (timed) {
      latency_ms.push_back(std::chrono::duration<double, std::milli>(r1 - sent_at[received]).count());
      receive_ms.push_back(std::chrono::duration<double, std::milli>(r1 - r0).count());
    }
    if (received + 1 == total) {
      StatusOr<std::vector<Tensor>> o = FromStruct(out);
      if (!o.ok()) {
        oaaxvk::FreeTensors(out);
        return fail(o.status().message());
      }
      last_outputs = std::move(o).value();
    }
    oaaxvk::FreeTensors(out);
    if (timed) host_ms[received - warmup] += MsSince(r1);  // the host's share of handling the output
    ++received;
    if (!quiet && std::chrono::duration<double>(Clock::now() - last_progress).count() >= 1.0) {
      last_progress = Clock::now();
      fprintf(stderr, "oaax-run: %llu/%llu inferences (%.1f s)\n", static_cast<unsigned long long>(received),
              static_cast<unsigned long long>(total), std::chrono::duration<double>(Clock::now() - run_start).count());
    }
  }
  const double timed_s = std::chrono::duration<double>(Clock::now() - timed_start).count();
  if (api.destroy() != 0) return Error(std::string("runtime_destruction failed: ") + api.error());
  dlclose(api.handle);

  // ---- outputs ----
  nlohmann::json out_json = nlohmann::json::array();
  if (!out_dirs.empty()) {
    if (Status s = WriteManifest(out_dirs[0], last_outputs); !s.ok()) return Error(s.message());
  }
  std::set<std::string> used;
  for (size_t i = 0; i < last_outputs.size(); ++i) {
    const Tensor& t = last_outputs[i];
    nlohmann::json o = {{"name", t.name}, {"dtype", t.dtype->name}, {"shape", t.shape}};
    if (!output_dir.empty()) {
      std::string stem = FileStem(t.name);
      if (used.count(stem)) stem += "_" + std::to_string(i);
      used.insert(stem);
      std::error_code ec;
      std::filesystem::create_directories(output_dir, ec);
      const std::string path = JoinPath(output_dir, stem + ".npy");
      uint64_t numel = 1;
      for (uint64_t d : t.shape) numel *= d;
      // The .npy form of the tensor (npy_tensor.h): its ml_dtypes form, or
      // float32 values with --float32-outputs.
      const DType* dtype = t.dtype;
      std::vector<uint8_t> bytes;
      if (float32_outputs && oaaxvk::npy::IsConvertible(t.dtype->type)) {
        const std::vector<float> f = oaaxvk::npy::TensorToFloat32(t.dtype->type, t.data.data(), numel);
        dtype = oaaxvk::npy::FindDType(DATA_TYPE_FLOAT);
        bytes.assign(reinterpret_cast<const uint8_t*>(f.data()), reinterpret_cast<const uint8_t*>(f.data() + f.size()));
      } else {
        bytes = oaaxvk::npy::TensorToArrayData(t.dtype->type, t.data.data(), numel);
      }
      if (Status s = oaaxvk::npy::Write(path, *dtype, t.shape, bytes.data(), bytes.size()); !s.ok())
        return Error("output '" + t.name + "': " + s.message());
      o["file"] = path;
      if (dtype != t.dtype) o["file_dtype"] = dtype->name;
    }
    out_json.push_back(o);
  }

  // ---- report ----
  const Summary lat = Summarize(latency_ms), host = Summarize(host_ms), snd = Summarize(send_ms),
                rcv = Summarize(receive_ms);
  const double throughput = timed_s > 0 ? static_cast<double>(iterations) / timed_s : 0.0;
  // Items per inference: the first dimension of the first input (a batch),
  // 1 for a scalar first input or none.
  const uint64_t batch = !inputs.empty() && !inputs[0].shape.empty() ? inputs[0].shape[0] : 1;
  const double items_per_s = throughput * static_cast<double>(batch);
  if (json) {
    nlohmann::json in_json = nlohmann::json::array();
    for (const Tensor& t : inputs)
      in_json.push_back({{"name", t.name}, {"dtype", t.dtype->name}, {"shape", t.shape}, {"source", t.source}});
    nlohmann::json report = {
        {"runtime", {{"library", runtime}, {"name", rt_name}, {"version", rt_version}}},
        {"model", model},
        {"iterations", iterations},
        {"warmup", warmup},
        {"depth", depth},
        {"load_ms", load_ms},
        {"latency_ms", ToJson(lat)},
        {"throughput_per_s", throughput},
        {"batch", batch},
        {"items_per_s", items_per_s},
        {"timed_wall_s", timed_s},
        {"host_overhead_ms", ToJson(host)},
        {"send_input_ms", ToJson(snd)},
        {"receive_output_ms", ToJson(rcv)},
        {"inputs", in_json},
        {"outputs", out_json},
    };
    printf("%s\n", report.dump(2).c_str());
  } else {
    printf("runtime      %s %s (%s)\n", rt_name.c_str(), rt_version.c_str(), runtime.c_str());
    printf("model        %s, loaded in %.1f ms\n", model.c_str(), load_ms);
    for (const Tensor& t : inputs)
      printf("input        %s %s %s <- %s\n", t.name.c_str(), t.dtype->name, DimsString(t.shape).c_str(), t.source.c_str());
    for (const auto& o : out_json)
      printf("output       %s %s %s%s\n", o["name"].get<std::string>().c_str(), o["dtype"].get<std::string>().c_str(),
             DimsString(o["shape"].get<std::vector<uint64_t>>()).c_str(), o.contains("file") ? (" -> " + o["file"].get<std::string>() +
                                    (o.contains("file_dtype") ? " (" + o["file_dtype"].get<std::string>() + ")" : ""))
                                       .c_str()
                                 : "");
    printf("inferences   %llu timed (+%llu warm-up), depth %llu, %.3f s\n", static_cast<unsigned long long>(iterations),
           static_cast<unsigned long long>(warmup), static_cast<unsigned long long>(depth), timed_s);
    printf("latency ms   p50 %.3f  p90 %.3f  p99 %.3f  (min %.3f, mean %.3f, max %.3f)\n", lat.p50, lat.p90, lat.p99,
           lat.min, lat.mean, lat.max);
    if (batch != 1)
      printf("throughput   %.2f inferences/s, %.2f items/s (batch %llu: the first dimension of input '%s')\n",
             throughput, items_per_s, static_cast<unsigned long long>(batch), inputs[0].name.c_str());
    else
      printf("throughput   %.2f inferences/s\n", throughput);
    printf("host ms      %.4f mean per inference (building inputs + handling outputs); send_input %.4f, "
           "receive_output %.4f (waits included)\n",
           host.mean, snd.mean, rcv.mean);
  }
  return rc;
}

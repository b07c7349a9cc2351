// oaaxvk_conformance: the ONNX backend node tests through the project's
// toolchain and runtime, as a host would run them (docs/conformance.md).
//
// For every case directory (model.onnx + test_data_set_*/{input,output}_*.pb)
// a child process (this executable with --run-case) converts the model with
// the oaax-vulkan-toolchain CLI, dlopens libRuntimeLibrary.so, initializes
// the runtime, loads model.oinf, sends the inputs of every test_data_set_*
// through the public C API and compares the outputs with the expected ones
// (float/double: |got - exp| <= atol + rtol * |exp|, NaN equals NaN, infinities
// exact; integers and bools exact; dtype and shape exact). The parent runs the
// children N at a time, each in its own process group under a wall-clock
// limit, so a crash or a hang is one case's outcome, not the run's.
//
// Outcomes: pass | rejected: <toolchain's reason> | wrong: <first difference>
// | skip: <why> (listed so in the expectations file: test data that
// contradicts its own model; not run)
//           | runtime-error: <runtime_error_message()> | crash: <signal/exit>
//           | timeout: <phase>
//
// The expectations file lists every case as "<case> pass" or
// "<case> rejected: <reason>" (or "runtime-error: <msg>"). The run fails on a
// regression (an expected pass that does not pass) and on any wrong, crash or
// timeout. --update rewrites the expectations of the cases that ran;
// --table FILE replaces the per-operator table in FILE (between the markers
// "<!-- conformance-table:begin -->" and "<!-- conformance-table:end -->").
//
// Exit: 0 no failure, 1 failures, 2 usage or setup error, 77 no Vulkan device
// (runtime initialization fails in the probe).
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/lowbit_types.h"
#include "oaax_vulkan/tensors_util.h"
#include "onnx/onnx-data.pb.h"  // TensorProto sequences (upstream installs no _pb.h wrapper for it)
#include "onnx/onnx_pb.h"

extern char** environ;

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------- utilities

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string OneLine(std::string s, size_t max_len = 400) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > max_len) s = s.substr(0, max_len) + "...";
  return s;
}

std::string LastLines(const fs::path& p, size_t n) {
  std::ifstream f(p);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

std::string SignalName(int sig) {
  const char* d = strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (d ? d : "?") + ")";
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool ParseModel(const fs::path& path, onnx::ModelProto* model) {
  std::ifstream f(path, std::ios::binary);
  return f && model->ParseFromIstream(&f);
}

// ------------------------------------------------------- tensors and dtypes

const char* OnnxTypeName(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return "FLOAT";
    case onnx::TensorProto::UINT8: return "UINT8";
    case onnx::TensorProto::INT8: return "INT8";
    case onnx::TensorProto::UINT16: return "UINT16";
    case onnx::TensorProto::INT16: return "INT16";
    case onnx::TensorProto::INT32: return "INT32";
    case onnx::TensorProto::INT64: return "INT64";
    case onnx::TensorProto::STRING: return "STRING";
    case onnx::TensorProto::BOOL: return "BOOL";
    case onnx::TensorProto::FLOAT16: return "FLOAT16";
    case onnx::TensorProto::DOUBLE: return "DOUBLE";
    case onnx::TensorProto::UINT32: return "UINT32";
    case onnx::TensorProto::UINT64: return "UINT64";
    case onnx::TensorProto::COMPLEX64: return "COMPLEX64";
    case onnx::TensorProto::COMPLEX128: return "COMPLEX128";
    case onnx::TensorProto::BFLOAT16: return "BFLOAT16";
    default: {
      const char* low = oaaxvk::lowbit::LowBitTypeName(static_cast<uint32_t>(t));
      return low ? low : "UNDEFINED";
    }
  }
}

// Element size of the ONNX types the OAAX tensors_struct can carry (their
// tensor_data_type values equal the ONNX ones); 0 for the others.
size_t OaaxElementSize(int t) { return t < 0 ? 0 : oaaxvk::TensorElementSize(static_cast<uint32_t>(t)); }

// A dense tensor read from a TensorProto .pb file.
struct HostTensor {
  std::string name;
  int dtype = 0;  // ONNX TensorProto::DataType (== OAAX tensor_data_type where carried)
  std::vector<size_t> shape;
  std::vector<uint8_t> bytes;  // little-endian, row-major
  size_t numel() const {
    size_t n = 1;
    for (size_t d : shape) n *= d;
    return n;
  }
};

template <typename T, typename Field>
void PackField(const Field& field, std::vector<uint8_t>* out) {
  out->resize(static_cast<size_t>(field.size()) * sizeof(T));
  for (int i = 0; i < field.size(); ++i) {
    const T v = static_cast<T>(field.Get(i));
    std::memcpy(out->data() + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
  }
}

// Converts a parsed TensorProto (`where` names it in errors); "" on
// success, else the reason.
std::string FromTensorProto(const onnx::TensorProto& p, const std::string& where, HostTensor* t) {
  t->name = p.name();
  t->dtype = p.data_type();
  for (int64_t d : p.dims()) {
    if (d < 0) return where + ": negative dimension";
    t->shape.push_back(static_cast<size_t>(d));
  }
  const size_t es = OaaxElementSize(t->dtype);
  if (es == 0) return "";  // not carried by the OAAX API; the caller decides
  if (p.has_raw_data()) {
    t->bytes.assign(p.raw_data().begin(), p.raw_data().end());
  } else {
    switch (t->dtype) {
      case onnx::TensorProto::FLOAT: PackField<float>(p.float_data(), &t->bytes); break;
      case onnx::TensorProto::DOUBLE: PackField<double>(p.double_data(), &t->bytes); break;
      case onnx::TensorProto::INT64: PackField<int64_t>(p.int64_data(), &t->bytes); break;
      case onnx::TensorProto::INT32: PackField<int32_t>(p.int32_data(), &t->bytes); break;
      case onnx::TensorProto::INT16: PackField<int16_t>(p.int32_data(), &t->bytes); break;
      case onnx::TensorProto::UINT16: PackField<uint16_t>(p.int32_data(), &t->bytes); break;
      case onnx::TensorProto::INT8: PackField<int8_t>(p.int32_data(), &t->bytes); break;
      case onnx::TensorProto::UINT8: PackField<uint8_t>(p.int32_data(), &t->bytes); break;
      case onnx::TensorProto::BOOL: PackField<uint8_t>(p.int32_data(), &t->bytes); break;
      case onnx::TensorProto::UINT32: PackField<uint32_t>(p.uint64_data(), &t->bytes); break;
      case onnx::TensorProto::UINT64: PackField<uint64_t>(p.uint64_data(), &t->bytes); break;
      case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16:  // bit patterns in int32_data
        PackField<uint16_t>(p.int32_data(), &t->bytes);
        break;
      default:  // low-bit types: one byte (a code, or two packed 4-bit codes) per int32_data value
        if (oaaxvk::lowbit::IsLowBit(static_cast<uint32_t>(t->dtype))) PackField<uint8_t>(p.int32_data(), &t->bytes);
        break;
    }
  }
  const uint64_t want = oaaxvk::TensorByteSize(static_cast<uint32_t>(t->dtype), t->numel());
  if (t->bytes.size() != want) {
    return where + ": holds " + std::to_string(t->bytes.size()) + " bytes, shape needs " + std::to_string(want);
  }
  return "";
}

// Reads a TensorProto file; "" on success, else the reason.
std::string ReadTensor(const fs::path& path, HostTensor* t) {
  onnx::TensorProto p;
  std::ifstream f(path, std::ios::binary);
  if (!f || !p.ParseFromIstream(&f)) return path.string() + ": not a TensorProto";
  return FromTensorProto(p, path.string(), t);
}

// Reads a SequenceProto or OptionalProto file of graph input / output
// `name` (docs/conformance.md "Sequences and optionals"): the tensors the
// OAAX API carries for it, named as the toolchain flattens them ("name[i]"
// for a sequence's elements, "name" for an optional tensor, none for an
// empty optional), and the config.json "input_shapes" entry that says so
// (a list of shapes, a shape, or null). "" on success, else the reason.
std::string ReadCompound(const fs::path& path, const onnx::TypeProto& type, const std::string& name,
                         std::vector<HostTensor>* out, nlohmann::json* entry) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto sequence = [&](const onnx::SequenceProto& sp) -> std::string {
    if (sp.elem_type() != onnx::SequenceProto::TENSOR && sp.tensor_values_size() == 0 && sp.elem_type() != 0)
      return path.string() + ": a sequence of non-tensors";
    *entry = nlohmann::json::array();
    for (int i = 0; i < sp.tensor_values_size(); ++i) {
      HostTensor t;
      const std::string e = FromTensorProto(sp.tensor_values(i), path.string(), &t);
      if (!e.empty()) return e;
      t.name = name + "[" + std::to_string(i) + "]";
      entry->push_back(t.shape);
      out->push_back(std::move(t));
    }
    return "";
  };
  if (type.has_sequence_type()) {
    onnx::SequenceProto sp;
    if (!sp.ParseFromString(bytes)) return path.string() + ": not a SequenceProto";
    return sequence(sp);
  }
  if (!type.has_optional_type()) return path.string() + ": a map (not carried)";
  onnx::OptionalProto op;
  if (!op.ParseFromString(bytes)) return path.string() + ": not an OptionalProto";
  if (op.has_sequence_value()) return sequence(op.sequence_value());
  if (op.has_tensor_value()) {
    HostTensor t;
    const std::string e = FromTensorProto(op.tensor_value(), path.string(), &t);
    if (!e.empty()) return e;
    t.name = name;
    *entry = t.shape;
    out->push_back(std::move(t));
    return "";
  }
  *entry = nullptr;  // empty
  return "";
}

std::vector<fs::path> NumberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (size_t i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

std::string ShapeText(const std::vector<size_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// ------------------------------------------------------------- comparison

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-4;

template <typename T>
T Load(const void* base, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + i * sizeof(T), sizeof(T));
  return v;
}

// IEEE binary16 / bfloat16 bits -> double (exact).
double HalfBitsToDouble(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}
double BfloatBitsToDouble(uint16_t h) {
  const uint32_t b = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Element i of low-bit data: its byte, or its nibble of packed 4-bit data.
uint32_t LowBitCode(int dtype, const void* p, size_t i) {
  const auto* b = static_cast<const uint8_t*>(p);
  return oaaxvk::lowbit::IsPacked4(static_cast<uint32_t>(dtype)) ? oaaxvk::lowbit::UnpackNibble(b, i) : b[i];
}

double ElementAsDouble(int dtype, const void* p, size_t i) {
  switch (dtype) {
    case onnx::TensorProto::FLOAT16: return HalfBitsToDouble(Load<uint16_t>(p, i));
    case onnx::TensorProto::BFLOAT16: return BfloatBitsToDouble(Load<uint16_t>(p, i));
    case onnx::TensorProto::FLOAT: return Load<float>(p, i);
    case onnx::TensorProto::DOUBLE: return Load<double>(p, i);
    case onnx::TensorProto::INT64: return static_cast<double>(Load<int64_t>(p, i));
    case onnx::TensorProto::INT32: return Load<int32_t>(p, i);
    case onnx::TensorProto::INT16: return Load<int16_t>(p, i);
    case onnx::TensorProto::UINT16: return Load<uint16_t>(p, i);
    case onnx::TensorProto::INT8: return Load<int8_t>(p, i);
    case onnx::TensorProto::UINT8: return Load<uint8_t>(p, i);
    case onnx::TensorProto::BOOL: return Load<uint8_t>(p, i) != 0 ? 1.0 : 0.0;
    case onnx::TensorProto::UINT32: return Load<uint32_t>(p, i);
    case onnx::TensorProto::UINT64: return static_cast<double>(Load<uint64_t>(p, i));
    default:
      if (oaaxvk::lowbit::IsLowBit(static_cast<uint32_t>(dtype)))
        return oaaxvk::lowbit::ToDouble(static_cast<uint32_t>(dtype), LowBitCode(dtype, p, i));
      return 0;
  }
}

// "" when `got` (dtype, shape, data from the runtime) matches `exp`.
std::string Compare(const HostTensor& exp, int got_dtype, const std::vector<size_t>& got_shape, const void* got) {
  if (got_dtype != exp.dtype) {
    return std::string("dtype ") + OnnxTypeName(got_dtype) + ", expected " + OnnxTypeName(exp.dtype);
  }
  if (got_shape != exp.shape) return "shape " + ShapeText(got_shape) + ", expected " + ShapeText(exp.shape);
  const bool is_float = exp.dtype == onnx::TensorProto::FLOAT || exp.dtype == onnx::TensorProto::DOUBLE ||
                        exp.dtype == onnx::TensorProto::FLOAT16 || exp.dtype == onnx::TensorProto::BFLOAT16;
  // bfloat16 has 8 significant bits: one unit in the last place (2^-7
  // relative) is its resolution, e.g. round-to-nearest-even vs truncation.
  const double rtol = exp.dtype == onnx::TensorProto::BFLOAT16 ? 0.0078125 : kRtol;
  size_t bad = 0, first = 0;
  double max_err = 0;
  const size_t n = exp.numel();
  for (size_t i = 0; i < n; ++i) {
    bool ok;
    if (is_float) {
      const double e = ElementAsDouble(exp.dtype, exp.bytes.data(), i);
      const double g = ElementAsDouble(got_dtype, got, i);
      if (std::isnan(e) || std::isnan(g)) {
        ok = std::isnan(e) && std::isnan(g);
      } else if (std::isinf(e) || std::isinf(g)) {
        ok = e == g;
      } else {
        const double err = std::fabs(g - e);
        ok = err <= kAtol + rtol * std::fabs(e);
        max_err = std::max(max_err, err);
      }
    } else if (oaaxvk::lowbit::IsLowBit(static_cast<uint32_t>(exp.dtype))) {
      // Exact: the same code, or NaN for both (E4M3FN and E5M2 have several).
      const uint32_t ce = LowBitCode(exp.dtype, exp.bytes.data(), i), cg = LowBitCode(got_dtype, got, i);
      ok = ce == cg || (std::isnan(ElementAsDouble(exp.dtype, exp.bytes.data(), i)) &&
                        std::isnan(ElementAsDouble(got_dtype, got, i)));
    } else if (exp.dtype == onnx::TensorProto::BOOL) {
      ok = (Load<uint8_t>(exp.bytes.data(), i) != 0) == (Load<uint8_t>(got, i) != 0);
    } else {
      const size_t es = OaaxElementSize(exp.dtype);
      ok = std::memcmp(exp.bytes.data() + i * es, static_cast<const uint8_t*>(got) + i * es, es) == 0;
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%zu of %zu elements differ; first at [%zu]: got %.9g, expected %.9g", bad, n,
                first, ElementAsDouble(got_dtype, got, first), ElementAsDouble(exp.dtype, exp.bytes.data(), first));
  std::string out = buf;
  if (is_float && max_err > 0) {
    std::snprintf(buf, sizeof buf, "; max |diff| %.3g", max_err);
    out += buf;
  }
  return out;
}

// ------------------------------------------------------ processes

// Spawns argv with stdout (and stderr) redirected, in a new process group
// when `new_group` (so a timeout can kill it with everything it started).
// Returns the pid or -1.
pid_t Spawn(const std::vector<std::string>& argv, int stdout_fd, const std::string& stderr_path,
            const std::vector<std::string>& extra_env = {}, bool new_group = true) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  for (const std::string& kv : extra_env) {
    const std::string key = kv.substr(0, kv.find('=') + 1);
    env_store.erase(std::remove_if(env_store.begin(), env_store.end(),
                                   [&](const std::string& s) { return s.rfind(key, 0) == 0; }),
                    env_store.end());
    env_store.push_back(kv);
  }
  std::vector<char*> env;
  for (std::string& s : env_store) env.push_back(s.data());
  env.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, stdout_fd, 1);
  } else {
    posix_spawn_file_actions_addopen(&fa, 1, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_addopen(&fa, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  } else {
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (new_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

// ---------------------------------------------------------- child: one case

struct Api {
  void* handle = nullptr;
  int (*init_with_args)(int, const char**, const void**) = nullptr;
  int (*load)(const char*) = nullptr;
  int (*send)(tensors_struct*) = nullptr;
  int (*receive)(tensors_struct**) = nullptr;
  int (*destroy)() = nullptr;
  const char* (*error)() = nullptr;
};

std::string LoadApi(const std::string& path, Api* api) {
  api->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api->handle == nullptr) return std::string("dlopen: ") + dlerror();
  struct {
    const char* name;
    void** slot;
  } syms[] = {
      {"runtime_initialization_with_args", reinterpret_cast<void**>(&api->init_with_args)},
      {"runtime_model_loading", reinterpret_cast<void**>(&api->load)},
      {"send_input", reinterpret_cast<void**>(&api->send)},
      {"receive_output", reinterpret_cast<void**>(&api->receive)},
      {"runtime_destruction", reinterpret_cast<void**>(&api->destroy)},
      {"runtime_error_message", reinterpret_cast<void**>(&api->error)},
  };
  for (auto& s : syms) {
    *s.slot = dlsym(api->handle, s.name);
    if (*s.slot == nullptr) return std::string("runtime lacks symbol ") + s.name;
  }
  return "";
}

// Every field a separate malloc, as OAAX hosts build it; nullptr when host
// memory ran out.
tensors_struct* MakeTensors(const std::vector<HostTensor>& ts) {
  tensors_struct* t = oaaxvk::AllocTensors(ts.size());
  for (size_t i = 0; t && i < ts.size(); ++i) {
    if (!oaaxvk::SetTensor(t, i, ts[i].name.c_str(), static_cast<tensor_data_type>(ts[i].dtype), ts[i].shape.data(),
                           ts[i].shape.size(), ts[i].bytes.data(), ts[i].bytes.size())) {
      oaaxvk::FreeTensors(t);
      return nullptr;
    }
  }
  return t;
}

struct CaseOptions {
  std::string toolchain, runtime;
  std::vector<std::string> runtime_args;  // key=value
  int toolchain_timeout_s = 60;
};

// The child's result goes to stdout as "result<TAB>status<TAB>detail"; phase
// markers ("phase<TAB>...") before it tell the parent where a timeout hit.
int Emit(const std::string& status, const std::string& detail) {
  std::printf("result\t%s\t%s\n", status.c_str(), OneLine(detail).c_str());
  std::fflush(stdout);
  return 0;
}
void Phase(const char* p) {
  std::printf("phase\t%s\n", p);
  std::fflush(stdout);
}

// The toolchain runs with the sanitizer options the run was started with
// (leak checking included); only the runtime side turns leak checking off.
constexpr const char* kToolchainAsanVar = "OAAXVK_CONFORMANCE_TOOLCHAIN_ASAN_OPTIONS";
std::vector<std::string> ToolchainEnv() {
  const char* v = std::getenv(kToolchainAsanVar);
  if (v == nullptr) return {};
  return {std::string("ASAN_OPTIONS=") + v};
}

int RunConversion(const fs::path& case_dir, const fs::path& work, const CaseOptions& o, std::string* reason,
                  bool* crashed, const fs::path& config = {}) {
  *crashed = false;
  fs::remove_all(work / "bundle");
  std::vector<std::string> argv = {o.toolchain};
  if (!config.empty()) argv.insert(argv.end(), {"--config", config.string()});
  argv.insert(argv.end(), {(case_dir / "model.onnx").string(), (work / "bundle").string()});
  const pid_t pid = Spawn(argv, -1, (work / "toolchain.log").string(), ToolchainEnv(), /*new_group=*/false);
  if (pid < 0) {
    *reason = "cannot start " + o.toolchain;
    *crashed = true;
    return 1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    *crashed = true;
    *reason = "toolchain killed by " + SignalName(WTERMSIG(status)) + ": " +
              OneLine(LastLines(work / "toolchain.log", 3));
    return 1;
  }
  const int rc = WEXITSTATUS(status);
  if (rc == 0) return 0;
  if (rc != 1) {
    *crashed = true;
    *reason = "toolchain exit code " + std::to_string(rc) + ": " + OneLine(LastLines(work / "toolchain.log", 3));
    return 1;
  }
  // Conversion refused: the reason is the log's "Technical Error".
  *reason = "(no reason in conversion-log.json)";
  try {
    const auto log = nlohmann::json::parse(ReadFile(work / "bundle" / "conversion-log.json"));
    for (const auto& entry : log) {
      if (entry.contains("Data") && entry["Data"].contains("Technical Error")) {
        *reason = entry["Data"]["Technical Error"].get<std::string>();
      }
    }
  } catch (const std::exception& e) {
    *reason = std::string("(unreadable conversion-log.json: ") + e.what() + ")";
  }
  return 1;
}

// Conversion-time input binding (docs/conformance.md): a tensor's values as
// the flat JSON list config.json "input_values" takes; false when a value
// has no JSON form (NaN, Inf) or the dtype is not numeric.
bool JsonValues(const HostTensor& t, nlohmann::json* out) {
  *out = nlohmann::json::array();
  const size_t n = t.numel();
  const size_t es = n ? t.bytes.size() / n : 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = t.bytes.data() + i * es;
    double d = 0;
    switch (t.dtype) {
      case 1: { float f; std::memcpy(&f, p, 4); d = f; break; }
      case 11: std::memcpy(&d, p, 8); break;
      case 10: { uint16_t h; std::memcpy(&h, p, 2); d = HalfBitsToDouble(h); break; }
      case 16: { uint16_t h; std::memcpy(&h, p, 2); d = BfloatBitsToDouble(h); break; }
      case 2: case 9: out->push_back(static_cast<int64_t>(*p)); continue;
      case 3: out->push_back(static_cast<int64_t>(static_cast<int8_t>(*p))); continue;
      case 4: { uint16_t v; std::memcpy(&v, p, 2); out->push_back(static_cast<int64_t>(v)); continue; }
      case 5: { int16_t v; std::memcpy(&v, p, 2); out->push_back(static_cast<int64_t>(v)); continue; }
      case 6: { int32_t v; std::memcpy(&v, p, 4); out->push_back(static_cast<int64_t>(v)); continue; }
      case 12: { uint32_t v; std::memcpy(&v, p, 4); out->push_back(static_cast<int64_t>(v)); continue; }
      case 7: { int64_t v; std::memcpy(&v, p, 8); out->push_back(v); continue; }
      case 13: { uint64_t v; std::memcpy(&v, p, 8); if (v > INT64_MAX) return false; out->push_back(static_cast<int64_t>(v)); continue; }
      default: return false;
    }
    if (!std::isfinite(d)) return false;
    out->push_back(d);
  }
  return true;
}

int RunCase(const fs::path& case_dir, const fs::path& work, const CaseOptions& o) {
  fs::create_directories(work);
  onnx::ModelProto model;
  if (!ParseModel(case_dir / "model.onnx", &model)) return Emit("crash", "runner cannot parse model.onnx");

  // Expected data first: a malformed case is a runner problem, not the backend's.
  struct DataSet {
    std::vector<HostTensor> inputs, outputs;
  };
  std::vector<DataSet> sets;
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> graph_inputs;
  for (const auto& vi : model.graph().input()) {
    if (!initializers.count(vi.name())) graph_inputs.push_back(&vi);
  }
  std::string non_tensor;
  // Sequence / optional inputs: their config.json "input_shapes" entries.
  nlohmann::json compound_shapes = nlohmann::json::object();
  bool compound_outputs = false;
  for (size_t s = 0;; ++s) {
    const fs::path dir = case_dir / ("test_data_set_" + std::to_string(s));
    if (!fs::is_directory(dir)) break;
    DataSet ds;
    for (const char* kind : {"input_", "output_"}) {
      const bool is_input = kind[0] == 'i';
      const auto files = NumberedFiles(dir, kind);
      for (size_t i = 0; i < files.size(); ++i) {
        const auto& infos = is_input ? graph_inputs : std::vector<const onnx::ValueInfoProto*>{};
        const onnx::ValueInfoProto* vi = nullptr;
        if (is_input && i < infos.size()) vi = infos[i];
        if (!is_input && static_cast<int>(i) < model.graph().output_size()) vi = &model.graph().output(static_cast<int>(i));
        if (vi && !vi->type().has_tensor_type()) {
          // A sequence or optional: its tensors, flattened as the toolchain
          // does; an input's structure goes into config.json.
          nlohmann::json entry;
          const std::string err =
              ReadCompound(files[i], vi->type(), vi->name(), is_input ? &ds.inputs : &ds.outputs, &entry);
          if (!err.empty()) return Emit("crash", "runner: " + err);
          compound_outputs |= !is_input;
          if (!is_input) continue;
          if (s == 0) compound_shapes[vi->name()] = entry;
          else if (compound_shapes[vi->name()] != entry) non_tensor = "data sets differ in the structure of '" + vi->name() + "'";
          continue;
        }
        HostTensor t;
        const std::string err = ReadTensor(files[i], &t);
        if (!err.empty()) return Emit("crash", "runner: " + err);
        if (vi) t.name = vi->name();
        // Some generators store bfloat16 data as UINT16 tensors (the same bit
        // patterns); the model's declared type is what the API carries.
        if (vi && t.dtype == onnx::TensorProto::UINT16 &&
            vi->type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16) {
          t.dtype = onnx::TensorProto::BFLOAT16;
        }
        if (OaaxElementSize(t.dtype) == 0) {
          // Reached only when the toolchain accepts the model; decided below.
          t.bytes.clear();
        }
        (is_input ? ds.inputs : ds.outputs).push_back(std::move(t));
      }
    }
    sets.push_back(std::move(ds));
  }

  Phase("convert");
  std::string reason;
  bool crashed = false;
  if (!non_tensor.empty()) return Emit("rejected", "runner: " + non_tensor);
  // With sequence or optional inputs, config.json gives their structure, and
  // the shapes of the other inputs with symbolic dimensions (from
  // test_data_set_0), which the toolchain cannot take from the model.
  nlohmann::json initial_shapes = compound_shapes;
  if (!compound_shapes.empty() && !sets.empty()) {
    for (const onnx::ValueInfoProto* vi : graph_inputs) {
      if (!vi->type().has_tensor_type() || !vi->type().tensor_type().has_shape()) continue;
      bool symbolic = false;
      for (const auto& d : vi->type().tensor_type().shape().dim()) symbolic |= !d.has_dim_value();
      for (const HostTensor& t : sets[0].inputs)
        if (symbolic && t.name == vi->name()) initial_shapes[vi->name()] = t.shape;
    }
  }
  const fs::path first_config = work / "sequence-config.json";
  if (!initial_shapes.empty()) {
    std::ofstream f(first_config);
    f << nlohmann::json{{"input_shapes", initial_shapes}}.dump() << "\n";
  }
  int conv = RunConversion(case_dir, work, o, &reason, &crashed, initial_shapes.empty() ? fs::path() : first_config);
  // A graph input the toolchain needs at conversion (docs/conformance.md): an
  // integer or float32 input of at most 8 elements is first given as run-time values,
  // each element named in config.json "input_values" with a range around the
  // data set's value (the bundle reads the values at send_input); when no
  // range converts, or for other inputs, it is bound from the data sets
  // (when all of them agree on it). Then the conversion is retried.
  nlohmann::json bind = nlohmann::json::object(), shapes = initial_shapes, dimensions = nlohmann::json::object();
  std::string bound_names, ranged_names;
  static const std::regex kNeedsConstant("input '([^']+)' is not a compile-time constant");
  // The graph input a needed constant is computed from, when the toolchain
  // names it ("... it is computed from graph input 'x': ..."), or the first
  // of several ("... from graph inputs 'cond', 'trip_count': ..."; the next
  // retry names the others that are still needed).
  static const std::regex kComputedFrom("is not a compile-time constant[^;]*; it is computed from graph inputs? '([^']+)'");
  auto needed_input = [&](const std::string& r, std::string* name) {
    std::smatch m;
    if (std::regex_search(r, m, kComputedFrom)) { *name = m[1].str(); return true; }
    if (std::regex_search(r, m, kNeedsConstant)) { *name = m[1].str(); return true; }
    return false;
  };
  auto convert_with = [&](const nlohmann::json& values, const nlohmann::json& dims) {
    const fs::path config = work / "bind-config.json";
    {
      std::ofstream f(config);
      nlohmann::json c = {{"input_values", values}, {"input_shapes", shapes}};
      if (!dims.empty()) c["dimensions"] = dims;
      f << c.dump() << "\n";
    }
    return RunConversion(case_dir, work, o, &reason, &crashed, config);
  };
  const int first_conv = conv;
  const std::string first_reason = reason;
  for (int allow_ranges = 1; allow_ranges >= 0; --allow_ranges) {
    if (!allow_ranges) {  // ranges converted nothing: bind every input instead
      if (conv == 0 || ranged_names.empty()) break;
      bind = nlohmann::json::object();
      dimensions = nlohmann::json::object();
      shapes = initial_shapes;
      ranged_names.clear();
      bound_names.clear();
      conv = first_conv;
      reason = first_reason;
    }
    for (int round = 0; conv != 0 && !crashed && round < 8; ++round) {
      std::string name;
      if (!needed_input(reason, &name)) break;
      if (bind.contains(name) || sets.empty()) break;
      const HostTensor* first = nullptr;
      bool same = true;
      for (const DataSet& ds : sets) {
        const HostTensor* t = nullptr;
        for (const HostTensor& h : ds.inputs)
          if (h.name == name) t = &h;
        if (!t) { same = false; break; }
        if (!first) first = t;
        else if (t->bytes != first->bytes || t->shape != first->shape) same = false;
      }
      nlohmann::json values;
      if (!same || !first || !JsonValues(*first, &values)) break;
      // The data set's shape, too (a symbolic dimension would otherwise default
      // to 1); zero-size dimensions cannot be bound (no zero-size tensors).
      if (!first->shape.empty() &&
          std::none_of(first->shape.begin(), first->shape.end(), [](size_t d) { return d == 0; }))
        shapes[name] = first->shape;
      const bool integer = first->dtype == onnx::TensorProto::INT64 || first->dtype == onnx::TensorProto::INT32 ||
                           first->dtype == onnx::TensorProto::BOOL;
      const bool real = first->dtype == onnx::TensorProto::FLOAT;
      bool ranged = false;
      if (allow_ranges && (integer || real) && !values.empty() && values.size() <= 8) {
        // Integer ranges: value v >= 1 in [1, 2v] (v an interior value), then
        // [1, v]; 0 in [0, 2], then [0, 0]; v < 0 in [2v, v], then [v, v]
        // (the maximum, where the conversion plans, stays a valid value).
        // Float ranges (Resize scales, a OneHot depth): v > 0 in [v/2, 2v]
        // except 1 in [1, 1] (a dimension that is not resized), then [v, v].
        for (int attempt = 0; attempt < 2 && !ranged; ++attempt) {
          nlohmann::json names = nlohmann::json::array(), dims = dimensions, vals = bind;
          for (size_t j = 0; j < values.size(); ++j) {
            const std::string sym = name + "_" + std::to_string(j);
            names.push_back(sym);
            if (real) {
              const double v = values[j].get<double>();
              const bool wide = attempt == 0 && v > 0 && v != 1.0;
              dims[sym] = {{"min", wide ? v / 2 : v}, {"max", wide ? 2 * v : v}};
              continue;
            }
            const int64_t v = values[j].get<int64_t>();
            if (first->dtype == onnx::TensorProto::BOOL) {  // the value itself: [1, 1] or [0, 0]
              dims[sym] = {{"min", v}, {"max", v}};
              continue;
            }
            int64_t lo = v >= 1 ? 1 : v == 0 ? 0 : (attempt == 0 ? 2 * v : v);
            int64_t hi = v >= 1 ? (attempt == 0 ? 2 * v : v) : v == 0 ? (attempt == 0 ? 2 : 0) : v;
            dims[sym] = {{"min", lo}, {"max", hi}};
          }
          vals[name] = names;
          const int c = convert_with(vals, dims);
          std::string next;
          // Converted, or on to another input the conversion needs.
          if (!crashed && (c == 0 || (needed_input(reason, &next) && next != name))) {
            conv = c;
            bind = vals;
            dimensions = dims;
            ranged = true;
          }
        }
      }
      if (ranged) {
        ranged_names += (ranged_names.empty() ? "" : ", ") + name;
        continue;
      }
      bind[name] = std::move(values);
      bound_names += (bound_names.empty() ? "" : ", ") + name;
      conv = convert_with(bind, dimensions);
    }
  }
  if (conv != 0) return Emit(crashed ? "crash" : "rejected", reason);
  const fs::path bundle = work / "bundle" / "model.oinf";
  if (!fs::exists(bundle)) return Emit("runtime-error", "toolchain exited 0 but wrote no model.oinf");
  for (const DataSet& ds : sets) {
    for (const auto* list : {&ds.inputs, &ds.outputs}) {
      for (const HostTensor& t : *list) {
        if (OaaxElementSize(t.dtype) == 0) {
          return Emit("runtime-error", std::string("tensor '") + t.name + "' has ONNX type " + OnnxTypeName(t.dtype) +
                                           ", which no OAAX tensor_data_type carries; the toolchain should reject it");
        }
      }
    }
  }

  Phase("init");
  Api api;
  std::string err = LoadApi(o.runtime, &api);
  if (!err.empty()) return Emit("runtime-error", err);
  std::vector<std::string> keys, values;
  for (const std::string& kv : o.runtime_args) {
    const size_t eq = kv.find('=');
    keys.push_back(kv.substr(0, eq));
    values.push_back(eq == std::string::npos ? "" : kv.substr(eq + 1));
  }
  std::vector<const char*> kp;
  std::vector<const void*> vp;
  for (size_t i = 0; i < keys.size(); ++i) {
    kp.push_back(keys[i].c_str());
    vp.push_back(values[i].c_str());
  }
  if (api.init_with_args(static_cast<int>(kp.size()), kp.data(), vp.data()) != 0) {
    return Emit("runtime-error", std::string("runtime_initialization_with_args: ") + api.error());
  }
  auto fail = [&](const std::string& status, const std::string& what) {
    const std::string msg = what;
    api.destroy();
    return Emit(status, msg);
  };
  Phase("load");
  if (api.load(bundle.c_str()) != 0) return fail("runtime-error", std::string("runtime_model_loading: ") + api.error());

  Phase("run");
  // Queue every data set, then receive them in order (the API is FIFO).
  for (size_t s = 0; s < sets.size(); ++s) {
    tensors_struct* in = MakeTensors(sets[s].inputs);
    if (api.send(in) != 0) {
      const std::string msg = std::string("send_input (test_data_set_") + std::to_string(s) + "): " + api.error();
      oaaxvk::FreeTensors(in);
      return fail("runtime-error", msg);
    }
  }
  for (size_t s = 0; s < sets.size(); ++s) {
    tensors_struct* out = nullptr;
    if (api.receive(&out) != 0 || out == nullptr) {
      return fail("runtime-error",
                  std::string("receive_output (test_data_set_") + std::to_string(s) + "): " + api.error());
    }
    std::string diff;
    // A sequence output's length (an empty optional: no tensor) is checked
    // by the number of tensors.
    if (compound_outputs && out->num_tensors != sets[s].outputs.size())
      diff = "test_data_set_" + std::to_string(s) + ": receive_output gave " + std::to_string(out->num_tensors) +
             " tensors, the expected outputs flatten to " + std::to_string(sets[s].outputs.size());
    for (size_t i = 0; i < sets[s].outputs.size() && diff.empty(); ++i) {
      const HostTensor& exp = sets[s].outputs[i];
      size_t found = out->num_tensors;
      for (size_t j = 0; j < out->num_tensors; ++j) {
        if (out->names && out->names[j] && exp.name == out->names[j]) found = j;
      }
      if (found == out->num_tensors) {
        diff = "output '" + exp.name + "' missing from receive_output";
        break;
      }
      std::vector<size_t> shape(out->shapes[found], out->shapes[found] + out->ranks[found]);
      const std::string d = Compare(exp, static_cast<int>(out->data_types[found]), shape, out->data[found]);
      if (!d.empty()) diff = "test_data_set_" + std::to_string(s) + " output '" + exp.name + "': " + d;
    }
    oaaxvk::FreeTensors(out);
    if (!diff.empty()) return fail("wrong", diff);
  }
  if (api.destroy() != 0) return Emit("runtime-error", std::string("runtime_destruction: ") + api.error());
  fs::remove(bundle);  // passes keep only their logs
  std::string how;
  if (!ranged_names.empty()) how = "run-time values with ranges: " + ranged_names;
  if (!bound_names.empty()) how += (how.empty() ? "" : "; ") + std::string("bound at conversion: ") + bound_names;
  return Emit("pass", how);
}

// A runtime initialization alone: tells "no Vulkan device" from case failures.
int Probe(const CaseOptions& o) {
  Api api;
  std::string err = LoadApi(o.runtime, &api);
  if (!err.empty()) {
    std::printf("%s\n", err.c_str());
    return 1;
  }
  std::vector<std::string> keys, values;
  std::vector<const char*> kp;
  std::vector<const void*> vp;
  for (const std::string& kv : o.runtime_args) {
    const size_t eq = kv.find('=');
    keys.push_back(kv.substr(0, eq));
    values.push_back(eq == std::string::npos ? "" : kv.substr(eq + 1));
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    kp.push_back(keys[i].c_str());
    vp.push_back(values[i].c_str());
  }
  if (api.init_with_args(static_cast<int>(kp.size()), kp.data(), vp.data()) != 0) {
    std::printf("%s\n", api.error());
    return 1;
  }
  const char* (*version)() = reinterpret_cast<const char* (*)()>(dlsym(api.handle, "runtime_version"));
  std::printf("%s\n", version ? version() : "?");
  api.destroy();
  return 0;
}

// ---------------------------------------------------------- parent: the run

struct Outcome {
  std::string status;  // pass, rejected, wrong, runtime-error, crash, timeout
  std::string detail;
  double seconds = 0;
  // "pass (bound at conversion: x)" for a pass with inputs bound at conversion.
  std::string Line() const {
    if (detail.empty()) return status;
    return status == "pass" ? "pass (" + detail + ")" : status + ": " + detail;
  }
};

struct Expectation {
  std::string status, detail;
};

std::map<std::string, Expectation> ReadExpected(const fs::path& p) {
  std::map<std::string, Expectation> out;
  std::ifstream f(p);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    std::string rest = line.substr(sp + 1);
    Expectation e;
    if (rest.rfind("pass (", 0) == 0 && rest.back() == ')') {  // pass (bound at conversion: ...)
      e.status = "pass";
      e.detail = rest.substr(6, rest.size() - 7);
      out[line.substr(0, sp)] = e;
      continue;
    }
    const size_t colon = rest.find(": ");
    e.status = colon == std::string::npos ? rest : rest.substr(0, colon);
    e.detail = colon == std::string::npos ? "" : rest.substr(colon + 2);
    out[line.substr(0, sp)] = e;
  }
  return out;
}

// The operator a case tests: the ONNX op type whose name (lower case) is the
// longest prefix of the case name (underscores ignored); else the model's
// last node's op. "_expanded" cases count under their function's op.
std::string NormalizeName(std::string s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string CaseOperator(const std::string& name, const onnx::ModelProto& model,
                         const std::map<std::string, std::string>& known) {
  std::string base = name;
  const std::string suffix = "_expanded";
  if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
    base = base.substr(0, base.size() - suffix.size());
    auto it = known.find(base);
    if (it != known.end()) return it->second;
  }
  const std::string norm = NormalizeName(base.rfind("test_", 0) == 0 ? base.substr(5) : base);
  std::string best;
  for (const auto& node : model.graph().node()) {
    const std::string op = NormalizeName(node.op_type());
    if (norm.rfind(op, 0) == 0 && op.size() > NormalizeName(best).size()) best = node.op_type();
  }
  if (best.empty() && model.graph().node_size() > 0) best = model.graph().node(model.graph().node_size() - 1).op_type();
  return best.empty() ? "(none)" : best;
}

// Unsupported operators named in a rejection reason ("(op X, ...").
std::set<std::string> UnsupportedOps(const std::string& reason) {
  std::set<std::string> ops;
  static const std::regex re("\\(op ([A-Za-z0-9_]+)");
  for (auto it = std::sregex_iterator(reason.begin(), reason.end(), re); it != std::sregex_iterator(); ++it) {
    ops.insert((*it)[1].str());
  }
  return ops;
}

// A reason with names and numbers blanked, to group rejections.
std::string ReasonClass(const std::string& reason) {
  const auto ops = UnsupportedOps(reason);
  if (!ops.empty()) {
    std::string out = "unsupported operators together:";
    for (const std::string& op : ops) out += " " + op;
    return out;
  }
  std::string s = std::regex_replace(reason, std::regex("'[^']*'"), "'...'");
  s = std::regex_replace(s, std::regex("\\(op [A-Za-z0-9_]+[^)]*\\)"), "(op ...)");
  s = std::regex_replace(s, std::regex("\\b[0-9]+\\b"), "N");
  return OneLine(s, 160);
}

struct Row {
  int cases = 0, passed = 0, rejected = 0, wrong = 0, other = 0;
};

std::string MakeTable(const std::map<std::string, Outcome>& results, const std::map<std::string, std::string>& op_of,
                      const std::string& device) {
  std::map<std::string, Row> rows;
  std::map<std::string, int> counts, unlock, reasons;
  int pass = 0, bound = 0;  // bound: passes with a graph input bound at conversion
  for (const auto& [name, o] : results) {
    Row& r = rows[op_of.at(name)];
    ++r.cases;
    ++counts[o.status];
    if (o.status == "pass") ++r.passed, ++pass, bound += o.detail.find("bound at conversion") != std::string::npos;
    else if (o.status == "rejected") ++r.rejected;
    else if (o.status == "wrong") ++r.wrong;
    else ++r.other;
    if (o.status == "rejected") {
      const auto ops = UnsupportedOps(o.detail);
      if (ops.size() == 1) ++unlock[*ops.begin()];
      else ++reasons[ReasonClass(o.detail)];
    }
  }
  std::ostringstream md;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f%%", results.empty() ? 0.0 : 100.0 * pass / results.size());
  char pct_free[32];
  std::snprintf(pct_free, sizeof pct_free, "%.1f%%", results.empty() ? 0.0 : 100.0 * (pass - bound) / results.size());
  md << "Device: " << device << ". " << pass << " of " << results.size() << " cases pass (" << pct << "), "
     << pass - bound << " (" << pct_free << ") with no input bound at conversion";
  for (const auto& [s, n] : counts) md << "; " << s << " " << n;
  md << ".\n\n| operator | cases | passed | rejected | wrong | other |\n|---|---:|---:|---:|---:|---:|\n";
  for (const auto& [op, r] : rows) {
    md << "| " << op << " | " << r.cases << " | " << r.passed << " | " << r.rejected << " | " << r.wrong << " | "
       << r.other << " |\n";
  }
  std::vector<std::pair<int, std::string>> ranked;
  for (const auto& [op, n] : unlock) ranked.emplace_back(-n, op);
  std::sort(ranked.begin(), ranked.end());
  md << "\nMissing operators, by the number of rejected cases each alone would unlock "
        "(cases whose only unsupported operator it is):\n\n| operator | cases |\n|---|---:|\n";
  for (const auto& [n, op] : ranked) md << "| " << op << " | " << -n << " |\n";
  std::vector<std::pair<int, std::string>> rr;
  for (const auto& [r, n] : reasons) rr.emplace_back(-n, r);
  std::sort(rr.begin(), rr.end());
  md << "\nOther rejection reasons (names and numbers blanked):\n\n| reason | cases |\n|---|---:|\n";
  for (const auto& [n, r] : rr) {
    std::string esc;
    for (char c : r) esc += c == '|' ? std::string("\\|") : std::string(1, c);
    md << "| " << esc << " | " << -n << " |\n";
  }
  return md.str();
}

struct Running {
  std::string name;
  pid_t pid = -1;
  int fd = -1;
  std::string out;
  std::chrono::steady_clock::time_point start;
  fs::path log;
};

Outcome Finish(Running& r, int wait_status, bool timed_out, int timeout_s) {
  Outcome o;
  o.seconds = Seconds(r.start);
  std::string phase = "start", result;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("phase\t", 0) == 0) phase = line.substr(6);
    if (line.rfind("result\t", 0) == 0) result = line.substr(7);
  }
  if (timed_out) {
    o.status = "timeout";
    o.detail = "no result after " + std::to_string(timeout_s) + " s (phase " + phase + ")";
  } else if (!result.empty() && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
    const size_t tab = result.find('\t');
    o.status = result.substr(0, tab);
    o.detail = tab == std::string::npos ? "" : result.substr(tab + 1);
  } else if (!result.empty()) {
    // A result was printed, but the process then died (e.g. in a destructor).
    o.status = "crash";
    o.detail = "after '" + result.substr(0, result.find('\t')) + "', " +
               (WIFSIGNALED(wait_status) ? SignalName(WTERMSIG(wait_status))
                                         : "exit code " + std::to_string(WEXITSTATUS(wait_status))) +
               " (phase " + phase + "): " + OneLine(LastLines(r.log, 2), 300);
  } else {
    o.status = "crash";
    o.detail = (WIFSIGNALED(wait_status) ? SignalName(WTERMSIG(wait_status))
                                         : "exit code " + std::to_string(WEXITSTATUS(wait_status))) +
               " (phase " + phase + "): " + OneLine(LastLines(r.log, 2), 300);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"oaaxvk_conformance: ONNX backend node tests through oaax-vulkan-toolchain and libRuntimeLibrary.so"};
  std::string cases_dir, expected, table, work = "conformance-work", filter, run_case, results_file;
  CaseOptions co;
  int jobs = 2, timeout_s = 120, sample = 1, all_up_to_opset = 0;
  bool update = false, probe = false;
  app.add_option("--cases", cases_dir, "directory of node test cases (…/node)");
  app.add_option("--toolchain", co.toolchain, "oaax-vulkan-toolchain executable")->required();
  app.add_option("--runtime", co.runtime, "libRuntimeLibrary.so")->required();
  app.add_option("--expected", expected, "expectations file (tests/conformance/expected.txt)");
  app.add_flag("--update", update, "rewrite the expectations of the cases that ran");
  app.add_option("--table", table, "markdown file whose conformance table is replaced");
  app.add_option("--filter", filter, "ECMAScript regex; only cases whose name matches (search)");
  app.add_option("--jobs,-j", jobs, "cases run at once")->check(CLI::Range(1, 64));
  app.add_option("--timeout", timeout_s, "seconds per case")->check(CLI::Range(1, 3600));
  app.add_option("--sample", sample, "run every N-th case only (after --filter)")->check(CLI::Range(1, 1000));
  app.add_option("--all-up-to-opset", all_up_to_opset,
                 "with --sample: every case whose model imports a default-domain opset <= this one runs, "
                 "only the newer ones are sampled")
      ->check(CLI::Range(0, 1000));
  app.add_option("--work", work, "work directory (bundles, logs, results.txt)");
  app.add_option("--arg", co.runtime_args, "runtime argument key=value (repeatable)");
  app.add_option("--run-case", run_case, "internal: run one case in this process");
  app.add_flag("--probe", probe, "internal: initialize the runtime once");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (probe) return Probe(co);
  if (!run_case.empty()) return RunCase(run_case, work, co);

  if (cases_dir.empty() || !fs::is_directory(cases_dir)) {
    std::fprintf(stderr, "oaaxvk_conformance: --cases '%s' is not a directory\n", cases_dir.c_str());
    return 2;
  }
  for (const std::string* p : {&co.toolchain, &co.runtime}) {
    if (!fs::exists(*p)) {
      std::fprintf(stderr, "oaaxvk_conformance: %s does not exist\n", p->c_str());
      return 2;
    }
  }
  std::regex filter_re;
  try {
    filter_re = std::regex(filter.empty() ? ".*" : filter);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "oaaxvk_conformance: bad --filter '%s': %s\n", filter.c_str(), e.what());
    return 2;
  }
  const std::string self = fs::canonical("/proc/self/exe").string();
  co.toolchain = fs::absolute(co.toolchain).string();
  co.runtime = fs::absolute(co.runtime).string();
  fs::create_directories(work);
  work = fs::absolute(work).string();

  // Children run with leak checking off in sanitized builds: the Vulkan
  // loader dlcloses the drivers, whose allocations LeakSanitizer then cannot
  // attribute (as in tests/e2e); the runtime tests check the runtime's leaks.
  // Address and UB errors still abort the child and count as a crash.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string child_asan = std::string("ASAN_OPTIONS=") + (asan ? asan : "") + ":detect_leaks=0";
  std::vector<std::string> base_args = {self, "--toolchain", co.toolchain, "--runtime", co.runtime};
  for (const std::string& a : co.runtime_args) {
    base_args.push_back("--arg");
    base_args.push_back(a);
  }

  // Probe: no Vulkan device means nothing here can be measured.
  std::string device;
  {
    int fds[2];
    if (pipe(fds) != 0) return 2;
    std::vector<std::string> args = base_args;
    args.push_back("--probe");
    const pid_t pid = Spawn(args, fds[1], work + "/probe.log", {child_asan});
    close(fds[1]);
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) device.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int st = 0;
    if (pid > 0) waitpid(pid, &st, 0);
    device = OneLine(device);
    if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      std::printf("SKIP: the runtime cannot initialize (no usable Vulkan device?): %s\n%s", device.c_str(),
                  LastLines(work + "/probe.log", 5).c_str());
      return 77;
    }
  }

  // Cases and their operators.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(cases_dir)) {
    if (fs::exists(e.path() / "model.onnx")) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::map<std::string, std::string> op_of;
  std::map<std::string, int64_t> opset_of;  // default-domain opset the model imports (0: none)
  {
    // Non-expanded cases first, so "_expanded" ones can inherit their op.
    std::vector<std::string> order = names;
    std::stable_partition(order.begin(), order.end(), [](const std::string& n) {
      return n.find("_expanded") == std::string::npos;
    });
    for (const std::string& n : order) {
      onnx::ModelProto m;
      op_of[n] = ParseModel(fs::path(cases_dir) / n / "model.onnx", &m) ? CaseOperator(n, m, op_of) : "(unreadable)";
      int64_t& v = opset_of[n];
      v = 0;
      for (const onnx::OperatorSetIdProto& os : m.opset_import())
        if (os.domain().empty() || os.domain() == "ai.onnx") v = os.version();
    }
  }
  // Cases whose test data contradicts their own model are listed as
  // "<case> skip: <why>" in the expectations file and not run.
  std::map<std::string, Expectation> exp = expected.empty() ? std::map<std::string, Expectation>{} : ReadExpected(expected);
  std::map<std::string, Outcome> results;
  std::vector<std::string> selected;
  size_t matched = 0;
  for (const std::string& n : names) {
    if (!std::regex_search(n, filter_re)) continue;
    // With --all-up-to-opset the older cases all run and only the newer ones count for --sample.
    const bool always = all_up_to_opset > 0 && opset_of[n] <= all_up_to_opset;
    if (!always && matched++ % static_cast<size_t>(sample) != 0) continue;
    const auto it = exp.find(n);
    if (it != exp.end() && it->second.status == "skip") results[n] = Outcome{"skip", it->second.detail, 0};
    else selected.push_back(n);
  }
  std::printf("conformance: %zu of %zu cases on %s, %d at a time, %d s limit each\n", selected.size(), names.size(),
              device.c_str(), jobs, timeout_s);
  std::fflush(stdout);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Running> running;
  size_t next = 0, done = 0;
  while (next < selected.size() || !running.empty()) {
    while (next < selected.size() && static_cast<int>(running.size()) < jobs) {
      Running r;
      r.name = selected[next++];
      const fs::path cwork = fs::path(work) / r.name;
      fs::create_directories(cwork);
      r.log = cwork / "case.log";
      int fds[2];
      if (pipe2(fds, O_CLOEXEC) != 0) {
        std::perror("pipe");
        return 2;
      }
      std::vector<std::string> args = base_args;
      args.insert(args.end(), {"--run-case", (fs::path(cases_dir) / r.name).string(), "--work", cwork.string()});
      r.start = std::chrono::steady_clock::now();
      r.pid = Spawn(args, fds[1], r.log.string(),
                    {child_asan, std::string(kToolchainAsanVar) + "=" + (asan ? asan : "")});
      close(fds[1]);
      r.fd = fds[0];
      if (r.pid < 0) {
        close(r.fd);
        results[r.name] = Outcome{"crash", "cannot start the case process", 0};
        continue;
      }
      running.push_back(std::move(r));
    }
    std::vector<pollfd> pfds;
    for (const Running& r : running) pfds.push_back({r.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 100);
    for (size_t i = 0; i < running.size();) {
      Running& r = running[i];
      bool eof = false;
      if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[4096];
        const ssize_t n = read(r.fd, buf, sizeof buf);
        if (n > 0) r.out.append(buf, static_cast<size_t>(n));
        else eof = true;
      }
      const bool timed_out = !eof && Seconds(r.start) > timeout_s;
      if (!eof && !timed_out) {
        ++i;
        continue;
      }
      if (timed_out) kill(-r.pid, SIGKILL);
      int st = 0;
      while (waitpid(r.pid, &st, 0) < 0 && errno == EINTR) {
      }
      if (timed_out) kill(-r.pid, SIGKILL);  // grandchildren (the toolchain) too
      close(r.fd);
      Outcome o = Finish(r, st, timed_out, timeout_s);
      ++done;
      if (o.status != "pass" && o.status != "rejected") {
        std::printf("[%zu/%zu] %s: %s\n", done, selected.size(), r.name.c_str(), o.Line().c_str());
        std::fflush(stdout);
      }
      results[r.name] = o;
      running.erase(running.begin() + static_cast<long>(i));
      pfds.erase(pfds.begin() + static_cast<long>(i));
    }
  }
  const double total_s = Seconds(t0);

  // Results file: every case that ran, with its time.
  {
    std::ofstream f(fs::path(work) / "results.txt");
    for (const auto& [n, o] : results) {
      char t[32];
      std::snprintf(t, sizeof t, "%.2f", o.seconds);
      f << n << "\t" << t << "\t" << o.Line() << "\n";
    }
  }

  // Against the expectations.
  std::map<std::string, int> counts;
  std::vector<std::string> failures, improvements, changed, unknown;
  for (const auto& [n, o] : results) {
    ++counts[o.status];
    const auto it = exp.find(n);
    if (o.status == "wrong" || o.status == "crash" || o.status == "timeout") {
      failures.push_back(n + ": " + o.Line());
    } else if (it != exp.end() && it->second.status == "pass" && o.status != "pass") {
      failures.push_back(n + ": regression (expected pass): " + o.Line());
    } else if (it == exp.end()) {
      if (!expected.empty()) unknown.push_back(n + ": " + o.Line());
    } else if (o.status == "pass" && it->second.status != "pass") {
      improvements.push_back(n);
    } else if (it->second.status != o.status || it->second.detail != o.detail) {
      changed.push_back(n + ": now '" + o.Line() + "'");
    }
  }
  if (update && !expected.empty()) {
    for (const auto& [n, o] : results) exp[n] = Expectation{o.status, o.detail};
    // Expectations of cases the suite no longer has are dropped.
    for (auto it = exp.begin(); it != exp.end();)
      it = std::binary_search(names.begin(), names.end(), it->first) ? std::next(it) : exp.erase(it);
    std::ofstream f(expected);
    f << "# ONNX backend node tests (the ONNX release in scripts/onnx-version) through oaax-vulkan-toolchain +\n"
         "# libRuntimeLibrary.so.\n"
         "# One line per case: '<case> pass', '<case> pass (bound at conversion: <inputs>)' or\n"
         "# '<case> rejected: <toolchain's reason>', or '<case> skip: <why>' for a case whose test data\n"
         "# contradicts its own model (not run; see docs/conformance.md).\n"
         "# Regenerate: scripts/conformance.sh --update  (docs/conformance.md)\n";
    for (const auto& [n, e] : exp) f << n << " " << Outcome{e.status, e.detail}.Line() << "\n";
    std::printf("conformance: updated %s (%zu cases)\n", expected.c_str(), exp.size());
  }
  if (!table.empty()) {
    const std::string begin = "<!-- conformance-table:begin -->", end = "<!-- conformance-table:end -->";
    std::string doc = fs::exists(table) ? ReadFile(table) : "";
    const size_t b = doc.find(begin), e = doc.find(end);
    const std::string body = begin + "\n" + MakeTable(results, op_of, device) + end;
    if (b != std::string::npos && e != std::string::npos && e > b) {
      doc = doc.substr(0, b) + body + doc.substr(e + end.size());
    } else {
      doc += "\n" + body + "\n";
    }
    std::ofstream(table) << doc;
    std::printf("conformance: wrote the per-operator table into %s\n", table.c_str());
  }

  auto list = [](const char* title, const std::vector<std::string>& v, size_t max) {
    if (v.empty()) return;
    std::printf("%s (%zu):\n", title, v.size());
    for (size_t i = 0; i < v.size() && i < max; ++i) std::printf("  %s\n", v[i].c_str());
    if (v.size() > max) std::printf("  ... %zu more (see results.txt)\n", v.size() - max);
  };
  list("newly passing (run with --update to record)", improvements, 50);
  if (!update) list("changed outcome (not a failure)", changed, 30);
  if (!update) list("not in the expectations file", unknown, 30);
  list("FAILURES", failures, 200);
  std::printf("conformance: %.1f s for %zu cases (%.2f s/case, %d at a time); results in %s/results.txt\n", total_s,
              results.size(), results.empty() ? 0.0 : total_s / results.size(), jobs, work.c_str());
  std::printf("conformance:");
  for (const auto& [s, n] : counts) std::printf(" %s %d;", s.c_str(), n);
  std::printf("\nconformance: %d passed, %zu failed\n", counts["pass"], failures.size());
  return failures.empty() ? 0 : 1;
}

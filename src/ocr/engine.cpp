#include "ocr/engine.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/oinf.h"
#include "oaax_vulkan/tensors_util.h"

extern char** environ;

namespace oaaxvk::ocr {
namespace fs = std::filesystem;
namespace {

size_t NumElements(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A private temporary directory, removed with its contents on destruction.
class TempDir {
 public:
  static StatusOr<TempDir> Make(const char* prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return Unavailable("cannot create a temporary directory " + tmpl + ": " + std::strerror(errno));
    }
    return TempDir(tmpl);
  }
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string p) : path_(std::move(p)) {}
  std::string path_;
};

// ---- OAAX runtime through dlopen ----

class OaaxEngine final : public Engine {
 public:
  ~OaaxEngine() override {
    if (initialized_ && destroy_ && destroy_() != 0) {
      std::fprintf(stderr, "oaax-ocr: runtime_destruction (%s) failed: %s\n", runtime_.c_str(), error_ ? error_() : "?");
    }
    if (handle_) dlclose(handle_);
  }

  static StatusOr<std::unique_ptr<Engine>> Open(const OaaxEngineOptions& o) {
    std::unique_ptr<OaaxEngine> e(new OaaxEngine);
    e->runtime_ = o.runtime_path;
    if (!fs::exists(o.runtime_path)) return NotFound(o.runtime_path + ": OAAX runtime library not found");
    {
      // A copy at another path is a different object to the dynamic loader,
      // so it gets its own globals; the copy is unlinked once mapped.
      OAAXVK_ASSIGN_OR_RETURN(TempDir dir, TempDir::Make("oaax-ocr-runtime-"));
      const std::string copy = dir.path() + "/" + fs::path(o.runtime_path).filename().string();
      std::error_code ec;
      fs::copy_file(o.runtime_path, copy, ec);
      if (ec) return Unavailable("cannot copy " + o.runtime_path + " to " + copy + ": " + ec.message());
      e->handle_ = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!e->handle_) return Unavailable(o.runtime_path + ": dlopen failed: " + dlerror());
    }
    OAAXVK_RETURN_IF_ERROR(e->Sym("runtime_initialization_with_args", &e->init_));
    OAAXVK_RETURN_IF_ERROR(e->Sym("runtime_model_loading", &e->load_));
    OAAXVK_RETURN_IF_ERROR(e->Sym("send_input", &e->send_));
    OAAXVK_RETURN_IF_ERROR(e->Sym("receive_output", &e->receive_));
    OAAXVK_RETURN_IF_ERROR(e->Sym("runtime_destruction", &e->destroy_));
    OAAXVK_RETURN_IF_ERROR(e->Sym("runtime_error_message", &e->error_));
    OAAXVK_RETURN_IF_ERROR(e->Sym("runtime_name", &e->name_));
    OAAXVK_RETURN_IF_ERROR(e->Sym("runtime_version", &e->version_));
    std::vector<const char*> keys, values;
    for (const auto& kv : o.args) keys.push_back(kv.first.c_str()), values.push_back(kv.second.c_str());
    std::vector<const void*> vptr(values.begin(), values.end());
    if (e->init_(static_cast<int>(keys.size()), keys.data(), vptr.data()) != 0) {
      return Unavailable(o.runtime_path + ": runtime_initialization_with_args failed: " + e->error_());
    }
    e->initialized_ = true;
    if (e->load_(o.model_path.c_str()) != 0) {
      return InvalidArgument(o.model_path + ": runtime_model_loading failed: " + e->error_());
    }
    e->describe_ = std::string(e->name_()) + " " + e->version_() + ", " + o.model_path;
    OAAXVK_ASSIGN_OR_RETURN(e->input_dims_, ReadBundleInputDims(o.model_path));
    return std::unique_ptr<Engine>(std::move(e));
  }

  std::string Describe() const override { return describe_; }
  std::vector<InputDim> InputDims() const override { return input_dims_; }

  Status Send(Tensor input) override {
    if (NumElements(input.shape) != input.data.size()) {
      return InvalidArgument("send_input: tensor '" + input.name + "' has " + std::to_string(input.data.size()) +
                             " elements but shape " + ShapeString(input.shape));
    }
    tensors_struct* t = AllocTensors(1);
    if (!t || !SetTensor(t, 0, input.name.c_str(), DATA_TYPE_FLOAT, input.shape.data(), input.shape.size(),
                         input.data.data(), input.data.size() * sizeof(float))) {
      FreeTensors(t);
      return ResourceExhausted("send_input: out of host memory");
    }
    if (send_(t) != 0) {
      Status s = InvalidArgument("send_input of '" + input.name + "' " + ShapeString(input.shape) + " to " + describe_ +
                                 " failed: " + error_());
      FreeTensors(t);  // on failure the caller keeps ownership
      return s;
    }
    return Status::Ok();
  }

  StatusOr<std::vector<Tensor>> Receive() override {
    tensors_struct* t = nullptr;
    if (receive_(&t) != 0) return Unavailable("receive_output from " + describe_ + " failed: " + error_());
    std::vector<Tensor> out;
    Status s;
    for (size_t i = 0; t && i < t->num_tensors && s.ok(); ++i) {
      if (t->data_types[i] != DATA_TYPE_FLOAT) {
        s = Unimplemented(StrFormat("receive_output: output '%s' has OAAX data type %d; the OCR host reads float32 only",
                                    t->names[i], static_cast<int>(t->data_types[i])));
        break;
      }
      Tensor x;
      x.name = t->names[i];
      for (size_t r = 0; r < t->ranks[i]; ++r) x.shape.push_back(static_cast<int64_t>(t->shapes[i][r]));
      const auto* p = static_cast<const float*>(t->data[i]);
      x.data.assign(p, p + NumElements(x.shape));
      out.push_back(std::move(x));
    }
    FreeTensors(t);
    if (!s.ok()) return s;
    return out;
  }

 private:
  OaaxEngine() = default;

  template <typename F>
  Status Sym(const char* name, F* out) {
    *out = reinterpret_cast<F>(dlsym(handle_, name));
    if (*out == nullptr) return NotFound(runtime_ + ": not an OAAX runtime: symbol " + name + " is missing");
    return Status::Ok();
  }

  std::string runtime_, describe_;
  std::vector<InputDim> input_dims_;
  void* handle_ = nullptr;
  bool initialized_ = false;
  int (*init_)(int, const char**, const void**) = nullptr;
  int (*load_)(const char*) = nullptr;
  int (*send_)(tensors_struct*) = nullptr;
  int (*receive_)(tensors_struct**) = nullptr;
  int (*destroy_)() = nullptr;
  const char* (*error_)() = nullptr;
  const char* (*name_)() = nullptr;
  const char* (*version_)() = nullptr;
};

// ---- ONNX Runtime through node ----

class OrtEngine final : public Engine {
 public:
  explicit OrtEngine(OrtEngineOptions o) : o_(std::move(o)) {}
  std::vector<InputDim> InputDims() const override { return {}; }
  std::string Describe() const override { return "ONNX Runtime (onnxruntime-node, CPU), " + o_.model_path; }

  Status Send(Tensor input) override {
    if (NumElements(input.shape) != input.data.size()) {
      return InvalidArgument("ONNX Runtime input '" + input.name + "': data does not match shape " + ShapeString(input.shape));
    }
    pending_.push_back(std::move(input));
    return Status::Ok();
  }

  StatusOr<std::vector<Tensor>> Receive() override {
    if (done_.empty()) {
      if (pending_.empty()) return FailedPrecondition("receive from ONNX Runtime: no pending input");
      // Everything queued runs now, one process per distinct (name, shape);
      // the outputs are put back in the order the inputs were sent.
      std::vector<std::vector<Tensor>> results(pending_.size());
      std::vector<bool> done(pending_.size(), false);
      for (size_t first = 0; first < pending_.size(); ++first) {
        if (done[first]) continue;
        std::vector<size_t> group = {first};
        const Tensor& f = pending_[first];
        if (!f.shape.empty() && f.shape[0] == 1) {
          for (size_t i = first + 1; i < pending_.size(); ++i) {
            if (!done[i] && pending_[i].name == f.name && pending_[i].shape == f.shape) group.push_back(i);
          }
        }
        OAAXVK_RETURN_IF_ERROR(RunBatch(group, &results));
        for (size_t i : group) done[i] = true;
      }
      pending_.clear();
      for (auto& r : results) done_.push_back(std::move(r));
    }
    std::vector<Tensor> out = std::move(done_.front());
    done_.pop_front();
    return out;
  }

 private:
  // Runs pending_[group[0]], pending_[group[1]], ... (one name, one shape) in
  // one process: stacked along the leading batch dimension when there are
  // several (their shapes then start with 1). (*results)[group[k]] receives
  // the outputs of pending_[group[k]].
  Status RunBatch(const std::vector<size_t>& group, std::vector<std::vector<Tensor>>* results) {
    const size_t n = group.size();
    const Tensor& first = pending_[group[0]];
    const bool batchable = !first.shape.empty() && first.shape[0] == 1;
    OAAXVK_ASSIGN_OR_RETURN(TempDir dir, TempDir::Make("oaax-ocr-ort-"));
    const std::string in_dir = dir.path() + "/in", out_dir = dir.path() + "/out";
    fs::create_directories(in_dir);
    std::vector<int64_t> shape = first.shape;
    if (batchable) shape[0] = static_cast<int64_t>(n);
    {
      std::ofstream f(in_dir + "/0.bin", std::ios::binary);
      for (size_t i : group) {
        f.write(reinterpret_cast<const char*>(pending_[i].data.data()),
                static_cast<std::streamsize>(pending_[i].data.size() * sizeof(float)));
      }
      nlohmann::json m = nlohmann::json::array();
      m.push_back({{"name", first.name}, {"dtype", "float32"}, {"shape", shape}, {"file", "0.bin"}});
      std::ofstream(in_dir + "/manifest.json") << m.dump();
      if (!f) return Unavailable("cannot write the ONNX Runtime input in " + in_dir);
    }
    OAAXVK_RETURN_IF_ERROR(RunNode(in_dir, out_dir, dir.path() + "/log.txt"));
    nlohmann::json manifest;
    {
      std::ifstream f(out_dir + "/manifest.json");
      manifest = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
      if (!manifest.is_array()) return DataLoss(out_dir + "/manifest.json: not a JSON array (ort_run.js output)");
    }
    for (const auto& e : manifest) {
      if (!e.is_object() || !e.contains("name") || !e.contains("shape") || !e.contains("file") ||
          e.value("dtype", "") != "float32" || !e["shape"].is_array()) {
        return DataLoss(out_dir + "/manifest.json: entry " + e.dump() + " is not a float32 tensor");
      }
      std::vector<int64_t> oshape;
      for (const auto& d : e["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) return DataLoss("ort_run.js: bad shape " + e.dump());
        oshape.push_back(d.get<int64_t>());
      }
      std::ifstream f(out_dir + "/" + e["file"].get<std::string>(), std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (bytes.size() != NumElements(oshape) * sizeof(float)) {
        return DataLoss(StrFormat("ort_run.js output '%s': %zu bytes for shape %s", e["name"].get<std::string>().c_str(),
                                  bytes.size(), ShapeString(oshape).c_str()));
      }
      if (batchable && (oshape.empty() || oshape[0] != static_cast<int64_t>(n))) {
        return DataLoss("ort_run.js output '" + e["name"].get<std::string>() + "' " + ShapeString(oshape) +
                        " does not have the batch size " + std::to_string(n));
      }
      const size_t per = NumElements(oshape) / n;
      const auto* p = reinterpret_cast<const float*>(bytes.data());
      for (size_t k = 0; k < n; ++k) {
        Tensor t;
        t.name = e["name"].get<std::string>();
        t.shape = oshape;
        if (batchable) t.shape[0] = 1;
        t.data.assign(p + k * per, p + (k + 1) * per);
        (*results)[group[k]].push_back(std::move(t));
      }
    }
    return Status::Ok();
  }

  Status RunNode(const std::string& in_dir, const std::string& out_dir, const std::string& log) {
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "NODE_PATH=", 10) != 0) env_s.emplace_back(*e);
    }
    env_s.push_back("NODE_PATH=" + o_.node_path);
    std::vector<char*> env;
    for (auto& s : env_s) env.push_back(s.data());
    env.push_back(nullptr);
    std::vector<std::string> args_s = {o_.node, o_.script, o_.model_path, in_dir, out_dir};
    std::vector<char*> argv;
    for (auto& s : args_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, o_.node.c_str(), &fa, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return Unavailable("cannot start '" + o_.node + "' for ONNX Runtime: " + std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return Internal(std::string("waitpid: ") + std::strerror(errno));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::ifstream f(log);
      std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (text.size() > 2000) text = text.substr(text.size() - 2000);
      return Unavailable(StrFormat("ONNX Runtime (%s %s %s) failed with status %d: %s", o_.node.c_str(), o_.script.c_str(),
                                   o_.model_path.c_str(), WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.c_str()));
    }
    return Status::Ok();
  }

  OrtEngineOptions o_;
  std::vector<Tensor> pending_;
  std::deque<std::vector<Tensor>> done_;
};

}  // namespace

std::string InputDim::ToString() const {
  if (!is_symbolic()) return std::to_string(value);
  std::string s = symbol + " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (multiple_of != 1) s += ", multiple of " + std::to_string(multiple_of);
  return s;
}

std::string InputDimsString(const std::vector<InputDim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += (i ? ", " : "") + (dims[i].is_symbolic() ? dims[i].symbol : std::to_string(dims[i].value));
  }
  return s + "]";
}

StatusOr<std::vector<InputDim>> ReadBundleInputDims(const std::string& model_path) {
  OAAXVK_ASSIGN_OR_RETURN(oinf::File file, oinf::File::Open(model_path));
  auto bad = [&](const std::string& what) {
    return DataLoss(model_path + ": bundle metadata " + what + " (docs/bundle-format.md)");
  };
  const oinf::Metadata* m = file.FindMetadata("io.input.0.shape");
  if (m == nullptr || m->type != oinf::ValueType::kNdArray || m->ndarray.element_type != oinf::ValueType::kI64 ||
      m->ndarray.dims.size() != 1) {
    return bad("io.input.0.shape is missing or not an i64 NDARRAY");
  }
  std::vector<InputDim> dims(m->ndarray.numel);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t v = 0;
    std::memcpy(&v, m->ndarray.data.data + i * sizeof(int64_t), sizeof(int64_t));
    if (v < 0) return bad(StrFormat("io.input.0.shape has a negative dimension %lld", static_cast<long long>(v)));
    dims[i].value = dims[i].min = dims[i].max = v;
  }
  const oinf::Metadata* count = file.FindMetadata("shape.symbols");
  if (count == nullptr) return dims;  // a static bundle
  // Feature dynamic_shapes: shape.refs rows (kind, index, sub, expr) of kind 2
  // are input dimensions; their expression is a `symbol` instruction
  // (opcode 1, a = the symbol) of shape.program. The runtime validates all of
  // it at load; this reads what the host needs to size its inputs.
  uint32_t ns = 0;
  if (!count->GetScalar(&ns)) return bad("shape.symbols is not a u32");
  struct Symbol {
    std::string name;
    int64_t min = 0, max = 0, multiple_of = 1;
  };
  std::vector<Symbol> symbols(ns);
  for (uint32_t k = 0; k < ns; ++k) {
    const std::string p = "shape.symbol." + std::to_string(k) + ".";
    const oinf::Metadata* name = file.FindMetadata(p + "name");
    if (name == nullptr || name->type != oinf::ValueType::kNdArray || name->ndarray.element_type != oinf::ValueType::kU8) {
      return bad(p + "name is missing or not a u8 NDARRAY");
    }
    symbols[k].name.assign(reinterpret_cast<const char*>(name->ndarray.data.data), name->ndarray.data.size);
    for (auto [key, out] : {std::pair{"min", &symbols[k].min}, {"max", &symbols[k].max}, {"multiple_of", &symbols[k].multiple_of}}) {
      const oinf::Metadata* e = file.FindMetadata(p + key);
      if (e == nullptr || !e->GetScalar(out)) return bad(p + key + " is missing or not an i64");
    }
    const Symbol& y = symbols[k];
    if (y.multiple_of < 1 || y.min < 1 || y.max < y.min || y.min % y.multiple_of || y.max % y.multiple_of) {
      return bad(StrFormat("%s*: range [%lld, %lld], multiple of %lld is not valid", p.c_str(),
                           static_cast<long long>(y.min), static_cast<long long>(y.max),
                           static_cast<long long>(y.multiple_of)));
    }
  }
  const oinf::Tensor* prog = file.FindTensor("shape.program");
  const oinf::Tensor* refs = file.FindTensor("shape.refs");
  if (prog == nullptr || prog->dtype != oinf::ValueType::kI64 || prog->dims.size() != 2 || prog->dims[1] != 3 ||
      !prog->has_data || refs == nullptr || refs->dtype != oinf::ValueType::kU32 || refs->dims.size() != 2 ||
      refs->dims[1] != 4 || !refs->has_data) {
    return bad("tensors shape.program (i64[K, 3]) and shape.refs (u32[R, 4]) are missing or malformed");
  }
  for (uint64_t r = 0; r < refs->dims[0]; ++r) {
    uint32_t ref[4];
    std::memcpy(ref, refs->data.data + 16 * r, sizeof ref);
    if (ref[0] != 2 || ref[1] != 0) continue;  // dimensions of input 0 only
    int64_t ins[3] = {-1, -1, -1};
    if (ref[3] < prog->dims[0]) std::memcpy(ins, prog->data.data + 24 * static_cast<uint64_t>(ref[3]), sizeof ins);
    if (ref[2] >= dims.size() || ins[0] != 1 || ins[1] < 0 || static_cast<uint64_t>(ins[1]) >= symbols.size()) {
      return bad("shape.refs row " + std::to_string(r) + " is not a dimension of input 0 bound to a symbol");
    }
    const Symbol& y = symbols[static_cast<size_t>(ins[1])];
    InputDim& d = dims[ref[2]];
    d.symbol = y.name.empty() ? "?" + std::to_string(ins[1]) : y.name;
    d.min = y.min, d.max = y.max, d.multiple_of = y.multiple_of;
    d.value = y.max;
  }
  return dims;
}

StatusOr<std::unique_ptr<Engine>> OpenOaaxEngine(const OaaxEngineOptions& options) { return OaaxEngine::Open(options); }

StatusOr<std::unique_ptr<Engine>> OpenOrtEngine(const OrtEngineOptions& options) {
  for (const std::string* p : {&options.script, &options.model_path}) {
    if (!fs::exists(*p)) return NotFound(*p + ": not found (ONNX Runtime engine; run scripts/fetch-reference.sh)");
  }
  if (!fs::exists(fs::path(options.node_path) / "onnxruntime-node")) {
    return NotFound(options.node_path + "/onnxruntime-node: not found (run scripts/fetch-reference.sh)");
  }
  return std::unique_ptr<Engine>(new OrtEngine(options));
}

}  // namespace oaaxvk::ocr

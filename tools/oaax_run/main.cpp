// oaax-run: a generic OAAX host. Loads any OAAX runtime library with dlopen,
// loads a model, sends inputs, receives outputs — as an OAAX host application
// does — and writes the outputs for comparison with a reference.
//
//   oaax-run --model model.oinf --inputs IN_DIR --outputs OUT_DIR
//            [--runtime libRuntimeLibrary.so] [--arg key=value]...
//
// IN_DIR/manifest.json: [{"name", "dtype" ("float32", "int64", ...), "shape", "file"}]
// with raw little-endian row-major data in IN_DIR/<file> (the same form
// tools/reference/ort_run.js reads and writes). OUT_DIR gets the outputs in
// the same form. Exit 0 on success, 1 on a runtime error (message on stderr),
// 2 on bad usage.
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oaax_vulkan/interface.h"

namespace {

struct DType {
  const char* name;
  tensor_data_type type;
  size_t size;
};
constexpr DType kDTypes[] = {
    {"float32", DATA_TYPE_FLOAT, 4}, {"uint8", DATA_TYPE_UINT8, 1},   {"int8", DATA_TYPE_INT8, 1},
    {"uint16", DATA_TYPE_UINT16, 2}, {"int16", DATA_TYPE_INT16, 2},   {"int32", DATA_TYPE_INT32, 4},
    {"int64", DATA_TYPE_INT64, 8},   {"bool", DATA_TYPE_BOOL, 1},     {"float64", DATA_TYPE_DOUBLE, 8},
    {"uint32", DATA_TYPE_UINT32, 4}, {"uint64", DATA_TYPE_UINT64, 8},
};
const DType* FindDType(const std::string& name) {
  for (const DType& d : kDTypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}
const DType* FindDType(tensor_data_type t) {
  for (const DType& d : kDTypes) {
    if (t == d.type) return &d;
  }
  return nullptr;
}

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

template <typename F>
bool Sym(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(h, name));
  if (*out == nullptr) std::fprintf(stderr, "oaax-run: runtime lacks symbol %s\n", name);
  return *out != nullptr;
}

int Fail(const Api& api, const char* what) {
  std::fprintf(stderr, "oaax-run: %s failed: %s\n", what, api.error ? api.error() : "?");
  return 1;
}

std::string DefaultRuntime(const char* argv0) {
  std::error_code ec;
  auto exe = std::filesystem::canonical("/proc/self/exe", ec);
  if (!ec) {
    auto candidate = exe.parent_path() / "libRuntimeLibrary.so";
    if (std::filesystem::exists(candidate)) return candidate.string();
  }
  (void)argv0;
  return "libRuntimeLibrary.so";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Generic OAAX host: run a model through any OAAX runtime library."};
  std::string runtime = DefaultRuntime(argv[0]), model, in_dir, out_dir;
  std::vector<std::string> args;
  app.add_option("--runtime", runtime, "OAAX runtime shared library (default: libRuntimeLibrary.so beside oaax-run)");
  app.add_option("--model", model, "model file for the runtime (model.oinf)")->required();
  app.add_option("--inputs", in_dir, "directory with manifest.json and raw input files")->required();
  app.add_option("--outputs", out_dir, "directory to write manifest.json and raw outputs to")->required();
  app.add_option("--arg", args, "runtime argument key=value (repeatable), e.g. --arg device=llvmpipe");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  // Inputs (validated before the runtime is touched).
  nlohmann::json manifest;
  try {
    std::ifstream in(in_dir + "/manifest.json");
    if (!in) {
      std::fprintf(stderr, "oaax-run: cannot read %s/manifest.json\n", in_dir.c_str());
      return 1;
    }
    manifest = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oaax-run: %s/manifest.json: %s\n", in_dir.c_str(), e.what());
    return 1;
  }
  if (!manifest.is_array()) {
    std::fprintf(stderr, "oaax-run: %s/manifest.json must be a JSON array\n", in_dir.c_str());
    return 1;
  }
  const size_t n = manifest.size();
  auto* t = static_cast<tensors_struct*>(std::calloc(1, sizeof(tensors_struct)));
  t->num_tensors = n;
  t->names = static_cast<char**>(std::calloc(n, sizeof(char*)));
  t->data_types = static_cast<tensor_data_type*>(std::calloc(n, sizeof(tensor_data_type)));
  t->ranks = static_cast<size_t*>(std::calloc(n, sizeof(size_t)));
  t->shapes = static_cast<size_t**>(std::calloc(n, sizeof(size_t*)));
  t->data = static_cast<void**>(std::calloc(n, sizeof(void*)));
  auto free_inputs = [&]() {
    for (size_t i = 0; i < n; ++i) {
      std::free(t->names[i]);
      std::free(t->shapes[i]);
      std::free(t->data[i]);
    }
    std::free(t->names);
    std::free(t->data_types);
    std::free(t->ranks);
    std::free(t->shapes);
    std::free(t->data);
    std::free(t);
  };
  try {
    for (size_t i = 0; i < n; ++i) {
      const auto& e = manifest[i];
      const std::string name = e.at("name"), dtype = e.at("dtype"), file = e.at("file");
      const DType* d = FindDType(dtype);
      if (d == nullptr) throw std::runtime_error("input '" + name + "': unsupported dtype " + dtype);
      const std::vector<size_t> shape = e.at("shape").get<std::vector<size_t>>();
      size_t numel = 1;
      for (size_t s : shape) numel *= s;
      std::ifstream f(in_dir + "/" + file, std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (!f.good() && !f.eof()) throw std::runtime_error("cannot read " + file);
      if (bytes.size() != numel * d->size) {
        throw std::runtime_error("input '" + name + "': " + file + " has " + std::to_string(bytes.size()) +
                                 " bytes, shape needs " + std::to_string(numel * d->size));
      }
      t->names[i] = strdup(name.c_str());
      t->data_types[i] = d->type;
      t->ranks[i] = shape.size();
      t->shapes[i] = static_cast<size_t*>(std::malloc(std::max<size_t>(1, shape.size()) * sizeof(size_t)));
      std::copy(shape.begin(), shape.end(), t->shapes[i]);
      t->data[i] = std::malloc(std::max<size_t>(1, bytes.size()));
      std::memcpy(t->data[i], bytes.data(), bytes.size());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oaax-run: %s\n", e.what());
    free_inputs();
    return 1;
  }

  Api api;
  api.handle = dlopen(runtime.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api.handle == nullptr) {
    std::fprintf(stderr, "oaax-run: cannot load runtime %s: %s\n", runtime.c_str(), dlerror());
    free_inputs();
    return 1;
  }
  if (!Sym(api.handle, "runtime_initialization_with_args", &api.init_with_args) ||
      !Sym(api.handle, "runtime_model_loading", &api.load) || !Sym(api.handle, "send_input", &api.send) ||
      !Sym(api.handle, "receive_output", &api.receive) || !Sym(api.handle, "runtime_destruction", &api.destroy) ||
      !Sym(api.handle, "runtime_error_message", &api.error) || !Sym(api.handle, "runtime_name", &api.name) ||
      !Sym(api.handle, "runtime_version", &api.version)) {
    free_inputs();
    return 1;
  }
  std::vector<std::string> keys, values;
  for (const std::string& a : args) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "oaax-run: --arg '%s' is not key=value\n", a.c_str());
      free_inputs();
      return 2;
    }
    keys.push_back(a.substr(0, eq));
    values.push_back(a.substr(eq + 1));
  }
  // Driver JIT compilation on a first run (lavapipe compiles pipelines
  // lazily; nothing is cached yet on a fresh machine) can take far longer
  // than the runtime's default bound, so a host that only wants the result
  // waits up to 5 minutes unless told otherwise.
  if (std::find(keys.begin(), keys.end(), "receive_timeout_ms") == keys.end()) {
    keys.push_back("receive_timeout_ms");
    values.push_back("300000");
  }
  std::vector<const char*> kp, vp;
  for (size_t i = 0; i < keys.size(); ++i) {
    kp.push_back(keys[i].c_str());
    vp.push_back(values[i].c_str());
  }
  if (api.init_with_args(static_cast<int>(kp.size()), kp.data(), reinterpret_cast<const void**>(vp.data())) != 0) {
    free_inputs();
    return Fail(api, "runtime_initialization_with_args");
  }
  std::fprintf(stderr, "oaax-run: %s %s\n", api.name(), api.version());
  if (api.load(model.c_str()) != 0) {
    free_inputs();
    const int rc = Fail(api, "runtime_model_loading");
    api.destroy();
    return rc;
  }
  if (api.send(t) != 0) {  // on failure the caller still owns the inputs
    free_inputs();
    const int rc = Fail(api, "send_input");
    api.destroy();
    return rc;
  }
  tensors_struct* out = nullptr;
  if (api.receive(&out) != 0) {
    const int rc = Fail(api, "receive_output");
    api.destroy();
    return rc;
  }
  std::filesystem::create_directories(out_dir);
  nlohmann::json out_manifest = nlohmann::json::array();
  int rc = 0;
  for (size_t i = 0; i < out->num_tensors; ++i) {
    const DType* d = FindDType(out->data_types[i]);
    std::vector<size_t> shape(out->shapes[i], out->shapes[i] + out->ranks[i]);
    size_t numel = 1;
    for (size_t s : shape) numel *= s;
    const std::string file = std::to_string(i) + ".bin";
    std::ofstream f(out_dir + "/" + file, std::ios::binary);
    if (d != nullptr) f.write(static_cast<const char*>(out->data[i]), static_cast<std::streamsize>(numel * d->size));
    if (d == nullptr || !f) rc = 1;
    out_manifest.push_back({{"name", out->names[i]}, {"dtype", d ? d->name : "unknown"}, {"shape", shape}, {"file", file}});
    std::printf("%s\t%s\t[", out->names[i], d ? d->name : "unknown");
    for (size_t k = 0; k < shape.size(); ++k) std::printf("%s%zu", k ? ", " : "", shape[k]);
    std::printf("]\n");
    std::free(out->names[i]);
    std::free(out->shapes[i]);
    std::free(out->data[i]);
  }
  std::free(out->names);
  std::free(out->data_types);
  std::free(out->ranks);
  std::free(out->shapes);
  std::free(out->data);
  std::free(out);
  std::ofstream(out_dir + "/manifest.json") << out_manifest.dump(1) << "\n";
  if (api.destroy() != 0) return Fail(api, "runtime_destruction");
  dlclose(api.handle);
  return rc;
}

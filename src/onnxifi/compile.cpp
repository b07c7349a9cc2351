#include "onnxifi/compile.h"

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "runtime/bundle.h"
#include "toolchain/driver/driver.h"

namespace oaaxvk::onnxifi {
namespace {

constexpr int64_t kMinIrVersion = 3;
// Compiled bundles kept by the cache (least recently used evicted first) and
// their total byte budget.
constexpr size_t kCacheEntries = 32;
constexpr size_t kCacheBytes = size_t{1} << 30;

bool Contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

int64_t MaxDefaultOpset() {
  const auto& m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = m.find("");
  return it == m.end() ? 0 : it->second.second;
}

// The toolchain compiles one model at a time in this process: compilation is
// CPU-bound and the toolchain's symbol contexts are per thread, but the
// onnx library's schema registry and protobuf are shared.
std::mutex g_compile_mu;

struct Cache {
  std::mutex mu;
  std::list<std::shared_ptr<const CompiledModel>> lru;  // most recently used first
  size_t bytes = 0;
  uint64_t hits = 0, misses = 0;
};
Cache& GetCache() {
  static Cache* c = new Cache;  // never destroyed: graphs may outlive static destruction order
  return *c;
}

std::shared_ptr<const CompiledModel> CacheFind(const std::string& key) {
  Cache& c = GetCache();
  std::lock_guard<std::mutex> lk(c.mu);
  for (auto it = c.lru.begin(); it != c.lru.end(); ++it) {
    if ((*it)->key != key) continue;
    auto hit = *it;
    c.lru.erase(it);
    c.lru.push_front(hit);
    ++c.hits;
    return hit;
  }
  ++c.misses;
  return nullptr;
}

void CacheInsert(std::shared_ptr<const CompiledModel> m) {
  Cache& c = GetCache();
  std::lock_guard<std::mutex> lk(c.mu);
  for (const auto& e : c.lru)
    if (e->key == m->key) return;
  c.bytes += m->bundle.size();
  c.lru.push_front(std::move(m));
  while (c.lru.size() > 1 && (c.lru.size() > kCacheEntries || c.bytes > kCacheBytes)) {
    c.bytes -= c.lru.back()->bundle.size();
    c.lru.pop_back();
  }
}

Result Fail(onnxStatus s, std::string m) { return Result{s, std::move(m)}; }

Result FromStatus(const Status& s, const char* what) {
  return Fail(StatusFor(s), std::string(what) + ": " + s.ToString());
}

// The conversion `oaax-vulkan-toolchain MODEL OUT/` performs (the same
// driver function, in process): import, run-time value symbols and dynamic
// shapes where the model needs them, passes, lowering, plan, bundle. It
// works on files, so the model goes through a private temporary directory,
// removed afterwards. On failure the status is the conversion log's
// "Technical Error" ("<code name>: <message>").
struct Conversion {
  Status status;
  std::vector<uint8_t> bundle;
};

Status StatusFromText(const std::string& text) {
  for (int c = static_cast<int>(StatusCode::kInvalidArgument); c <= static_cast<int>(StatusCode::kInternal); ++c) {
    const std::string name = StatusCodeName(static_cast<StatusCode>(c));
    if (text.rfind(name + ": ", 0) == 0) return Status(static_cast<StatusCode>(c), text.substr(name.size() + 2));
  }
  return Internal(text);
}

Conversion Convert(const std::string& model) {
  namespace fs = std::filesystem;
  Conversion r;
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/onnxifi-vulkan-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    r.status = ResourceExhausted("cannot create a temporary directory for the conversion in '" + tmpl + "'");
    return r;
  }
  const fs::path dir(tmpl);
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    f.write(model.data(), static_cast<std::streamsize>(model.size()));
    if (!f) r.status = ResourceExhausted("cannot write the model into '" + tmpl + "'");
  }
  if (r.status.ok()) {
    const int rc = toolchain::RunConversion((dir / "model.onnx").string(), (dir / "out").string(), nullptr);
    if (rc == 0) {
      std::ifstream f(dir / "out" / "model.oinf", std::ios::binary);
      r.bundle.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      if (r.bundle.empty()) r.status = Internal("the conversion wrote no bundle");
    } else {
      r.status = Internal("the conversion failed without a log");
      std::ifstream f(dir / "out" / "conversion-log.json");
      nlohmann::json log = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
      if (log.is_array())
        for (const auto& e : log)
          if (e.value("Message", "") == "Conversion Failed" && e.contains("Data"))
            r.status = StatusFromText(e["Data"].value("Technical Error", std::string("unknown failure")));
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

// Whether the bundle has outputs whose extent only the device knows (Compress,
// NonZero: feature data_dependent_outputs).
bool HasDataDependentOutputs(const std::vector<uint8_t>& bundle) {
  StatusOr<oinf::File> file = oinf::File::FromMemory(bundle.data(), bundle.size());
  if (!file.ok()) return false;
  StatusOr<runtime::Bundle> b = runtime::ParseBundle(std::move(*file), "<onnxifi graph>");
  return b.ok() && b->features.count("data_dependent_outputs") > 0;
}

constexpr const char* kVariableOutputs =
    "an output's extent is known only after the run (data-dependent outputs); ONNXIFI output descriptors "
    "have fixed shapes and this backend does not offer VARIABLE_SIZE_OUTPUTS";

// The bundle of `bytes` for `device_key`, from the cache or converted (and
// then cached).
Result Compile(const std::string& bytes, const std::string& device_key, std::shared_ptr<const CompiledModel>* out,
               bool* from_cache) {
  const std::string key =
      toolchain::Sha256Hex(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) + "|" + device_key;
  *from_cache = false;
  if (auto hit = CacheFind(key)) {
    *out = std::move(hit);
    *from_cache = true;
    return {};
  }
  const auto t0 = std::chrono::steady_clock::now();
  Conversion c;
  {
    std::lock_guard<std::mutex> lk(g_compile_mu);
    c = Convert(bytes);
  }
  if (!c.status.ok()) return FromStatus(c.status, "conversion");
  if (HasDataDependentOutputs(c.bundle)) return Fail(ONNXIFI_STATUS_UNSUPPORTED_SHAPE, kVariableOutputs);
  auto m = std::make_shared<CompiledModel>();
  m->key = key;
  m->bundle = std::move(c.bundle);
  m->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CacheInsert(m);
  *out = std::move(m);
  return {};
}

// IR and default-domain opset versions the backend accepts.
Result CheckVersions(const onnx::ModelProto& model) {
  if (model.ir_version() < kMinIrVersion || model.ir_version() > onnx::IR_VERSION)
    return Fail(ONNXIFI_STATUS_UNSUPPORTED_VERSION,
                StrFormat("ONNX IR version %lld is not supported (supported: %s)",
                          static_cast<long long>(model.ir_version()), SupportedIrVersions().c_str()));
  const int64_t max_opset = MaxDefaultOpset();
  for (const auto& os : model.opset_import())
    if ((os.domain().empty() || os.domain() == "ai.onnx") && os.version() > max_opset)
      return Fail(ONNXIFI_STATUS_UNSUPPORTED_VERSION,
                  StrFormat("opset ai.onnx:%lld is not supported (supported: up to %lld)",
                            static_cast<long long>(os.version()), static_cast<long long>(max_opset)));
  return {};
}

std::vector<int64_t> DescriptorShape(const onnxTensorDescriptorV1& d) {
  std::vector<int64_t> v;
  for (uint32_t i = 0; i < d.dimensions; ++i) v.push_back(static_cast<int64_t>(d.shape[i]));
  return v;
}

std::string ShapeText(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Merges the weight descriptors into `model`.
Result ApplyWeights(onnx::ModelProto* model, uint32_t count, const onnxTensorDescriptorV1* weights) {
  if (count == 0) return {};
  if (weights == nullptr) return Fail(ONNXIFI_STATUS_INVALID_POINTER, "weightDescriptors is NULL while weightsCount is non-zero");
  onnx::GraphProto* g = model->mutable_graph();
  std::map<std::string, int> initializer;
  for (int i = 0; i < g->initializer_size(); ++i) initializer[g->initializer(i).name()] = i;
  std::map<std::string, const onnx::ValueInfoProto*> inputs;
  for (const auto& vi : g->input()) inputs[vi.name()] = &vi;
  std::set<std::string> seen;
  for (uint32_t k = 0; k < count; ++k) {
    const onnxTensorDescriptorV1& d = weights[k];
    const std::string what = StrFormat("weightDescriptors[%u]", k);
    Result r = CheckDescriptor(d, what.c_str());
    if (!r.ok()) return r;
    const std::string name = d.name;
    if (!seen.insert(name).second)
      return Fail(ONNXIFI_STATUS_INVALID_NAME, what + ": weight '" + name + "' is described more than once");
    const std::vector<int64_t> shape = DescriptorShape(d);
    uint64_t numel = 1;
    for (int64_t v : shape) numel *= static_cast<uint64_t>(v);
    const uint64_t nbytes = numel * DataTypeSize(d.dataType);
    onnx::TensorProto* t = nullptr;
    auto it = initializer.find(name);
    if (it != initializer.end()) {
      t = g->mutable_initializer(it->second);
      if (static_cast<onnxEnum>(t->data_type()) != d.dataType)
        return Fail(ONNXIFI_STATUS_MISMATCHING_DATATYPE,
                    StrFormat("%s: weight '%s' has data type %llu, the model's initializer %d", what.c_str(),
                              name.c_str(), static_cast<unsigned long long>(d.dataType), t->data_type()));
      std::vector<int64_t> dims(t->dims().begin(), t->dims().end());
      if (dims != shape)
        return Fail(ONNXIFI_STATUS_MISMATCHING_SHAPE, what + ": weight '" + name + "' has shape " + ShapeText(shape) +
                                                          ", the model's initializer " + ShapeText(dims));
    } else {
      auto in = inputs.find(name);
      if (in == inputs.end())
        return Fail(ONNXIFI_STATUS_INVALID_NAME,
                    what + ": '" + name + "' is neither an initializer nor an input of the graph");
      const auto& type = in->second->type();
      if (!type.has_tensor_type())
        return Fail(ONNXIFI_STATUS_MISMATCHING_DATATYPE, what + ": graph input '" + name + "' is not a tensor");
      const auto& tt = type.tensor_type();
      if (static_cast<onnxEnum>(tt.elem_type()) != d.dataType)
        return Fail(ONNXIFI_STATUS_MISMATCHING_DATATYPE,
                    StrFormat("%s: weight '%s' has data type %llu, the graph input %d", what.c_str(), name.c_str(),
                              static_cast<unsigned long long>(d.dataType), tt.elem_type()));
      if (tt.has_shape()) {
        bool match = tt.shape().dim_size() == static_cast<int>(shape.size());
        for (int i = 0; match && i < tt.shape().dim_size(); ++i)
          if (tt.shape().dim(i).has_dim_value() && tt.shape().dim(i).dim_value() != shape[static_cast<size_t>(i)])
            match = false;
        if (!match)
          return Fail(ONNXIFI_STATUS_MISMATCHING_SHAPE,
                      what + ": weight '" + name + "' has shape " + ShapeText(shape) + ", unlike the graph input's");
      }
      t = g->add_initializer();
      initializer[name] = g->initializer_size() - 1;
      t->set_name(name);
      t->set_data_type(static_cast<int32_t>(d.dataType));
      for (int64_t v : shape) t->add_dims(v);
    }
    // The descriptor's bytes become the initializer's raw data.
    onnx::TensorProto fresh;
    fresh.set_name(t->name());
    fresh.set_data_type(t->data_type());
    for (int64_t v : shape) fresh.add_dims(v);
    fresh.set_raw_data(std::string(reinterpret_cast<const char*>(d.buffer), static_cast<size_t>(nbytes)));
    *t = std::move(fresh);
  }
  return {};
}

}  // namespace

size_t DataTypeSize(onnxEnum dtype) {
  switch (dtype) {
    case ONNXIFI_DATATYPE_FLOAT16: return 2;
    case ONNXIFI_DATATYPE_FLOAT32: return 4;
    case ONNXIFI_DATATYPE_FLOAT64: return 8;
    case ONNXIFI_DATATYPE_INT8: return 1;
    case ONNXIFI_DATATYPE_INT16: return 2;
    case ONNXIFI_DATATYPE_INT32: return 4;
    case ONNXIFI_DATATYPE_INT64: return 8;
    case ONNXIFI_DATATYPE_UINT8: return 1;
    case ONNXIFI_DATATYPE_UINT16: return 2;
    case ONNXIFI_DATATYPE_UINT32: return 4;
    case ONNXIFI_DATATYPE_UINT64: return 8;
    case ONNXIFI_DATATYPE_BFLOAT16: return 2;
    case 9: return 1;  // BOOL (the ONNX code): an extension, one byte 0/1 per element
    default: return 0;  // UNDEFINED, COMPLEX64/128 (never supported), unknown codes
  }
}

Result CheckDescriptor(const onnxTensorDescriptorV1& d, const char* what) {
  if (d.tag != ONNXIFI_TAG_TENSOR_DESCRIPTOR_V1)
    return Fail(ONNXIFI_STATUS_UNSUPPORTED_TAG, StrFormat("%s: tag 0x%08X is not ONNXIFI_TAG_TENSOR_DESCRIPTOR_V1", what,
                                                          static_cast<unsigned>(d.tag)));
  if (d.name == nullptr) return Fail(ONNXIFI_STATUS_INVALID_NAME, std::string(what) + ": name is NULL");
  const std::string name = d.name;
  if (d.memoryType != ONNXIFI_MEMORY_TYPE_CPU) {
    const bool known = d.memoryType == ONNXIFI_MEMORY_TYPE_CUDA_BUFFER || d.memoryType == ONNXIFI_MEMORY_TYPE_OPENCL_BUFFER ||
                       d.memoryType == ONNXIFI_MEMORY_TYPE_OPENGLES_TEXTURE_2D ||
                       d.memoryType == ONNXIFI_MEMORY_TYPE_D3D_RESOURCE;
    return Fail(known ? ONNXIFI_STATUS_UNSUPPORTED_MEMORY_TYPE : ONNXIFI_STATUS_INVALID_MEMORY_TYPE,
                StrFormat("%s '%s': memory type %llu (%s); only ONNXIFI_MEMORY_TYPE_CPU is supported", what, name.c_str(),
                          static_cast<unsigned long long>(d.memoryType), known ? "not supported" : "unknown"));
  }
  if (d.buffer == 0)
    return Fail(ONNXIFI_STATUS_INVALID_MEMORY_LOCATION, std::string(what) + " '" + name + "': buffer is NULL");
  if (DataTypeSize(d.dataType) == 0)
    return Fail(ONNXIFI_STATUS_INVALID_DATATYPE, StrFormat("%s '%s': data type %llu is unknown to this backend", what,
                                                           name.c_str(), static_cast<unsigned long long>(d.dataType)));
  if (d.dimensions > 0 && d.shape == nullptr)
    return Fail(ONNXIFI_STATUS_INVALID_POINTER,
                StrFormat("%s '%s': shape is NULL with %u dimensions", what, name.c_str(), d.dimensions));
  for (uint32_t i = 0; i < d.dimensions; ++i)
    if (d.shape[i] == 0)
      return Fail(ONNXIFI_STATUS_INVALID_SHAPE, StrFormat("%s '%s': dimension %u is 0", what, name.c_str(), i));
  return {};
}

namespace {

// Which UNSUPPORTED_* code a toolchain refusal of a valid model means, from
// the words its message uses (the toolchain names the node, the tensor and
// what it lacks).
onnxStatus UnsupportedKind(const std::string& m) {
  if (Contains(m, "unsupported operator node")) return ONNXIFI_STATUS_UNSUPPORTED_OPERATOR;
  if (Contains(m, "opset") || Contains(m, "IR version")) return ONNXIFI_STATUS_UNSUPPORTED_VERSION;
  if (Contains(m, "compile-time constant") || Contains(m, "dynamic shapes") || Contains(m, "is symbolic") ||
      Contains(m, "has no shape"))
    return ONNXIFI_STATUS_UNSUPPORTED_SHAPE;
  if (Contains(m, "data type") || Contains(m, "dtype") || Contains(m, "does not fit in int32") ||
      Contains(m, "not a tensor"))
    return ONNXIFI_STATUS_UNSUPPORTED_DATATYPE;
  if (Contains(m, "attribute") || Contains(m, "auto_pad") || Contains(m, "mode "))
    return ONNXIFI_STATUS_UNSUPPORTED_ATTRIBUTE;
  if (Contains(m, "shape") || Contains(m, "rank") || Contains(m, "elements") || Contains(m, "empty") ||
      Contains(m, "dimension") || Contains(m, "extent"))
    return ONNXIFI_STATUS_UNSUPPORTED_SHAPE;
  return ONNXIFI_STATUS_UNSUPPORTED_OPERATOR;  // the operator in this configuration
}

}  // namespace

onnxStatus StatusFor(const Status& s) {
  const std::string& m = s.message();
  switch (s.code()) {
    case StatusCode::kOk: return ONNXIFI_STATUS_SUCCESS;
    case StatusCode::kDataLoss:
      return Contains(m, "protobuf could not be parsed") ? ONNXIFI_STATUS_INVALID_PROTOBUF : ONNXIFI_STATUS_INVALID_MODEL;
    case StatusCode::kUnimplemented: return UnsupportedKind(m);
    case StatusCode::kInvalidArgument:
      // ONNX's own checks failed: the model is invalid (or newer than ONNX 1.12).
      if (Contains(m, "checker rejected") || Contains(m, "shape inference failed"))
        return Contains(m, "opset") || Contains(m, "IR version") ? ONNXIFI_STATUS_UNSUPPORTED_VERSION
                                                                 : ONNXIFI_STATUS_INVALID_MODEL;
      // A model ONNX accepts that the toolchain cannot take as it is.
      return UnsupportedKind(m);
    case StatusCode::kNotFound: return ONNXIFI_STATUS_INVALID_MODEL;
    case StatusCode::kResourceExhausted:
      return Contains(m, "device") ? ONNXIFI_STATUS_NO_DEVICE_MEMORY : ONNXIFI_STATUS_NO_SYSTEM_MEMORY;
    case StatusCode::kUnavailable: return ONNXIFI_STATUS_BACKEND_UNAVAILABLE;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kInternal: return ONNXIFI_STATUS_INTERNAL_ERROR;
  }
  return ONNXIFI_STATUS_INTERNAL_ERROR;
}

std::string SupportedIrVersions() {
  std::string s;
  for (int64_t v = kMinIrVersion; v <= onnx::IR_VERSION; ++v) s += (s.empty() ? "" : " ") + std::to_string(v);
  return s;
}

std::string SupportedOpsets() { return "ai.onnx:" + std::to_string(MaxDefaultOpset()); }

Result CheckCompatibility(const void* model, size_t size, const std::string& device_key) {
  if (model == nullptr) return Fail(ONNXIFI_STATUS_INVALID_POINTER, "onnxModel is NULL");
  if (size == 0) return Fail(ONNXIFI_STATUS_INVALID_SIZE, "onnxModelSize is 0");
  const std::string bytes(static_cast<const char*>(model), size);
  {
    onnx::ModelProto proto;
    if (!proto.ParseFromString(bytes))
      return Fail(ONNXIFI_STATUS_INVALID_PROTOBUF, "the model bytes are not a serialized ONNX ModelProto");
    Result v = CheckVersions(proto);
    if (!v.ok()) return v;
  }
  // The full conversion: what onnxInitGraph will run, whose bundle it then
  // finds in the cache.
  std::shared_ptr<const CompiledModel> compiled;
  bool from_cache = false;
  return Compile(bytes, device_key, &compiled, &from_cache);
}

Result CompileModel(const void* model, size_t size, uint32_t weights_count, const onnxTensorDescriptorV1* weights,
                    const std::string& device_key, std::shared_ptr<const CompiledModel>* out, bool* from_cache) {
  if (model == nullptr) return Fail(ONNXIFI_STATUS_INVALID_POINTER, "onnxModel is NULL");
  if (size == 0) return Fail(ONNXIFI_STATUS_INVALID_SIZE, "onnxModelSize is 0");
  if (weights_count > 0 && weights == nullptr)
    return Fail(ONNXIFI_STATUS_INVALID_POINTER, "weightDescriptors is NULL while weightsCount is non-zero");
  std::string bytes(static_cast<const char*>(model), size);
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes))
    return Fail(ONNXIFI_STATUS_INVALID_PROTOBUF, "the model bytes are not a serialized ONNX ModelProto");
  Result v = CheckVersions(proto);
  if (!v.ok()) return v;
  if (weights_count > 0) {
    Result w = ApplyWeights(&proto, weights_count, weights);
    if (!w.ok()) return w;
    bytes.clear();
    if (!proto.SerializeToString(&bytes))
      return Fail(ONNXIFI_STATUS_INTERNAL_ERROR, "could not serialize the model with its weights");
  }
  return Compile(bytes, device_key, out, from_cache);
}

CacheStats GetCacheStats() {
  Cache& c = GetCache();
  std::lock_guard<std::mutex> lk(c.mu);
  return CacheStats{c.hits, c.misses, c.lru.size()};
}

}  // namespace oaaxvk::onnxifi

// libonnxifi-vulkan.so: the 15 core ONNXIFI functions of ONNX 1.12's
// onnx/onnxifi.h on this project's toolchain (compilation in process) and
// runtime executor (Vulkan). See docs/onnxifi.md.
//
// Handles: every handle a function returns is the address of an object kept
// in a process-wide registry; each function first looks its handle up there
// (a handle that is not live gives INVALID_ID / _BACKEND / _EVENT / _GRAPH).
// Objects are reference-counted, so a run in flight keeps its events alive
// even when the client releases them early.
//
// Threading: every function may be called from any thread at any time
// (capability ONNXIFI_CAPABILITY_THREAD_SAFE). Runs of one graph execute one
// after another, in the order their input events allow; graphs run
// concurrently (queue submissions of one backend are serialized).
#include <onnx/onnxifi.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "oaax_vulkan/tensors_util.h"
#include "onnxifi/compile.h"
#include "runtime/bundle.h"
#include "runtime/executor.h"
#include "runtime/log.h"
#include "runtime/vk_context.h"

#define ONNXIFI_EXPORT extern "C" __attribute__((visibility("default")))

namespace oaaxvk::onnxifi {
namespace {

using runtime::LogLevel;

constexpr const char* kBackendName = "oaax-vulkan";
constexpr const char* kVendor = "oaax-vulkan project";
// Bound of every wait for the device during a run (the executor's
// receive_timeout_ms): large, since a CPU Vulkan driver may take long for a
// big model, but still a bound.
constexpr uint64_t kRunTimeoutMs = 10 * 60 * 1000;

// ---------------------------------------------------------------- logging --

std::once_flag g_log_once;
void InitLog() {
  std::call_once(g_log_once, [] {
    LogLevel level = LogLevel::kWarn;
    if (const char* v = std::getenv("OAAXVK_ONNXIFI_LOG_LEVEL")) {
      if (v[0] >= '0' && v[0] <= '6' && v[1] == '\0') level = static_cast<LogLevel>(v[0] - '0');
    }
    const char* file = std::getenv("OAAXVK_ONNXIFI_LOG_FILE");
    (void)runtime::ConfigureLog(level, file ? file : "");
  });
}

onnxStatus Report(LogLevel level, const char* function, const Result& r) {
  if (!r.ok()) runtime::Log(level, std::string(function) + ": " + r.message);
  return r.status;
}
onnxStatus Report(const char* function, const Result& r) { return Report(LogLevel::kWarn, function, r); }

// --------------------------------------------------------------- devices --

struct DeviceInfo {
  uint32_t index = 0;  // in vkEnumeratePhysicalDevices order (the runtime's `device` index)
  std::string name;
  bool cpu = false;
  uint32_t vendor_id = 0, device_id = 0;
  uint64_t memory_bytes = 0;     // device-local heaps
  uint64_t max_allocation = 0;   // maxMemoryAllocationSize
  uint64_t max_storage_range = 0;
};

// The Vulkan 1.1 devices with a compute queue, enumerated once per process.
const std::vector<DeviceInfo>& Devices() {
  static std::vector<DeviceInfo>* devices = [] {
    auto* list = new std::vector<DeviceInfo>;
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "onnxifi-vulkan";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;
    VkResult r = vkCreateInstance(&ici, nullptr, &instance);
    if (r != VK_SUCCESS) {
      runtime::Log(LogLevel::kWarn, std::string("onnxGetBackendIDs: vkCreateInstance failed: ") +
                                        runtime::VkResultName(r) + "; no backend is available");
      return list;
    }
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> phys(n);
    if (n) vkEnumeratePhysicalDevices(instance, &n, phys.data());
    for (uint32_t i = 0; i < n; ++i) {
      VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
      VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
      p2.pNext = &m3;
      VkPhysicalDeviceProperties props;
      vkGetPhysicalDeviceProperties(phys[i], &props);
      if (props.apiVersion < VK_API_VERSION_1_1) continue;
      vkGetPhysicalDeviceProperties2(phys[i], &p2);
      uint32_t qn = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(phys[i], &qn, nullptr);
      std::vector<VkQueueFamilyProperties> qf(qn);
      if (qn) vkGetPhysicalDeviceQueueFamilyProperties(phys[i], &qn, qf.data());
      bool compute = std::any_of(qf.begin(), qf.end(), [](const VkQueueFamilyProperties& q) {
        return (q.queueFlags & VK_QUEUE_COMPUTE_BIT) != 0;
      });
      if (!compute) continue;
      VkPhysicalDeviceMemoryProperties mem;
      vkGetPhysicalDeviceMemoryProperties(phys[i], &mem);
      DeviceInfo d;
      d.index = i;
      d.name = props.deviceName;
      d.cpu = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
      d.vendor_id = props.vendorID;
      d.device_id = props.deviceID;
      for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
        if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) d.memory_bytes += mem.memoryHeaps[h].size;
      d.max_allocation = m3.maxMemoryAllocationSize;
      d.max_storage_range = props.limits.maxStorageBufferRange;
      list->push_back(std::move(d));
    }
    vkDestroyInstance(instance, nullptr);
    return list;
  }();
  return *devices;
}

// The compiled-bundle cache's device part of the key.
std::string DeviceKey(const DeviceInfo& d) { return std::to_string(d.index) + ":" + d.name; }

// ----------------------------------------------------------------- objects --

struct BackendId {
  DeviceInfo device;
};

struct Event {
  std::mutex mu;
  std::condition_variable cv;
  bool signalled = false;
  onnxStatus status = ONNXIFI_STATUS_SUCCESS;  // the run's status (output events)

  // Returns false when already signalled. Notifies while holding the lock, so
  // no waiter can return (and release the event) before notify_all is done.
  bool Signal(onnxStatus s) {
    std::lock_guard<std::mutex> lk(mu);
    if (signalled) return false;
    signalled = true;
    status = s;
    cv.notify_all();
    return true;
  }
  onnxStatus Wait() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return signalled; });
    return status;
  }
  bool IsSignalled() {
    std::lock_guard<std::mutex> lk(mu);
    return signalled;
  }
};

struct Backend {
  DeviceInfo device;
  std::unique_ptr<runtime::VkContext> ctx;
  // Serializes queue submissions (and device-wide waits) of the executors of
  // this backend's graphs, which share one VkQueue.
  std::mutex submit_mu;
  ~Backend() {
    std::lock_guard<std::mutex> lk(submit_mu);
    ctx.reset();
  }
};

// One input or output binding of onnxSetGraphIO, deep-copied.
struct Binding {
  std::string name;
  onnxEnum dtype = 0;
  std::vector<uint64_t> shape;
  uint8_t* buffer = nullptr;  // the client's memory
  uint64_t nbytes = 0;
};
struct IoSet {
  std::vector<Binding> inputs, outputs;
};

struct Graph {
  std::shared_ptr<Backend> backend;
  std::shared_ptr<const CompiledModel> model;  // the bundle bytes the executor's Bundle points into
  std::unique_ptr<runtime::Executor> exec;
  std::vector<const runtime::IoDesc*> inputs, outputs;  // the bundle's client-visible I/O
  bool dynamic = false;  // feature dynamic_shapes: shapes follow the inputs' values

  std::mutex mu;  // guards io, in_flight, workers, finished
  std::condition_variable cv;
  std::shared_ptr<const IoSet> io;  // the current bindings (nullptr: none, or the last onnxSetGraphIO failed)
  int in_flight = 0;
  uint64_t next_run = 0;
  std::map<uint64_t, std::thread> workers;
  std::vector<uint64_t> finished;  // workers that are about to exit (joined by the next call)

  std::mutex exec_mu;  // one run at a time through the executor (send then receive)

  // Joins the workers that finished (mu held by the caller through `lk`).
  void Reap(std::unique_lock<std::mutex>& lk) {
    std::vector<std::thread> done;
    for (uint64_t id : finished) {
      auto it = workers.find(id);
      if (it == workers.end()) continue;
      done.push_back(std::move(it->second));
      workers.erase(it);
    }
    finished.clear();
    lk.unlock();
    for (std::thread& t : done) t.join();
    lk.lock();
  }

  ~Graph() {
    if (exec) {
      std::lock_guard<std::mutex> lk(backend->submit_mu);  // the destructor waits for the device
      exec.reset();
    }
  }
};

// Process-wide registries of live handles.
struct Registry {
  std::mutex mu;
  std::map<const void*, std::shared_ptr<BackendId>> ids;
  std::map<const void*, std::shared_ptr<Backend>> backends;
  std::map<const void*, std::shared_ptr<Event>> events;
  std::map<const void*, std::shared_ptr<Graph>> graphs;
};
Registry& Reg() {
  static Registry* r = new Registry;  // never destroyed: worker threads may outlive static destruction
  return *r;
}

template <typename T>
std::shared_ptr<T> Find(std::map<const void*, std::shared_ptr<T>>& m, const void* handle) {
  std::lock_guard<std::mutex> lk(Reg().mu);
  auto it = m.find(handle);
  return it == m.end() ? nullptr : it->second;
}
template <typename T>
std::shared_ptr<T> Take(std::map<const void*, std::shared_ptr<T>>& m, const void* handle) {
  std::lock_guard<std::mutex> lk(Reg().mu);
  auto it = m.find(handle);
  if (it == m.end()) return nullptr;
  std::shared_ptr<T> p = std::move(it->second);
  m.erase(it);
  return p;
}
template <typename T>
const void* Register(std::map<const void*, std::shared_ptr<T>>& m, std::shared_ptr<T> p) {
  const void* h = p.get();
  std::lock_guard<std::mutex> lk(Reg().mu);
  m[h] = std::move(p);
  return h;
}

// Runs `body` and turns exceptions into status codes (none crosses the ABI).
template <typename F>
onnxStatus Guard(const char* function, F&& body) {
  try {
    InitLog();
    return body();
  } catch (const std::bad_alloc&) {
    return Report(function, Result{ONNXIFI_STATUS_NO_SYSTEM_MEMORY, "out of host memory"});
  } catch (const std::exception& e) {
    return Report(function, Result{ONNXIFI_STATUS_INTERNAL_ERROR, std::string("unexpected exception: ") + e.what()});
  } catch (...) {
    return Report(function, Result{ONNXIFI_STATUS_INTERNAL_ERROR, "unexpected exception"});
  }
}

// ------------------------------------------------------------- info values --

onnxStatus PutBytes(const void* value, size_t n, void* out, size_t* out_size) {
  const size_t room = *out_size;
  *out_size = n;
  if (out == nullptr || room < n) return ONNXIFI_STATUS_FALLBACK;
  std::memcpy(out, value, n);
  return ONNXIFI_STATUS_SUCCESS;
}
onnxStatus PutString(const std::string& s, void* out, size_t* out_size) {
  return PutBytes(s.c_str(), s.size() + 1, out, out_size);
}
onnxStatus PutU64(uint64_t v, void* out, size_t* out_size) { return PutBytes(&v, sizeof v, out, out_size); }

// ---------------------------------------------------------------- run path --

onnxStatus RunStatusFor(const Status& s) {
  const std::string& m = s.message();
  switch (s.code()) {
    case StatusCode::kOk: return ONNXIFI_STATUS_SUCCESS;
    case StatusCode::kInvalidArgument:
      if (m.find("shape") != std::string::npos || m.find("dimension") != std::string::npos)
        return ONNXIFI_STATUS_MISMATCHING_SHAPE;
      if (m.find("type") != std::string::npos) return ONNXIFI_STATUS_MISMATCHING_DATATYPE;
      // A value the device cannot represent (e.g. int64 outside int32) or
      // outside the range an operator accepts.
      return ONNXIFI_STATUS_UNSUPPORTED_DATATYPE;
    case StatusCode::kResourceExhausted:
      return m.find("host") != std::string::npos ? ONNXIFI_STATUS_NO_SYSTEM_MEMORY : ONNXIFI_STATUS_NO_DEVICE_MEMORY;
    case StatusCode::kUnavailable: return ONNXIFI_STATUS_BACKEND_UNAVAILABLE;
    default: return ONNXIFI_STATUS_INTERNAL_ERROR;
  }
}

// One inference with the bindings `io`: copy in, submit, wait for the fence,
// copy out (the caller holds graph->exec_mu).
Result Execute(Graph* graph, const IoSet& io) {
  tensors_struct* in = AllocTensors(io.inputs.size());
  if (in == nullptr) return Result{ONNXIFI_STATUS_NO_SYSTEM_MEMORY, "out of host memory for the inputs"};
  for (size_t i = 0; i < io.inputs.size(); ++i) {
    const Binding& b = io.inputs[i];
    if (!SetTensor(in, i, b.name.c_str(), static_cast<tensor_data_type>(b.dtype), b.shape.data(), b.shape.size(),
                   b.buffer, static_cast<size_t>(b.nbytes))) {
      FreeTensors(in);
      return Result{ONNXIFI_STATUS_NO_SYSTEM_MEMORY, "out of host memory for the inputs"};
    }
  }
  Status sent;
  {
    std::lock_guard<std::mutex> lk(graph->backend->submit_mu);
    sent = graph->exec->Send(in);  // frees `in` on success
  }
  if (!sent.ok()) {
    FreeTensors(in);
    return Result{RunStatusFor(sent), "send: " + sent.ToString()};
  }
  StatusOr<tensors_struct*> got = graph->exec->Receive();
  if (!got.ok()) return Result{RunStatusFor(got.status()), "receive: " + got.status().ToString()};
  tensors_struct* out = *got;
  Result r;
  for (const Binding& b : io.outputs) {
    size_t k = 0;
    while (k < out->num_tensors && b.name != out->names[k]) ++k;
    if (k == out->num_tensors) {
      r = Result{ONNXIFI_STATUS_INTERNAL_ERROR, "output '" + b.name + "' is missing from the executor's results"};
      break;
    }
    bool same = out->ranks[k] == b.shape.size();
    for (size_t a = 0; same && a < b.shape.size(); ++a) same = out->shapes[k][a] == b.shape[a];
    if (!same) {
      std::string actual;
      for (size_t a = 0; a < out->ranks[k]; ++a) actual += (a ? "x" : "") + std::to_string(out->shapes[k][a]);
      r = Result{ONNXIFI_STATUS_MISMATCHING_SHAPE,
                 "output '" + b.name + "' came out with shape [" + actual + "], unlike its descriptor"};
      break;
    }
    std::memcpy(b.buffer, out->data[k], static_cast<size_t>(b.nbytes));
  }
  FreeTensors(out);
  return r;
}

void Worker(Graph* graph, uint64_t id, std::shared_ptr<const IoSet> io, std::shared_ptr<Event> input,
            std::shared_ptr<Event> output) {
  // The input event is the client's; its status is SUCCESS unless it is an
  // output event of an earlier run passed along, whose failure this run inherits.
  onnxStatus in_status = input->Wait();
  input.reset();
  Result r;
  if (in_status != ONNXIFI_STATUS_SUCCESS) {
    r = Result{in_status, "the input event carries a failed status"};
  } else {
    try {
      std::lock_guard<std::mutex> lk(graph->exec_mu);
      r = Execute(graph, *io);
    } catch (const std::bad_alloc&) {
      r = Result{ONNXIFI_STATUS_NO_SYSTEM_MEMORY, "out of host memory"};
    } catch (const std::exception& e) {
      r = Result{ONNXIFI_STATUS_INTERNAL_ERROR, std::string("unexpected exception: ") + e.what()};
    }
  }
  if (!r.ok()) Report("onnxRunGraph (run)", r);
  output->Signal(r.status);
  output.reset();
  std::lock_guard<std::mutex> lk(graph->mu);
  --graph->in_flight;
  graph->finished.push_back(id);
  graph->cv.notify_all();
}

Result ParseBackendProperties(const uint64_t* props) {
  if (props == nullptr) return {};
  for (size_t i = 0; props[i] != ONNXIFI_BACKEND_PROPERTY_NONE; i += 2) {
    const uint64_t key = props[i], value = props[i + 1];
    if (key == ONNXIFI_BACKEND_PROPERTY_OPTIMIZATION) {
      if (value > ONNXIFI_OPTIMIZATION_LOW_DELAY)
        return Result{ONNXIFI_STATUS_INVALID_PROPERTY,
                      StrFormat("ONNXIFI_BACKEND_PROPERTY_OPTIMIZATION value %llu is unknown",
                                static_cast<unsigned long long>(value))};
      // Every optimization goal gets the same compilation.
    } else if (key == ONNXIFI_BACKEND_PROPERTY_LOG_LEVEL) {
      LogLevel level;
      switch (value) {
        case ONNXIFI_LOG_LEVEL_ERROR: level = LogLevel::kError; break;
        case ONNXIFI_LOG_LEVEL_WARNING: level = LogLevel::kWarn; break;
        case ONNXIFI_LOG_LEVEL_INFO: level = LogLevel::kInfo; break;
        case ONNXIFI_LOG_LEVEL_DEBUG: level = LogLevel::kDebug; break;
        default:
          return Result{ONNXIFI_STATUS_INVALID_PROPERTY,
                        StrFormat("ONNXIFI_BACKEND_PROPERTY_LOG_LEVEL value %llu is unknown",
                                  static_cast<unsigned long long>(value))};
      }
      const char* file = std::getenv("OAAXVK_ONNXIFI_LOG_FILE");
      (void)runtime::ConfigureLog(level, file ? file : "");
    } else {
      return Result{ONNXIFI_STATUS_UNSUPPORTED_PROPERTY,
                    StrFormat("backend property %llu is not supported", static_cast<unsigned long long>(key))};
    }
  }
  return {};
}

// Validates one descriptor of onnxSetGraphIO against the bundle's I/O `model`
// and appends its deep copy to `out`.
// `exact_shapes` false (bundles with dynamic shapes, whose shapes follow the
// input values at run time): only the rank is checked here; the run checks
// the inputs against their ranges and each output's actual shape against its
// descriptor (MISMATCHING_SHAPE from onnxWaitEvent).
Result BindDescriptors(uint32_t count, const onnxTensorDescriptorV1* descs, const char* what,
                       const std::vector<const runtime::IoDesc*>& model, bool exact_shapes,
                       std::vector<Binding>* out) {
  std::vector<bool> seen(model.size(), false);
  for (uint32_t k = 0; k < count; ++k) {
    const onnxTensorDescriptorV1& d = descs[k];
    const std::string where = StrFormat("%s[%u]", what, k);
    Result r = CheckDescriptor(d, where.c_str());
    if (!r.ok()) return r;
    const std::string name = d.name;
    size_t m = 0;
    while (m < model.size() && model[m]->name != name) ++m;
    if (m == model.size()) {
      std::string names;
      for (const auto* io : model) names += (names.empty() ? "'" : ", '") + io->name + "'";
      return Result{ONNXIFI_STATUS_INVALID_NAME,
                    where + ": '" + name + "' is not a graph " + (std::strcmp(what, "inputDescriptors") == 0 ? "input" : "output") +
                        " (expected: " + names + ")"};
    }
    if (seen[m]) return Result{ONNXIFI_STATUS_INVALID_NAME, where + ": '" + name + "' appears in more than one descriptor"};
    seen[m] = true;
    const runtime::IoDesc& io = *model[m];
    if (d.dataType != io.dtype)
      return Result{ONNXIFI_STATUS_MISMATCHING_DATATYPE,
                    StrFormat("%s '%s': data type %llu, the graph's is %u", where.c_str(), name.c_str(),
                              static_cast<unsigned long long>(d.dataType), io.dtype)};
    std::vector<uint64_t> shape(d.shape, d.shape + d.dimensions);
    if (exact_shapes ? shape != io.shape : shape.size() != io.shape.size()) {
      auto text = [](const std::vector<uint64_t>& v) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
        return s + "]";
      };
      return Result{ONNXIFI_STATUS_MISMATCHING_SHAPE,
                    where + " '" + name + "': shape " + text(shape) + ", the graph's is " + text(io.shape)};
    }
    Binding b;
    b.name = name;
    b.dtype = d.dataType;
    b.shape = std::move(shape);
    b.buffer = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(d.buffer));
    // The client's buffer holds exactly the descriptor's shape (a bundle's
    // planned bytes may be larger: the largest shape its values allow).
    b.nbytes = DataTypeSize(d.dataType);
    for (uint64_t v : b.shape) b.nbytes *= v;
    out->push_back(std::move(b));
  }
  for (size_t m = 0; m < model.size(); ++m)
    if (!seen[m])
      return Result{ONNXIFI_STATUS_UNIDENTIFIED_NAME,
                    std::string("graph ") + (std::strcmp(what, "inputDescriptors") == 0 ? "input" : "output") + " '" +
                        model[m]->name + "' has no descriptor in " + what};
  return {};
}

onnxStatus CheckFence(const onnxMemoryFenceV1* f, const char* what, Result* r) {
  if (f->tag != ONNXIFI_TAG_MEMORY_FENCE_V1) {
    *r = Result{ONNXIFI_STATUS_UNSUPPORTED_TAG,
                StrFormat("%s: tag 0x%08X is not ONNXIFI_TAG_MEMORY_FENCE_V1", what, static_cast<unsigned>(f->tag))};
    return r->status;
  }
  if (f->type != ONNXIFI_SYNCHRONIZATION_EVENT) {
    const bool known = f->type == ONNXIFI_SYNCHRONIZATION_IMPLICIT;
    *r = Result{known ? ONNXIFI_STATUS_UNSUPPORTED_FENCE_TYPE : ONNXIFI_STATUS_INVALID_FENCE_TYPE,
                StrFormat("%s: fence type %llu %s; only ONNXIFI_SYNCHRONIZATION_EVENT is supported", what,
                          static_cast<unsigned long long>(f->type), known ? "is not supported" : "is unknown")};
    return r->status;
  }
  return ONNXIFI_STATUS_SUCCESS;
}

}  // namespace
}  // namespace oaaxvk::onnxifi

using namespace oaaxvk;
using namespace oaaxvk::onnxifi;

// ------------------------------------------------------------ the ABI -----

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxGetBackendIDs(onnxBackendID* backendIDs, size_t* numBackends) {
  return Guard("onnxGetBackendIDs", [&]() -> onnxStatus {
    if (numBackends == nullptr)
      return Report("onnxGetBackendIDs", Result{ONNXIFI_STATUS_INVALID_POINTER, "numBackends is NULL"});
    const std::vector<DeviceInfo>& devices = Devices();
    const size_t room = *numBackends;
    *numBackends = devices.size();
    if (backendIDs == nullptr || room < devices.size()) return ONNXIFI_STATUS_FALLBACK;
    for (size_t i = 0; i < devices.size(); ++i) {
      auto id = std::make_shared<BackendId>();
      id->device = devices[i];
      backendIDs[i] = const_cast<void*>(Register(Reg().ids, std::move(id)));
    }
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxReleaseBackendID(onnxBackendID backendID) {
  return Guard("onnxReleaseBackendID", [&]() -> onnxStatus {
    if (!Take(Reg().ids, backendID))
      return Report("onnxReleaseBackendID", Result{ONNXIFI_STATUS_INVALID_ID, "not a live backend ID"});
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxGetBackendInfo(onnxBackendID backendID, onnxBackendInfo infoType,
                                                         void* infoValue, size_t* infoValueSize) {
  return Guard("onnxGetBackendInfo", [&]() -> onnxStatus {
    auto id = Find(Reg().ids, backendID);
    if (!id) return Report("onnxGetBackendInfo", Result{ONNXIFI_STATUS_INVALID_ID, "not a live backend ID"});
    if (infoValueSize == nullptr)
      return Report("onnxGetBackendInfo", Result{ONNXIFI_STATUS_INVALID_POINTER, "infoValueSize is NULL"});
    const DeviceInfo& d = id->device;
    switch (infoType) {
      case ONNXIFI_BACKEND_ONNXIFI_VERSION: return PutU64(UINT64_C(0x0000000100000000), infoValue, infoValueSize);
      case ONNXIFI_BACKEND_NAME: return PutString(kBackendName, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_VENDOR: return PutString(kVendor, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_VERSION: return PutString(OAAXVK_VERSION, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_EXTENSIONS: return PutString("", infoValue, infoValueSize);
      case ONNXIFI_BACKEND_DEVICE: return PutString(d.name, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_DEVICE_TYPE:
        return PutU64(d.cpu ? ONNXIFI_DEVICE_TYPE_CPU : ONNXIFI_DEVICE_TYPE_GPU, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_ONNX_IR_VERSION: return PutString(SupportedIrVersions(), infoValue, infoValueSize);
      case ONNXIFI_BACKEND_OPSET_VERSION: return PutString(SupportedOpsets(), infoValue, infoValueSize);
      case ONNXIFI_BACKEND_CAPABILITIES: return PutU64(ONNXIFI_CAPABILITY_THREAD_SAFE, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_INIT_PROPERTIES: return PutU64(0, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_MEMORY_TYPES: return PutU64(ONNXIFI_MEMORY_TYPE_CPU, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_GRAPH_INIT_PROPERTIES: return PutU64(0, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_SYNCHRONIZATION_TYPES:
        return PutU64(ONNXIFI_SYNCHRONIZATION_EVENT, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_MEMORY_SIZE: return PutU64(d.memory_bytes, infoValue, infoValueSize);
      case ONNXIFI_BACKEND_MAX_GRAPH_SIZE:
        // The weights live in one device allocation.
        return PutU64(std::min(d.memory_bytes, d.max_allocation), infoValue, infoValueSize);
      case ONNXIFI_BACKEND_MAX_GRAPH_COUNT:
        return PutU64(UINT64_MAX, infoValue, infoValueSize);  // bounded by device memory only
      default:  // the optional queries (MACs, bandwidths, PCI and API ids) are not offered
        return Report(LogLevel::kInfo, "onnxGetBackendInfo",
                      Result{ONNXIFI_STATUS_UNSUPPORTED_ATTRIBUTE,
                             StrFormat("information query %d is not supported", static_cast<int>(infoType))});
    }
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxGetBackendCompatibility(onnxBackendID backendID, size_t onnxModelSize,
                                                                  const void* onnxModel) {
  return Guard("onnxGetBackendCompatibility", [&]() -> onnxStatus {
    auto id = Find(Reg().ids, backendID);
    if (!id) return Report("onnxGetBackendCompatibility", Result{ONNXIFI_STATUS_INVALID_ID, "not a live backend ID"});
    // An unsupported model is a normal answer, logged at info level.
    return Report(LogLevel::kInfo, "onnxGetBackendCompatibility",
                  CheckCompatibility(onnxModel, onnxModelSize, DeviceKey(id->device)));
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxInitBackend(onnxBackendID backendID, const uint64_t* auxPropertiesList,
                                                      onnxBackend* backend) {
  return Guard("onnxInitBackend", [&]() -> onnxStatus {
    if (backend) *backend = nullptr;
    auto id = Find(Reg().ids, backendID);
    if (!id) return Report("onnxInitBackend", Result{ONNXIFI_STATUS_INVALID_ID, "not a live backend ID"});
    if (backend == nullptr)
      return Report("onnxInitBackend", Result{ONNXIFI_STATUS_INVALID_POINTER, "backend is NULL"});
    Result p = ParseBackendProperties(auxPropertiesList);
    if (!p.ok()) return Report("onnxInitBackend", p);
    runtime::ContextOptions copts;
    copts.device = std::to_string(id->device.index);
    StatusOr<std::unique_ptr<runtime::VkContext>> ctx = runtime::VkContext::Create(copts);
    if (!ctx.ok())
      return Report("onnxInitBackend", Result{ctx.status().code() == StatusCode::kResourceExhausted
                                                  ? ONNXIFI_STATUS_NO_DEVICE_RESOURCES
                                                  : ONNXIFI_STATUS_BACKEND_UNAVAILABLE,
                                              "device '" + id->device.name + "': " + ctx.status().ToString()});
    auto b = std::make_shared<Backend>();
    b->device = id->device;
    b->ctx = std::move(ctx).value();
    *backend = const_cast<void*>(Register(Reg().backends, std::move(b)));
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxReleaseBackend(onnxBackend backend) {
  return Guard("onnxReleaseBackend", [&]() -> onnxStatus {
    // Graphs made on the backend keep its device alive until they are released.
    if (!Take(Reg().backends, backend))
      return Report("onnxReleaseBackend", Result{ONNXIFI_STATUS_INVALID_BACKEND, "not a live backend handle"});
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxInitEvent(onnxBackend backend, onnxEvent* event) {
  return Guard("onnxInitEvent", [&]() -> onnxStatus {
    if (event) *event = nullptr;
    if (!Find(Reg().backends, backend))
      return Report("onnxInitEvent", Result{ONNXIFI_STATUS_INVALID_BACKEND, "not a live backend handle"});
    if (event == nullptr) return Report("onnxInitEvent", Result{ONNXIFI_STATUS_INVALID_POINTER, "event is NULL"});
    *event = const_cast<void*>(Register(Reg().events, std::make_shared<Event>()));
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxSignalEvent(onnxEvent event) {
  return Guard("onnxSignalEvent", [&]() -> onnxStatus {
    auto e = Find(Reg().events, event);
    if (!e) return Report("onnxSignalEvent", Result{ONNXIFI_STATUS_INVALID_EVENT, "not a live event handle"});
    if (!e->Signal(ONNXIFI_STATUS_SUCCESS))
      return Report("onnxSignalEvent", Result{ONNXIFI_STATUS_INVALID_STATE, "the event is already signalled"});
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxGetEventState(onnxEvent event, onnxEventState* state) {
  return Guard("onnxGetEventState", [&]() -> onnxStatus {
    if (state) *state = ONNXIFI_EVENT_STATE_INVALID;
    auto e = Find(Reg().events, event);
    if (!e) return Report("onnxGetEventState", Result{ONNXIFI_STATUS_INVALID_EVENT, "not a live event handle"});
    if (state == nullptr) return Report("onnxGetEventState", Result{ONNXIFI_STATUS_INVALID_POINTER, "state is NULL"});
    *state = e->IsSignalled() ? ONNXIFI_EVENT_STATE_SIGNALLED : ONNXIFI_EVENT_STATE_NONSIGNALLED;
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxWaitEvent(onnxEvent event) {
  return Guard("onnxWaitEvent", [&]() -> onnxStatus {
    auto e = Find(Reg().events, event);
    if (!e) return Report("onnxWaitEvent", Result{ONNXIFI_STATUS_INVALID_EVENT, "not a live event handle"});
    return e->Wait();  // the run's status for an output event (logged by the run)
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxReleaseEvent(onnxEvent event) {
  return Guard("onnxReleaseEvent", [&]() -> onnxStatus {
    if (!Take(Reg().events, event))
      return Report("onnxReleaseEvent", Result{ONNXIFI_STATUS_INVALID_EVENT, "not a live event handle"});
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxInitGraph(onnxBackend backend, const uint64_t* auxPropertiesList,
                                                    size_t onnxModelSize, const void* onnxModel,
                                                    uint32_t weightsCount,
                                                    const onnxTensorDescriptorV1* weightDescriptors,
                                                    onnxGraph* graph) {
  return Guard("onnxInitGraph", [&]() -> onnxStatus {
    if (graph) *graph = nullptr;
    auto b = Find(Reg().backends, backend);
    if (!b) return Report("onnxInitGraph", Result{ONNXIFI_STATUS_INVALID_BACKEND, "not a live backend handle"});
    if (graph == nullptr) return Report("onnxInitGraph", Result{ONNXIFI_STATUS_INVALID_POINTER, "graph is NULL"});
    if (auxPropertiesList != nullptr && auxPropertiesList[0] != ONNXIFI_GRAPH_PROPERTY_NONE)
      return Report("onnxInitGraph",
                    Result{ONNXIFI_STATUS_UNSUPPORTED_PROPERTY,
                           StrFormat("graph property %llu is not supported",
                                     static_cast<unsigned long long>(auxPropertiesList[0]))});
    std::shared_ptr<const CompiledModel> model;
    bool from_cache = false;
    Result c = CompileModel(onnxModel, onnxModelSize, weightsCount, weightDescriptors, DeviceKey(b->device), &model,
                            &from_cache);
    if (!c.ok()) return Report("onnxInitGraph", c);

    auto g = std::make_shared<Graph>();
    g->backend = b;
    g->model = model;
    StatusOr<oinf::File> file = oinf::File::FromMemory(model->bundle.data(), model->bundle.size());
    if (!file.ok())
      return Report("onnxInitGraph", Result{ONNXIFI_STATUS_INTERNAL_ERROR, "compiled bundle: " + file.status().ToString()});
    StatusOr<runtime::Bundle> bundle = runtime::ParseBundle(std::move(*file), "<onnxifi graph>");
    if (!bundle.ok())
      return Report("onnxInitGraph",
                    Result{ONNXIFI_STATUS_INTERNAL_ERROR, "compiled bundle: " + bundle.status().ToString()});
    runtime::ExecutorOptions eopts;
    eopts.frames_in_flight = 1;  // one run of a graph at a time
    eopts.timeout_ms = kRunTimeoutMs;
    {
      std::lock_guard<std::mutex> lk(b->submit_mu);  // uploads and the warm-up run submit to the queue
      StatusOr<std::unique_ptr<runtime::Executor>> exec =
          runtime::Executor::Create(b->ctx.get(), std::move(*bundle), eopts);
      if (!exec.ok()) {
        const Status& s = exec.status();
        onnxStatus st = s.code() == StatusCode::kResourceExhausted ? ONNXIFI_STATUS_NO_DEVICE_MEMORY
                        : s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kUnimplemented
                            ? ONNXIFI_STATUS_BACKEND_UNAVAILABLE
                            : ONNXIFI_STATUS_INTERNAL_ERROR;
        return Report("onnxInitGraph", Result{st, "loading the compiled graph: " + s.ToString()});
      }
      g->exec = std::move(exec).value();
    }
    g->dynamic = g->exec->bundle().features.count("dynamic_shapes") > 0;
    for (const runtime::IoDesc& io : g->exec->bundle().inputs) g->inputs.push_back(&io);
    for (const runtime::IoDesc& io : g->exec->bundle().outputs)
      if (io.count_for < 0) g->outputs.push_back(&io);
    runtime::Log(LogLevel::kInfo,
                 StrFormat("onnxInitGraph: %zu inputs, %zu outputs, bundle %zu bytes (%s)", g->inputs.size(),
                           g->outputs.size(), model->bundle.size(),
                           from_cache ? "from the cache" : StrFormat("compiled in %.1f ms", model->compile_ms).c_str()));
    *graph = const_cast<void*>(Register(Reg().graphs, std::move(g)));
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxSetGraphIO(onnxGraph graph, uint32_t inputsCount,
                                                     const onnxTensorDescriptorV1* inputDescriptors,
                                                     uint32_t outputsCount,
                                                     const onnxTensorDescriptorV1* outputDescriptors) {
  return Guard("onnxSetGraphIO", [&]() -> onnxStatus {
    auto g = Find(Reg().graphs, graph);
    if (!g) return Report("onnxSetGraphIO", Result{ONNXIFI_STATUS_INVALID_GRAPH, "not a live graph handle"});
    auto set = std::make_shared<IoSet>();
    Result r;
    if (inputsCount > 0 && inputDescriptors == nullptr)
      r = Result{ONNXIFI_STATUS_INVALID_POINTER, "inputDescriptors is NULL while inputsCount is non-zero"};
    else if (outputDescriptors == nullptr)
      r = Result{ONNXIFI_STATUS_INVALID_POINTER, "outputDescriptors is NULL"};
    if (r.ok())
      r = BindDescriptors(inputsCount, inputDescriptors, "inputDescriptors", g->inputs, !g->dynamic, &set->inputs);
    if (r.ok())
      r = BindDescriptors(outputsCount, outputDescriptors, "outputDescriptors", g->outputs, !g->dynamic,
                          &set->outputs);
    std::lock_guard<std::mutex> lk(g->mu);
    // Runs already started keep the bindings they were started with.
    g->io = r.ok() ? std::shared_ptr<const IoSet>(std::move(set)) : nullptr;
    return Report("onnxSetGraphIO", r);
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxRunGraph(onnxGraph graph, const onnxMemoryFenceV1* inputFence,
                                                   onnxMemoryFenceV1* outputFence) {
  return Guard("onnxRunGraph", [&]() -> onnxStatus {
    auto g = Find(Reg().graphs, graph);
    if (!g) return Report("onnxRunGraph", Result{ONNXIFI_STATUS_INVALID_GRAPH, "not a live graph handle"});
    if (inputFence == nullptr || outputFence == nullptr)
      return Report("onnxRunGraph", Result{ONNXIFI_STATUS_INVALID_POINTER, "inputFence or outputFence is NULL"});
    Result r;
    if (CheckFence(inputFence, "inputFence", &r) != ONNXIFI_STATUS_SUCCESS ||
        CheckFence(outputFence, "outputFence", &r) != ONNXIFI_STATUS_SUCCESS)
      return Report("onnxRunGraph", r);
    auto input = Find(Reg().events, inputFence->event);
    if (!input)
      return Report("onnxRunGraph", Result{ONNXIFI_STATUS_INVALID_EVENT, "inputFence->event is not a live event"});
    std::unique_lock<std::mutex> lk(g->mu);
    g->Reap(lk);
    if (!g->io)
      return Report("onnxRunGraph", Result{ONNXIFI_STATUS_UNIDENTIFIED_NAME,
                                           "no input/output locations: call onnxSetGraphIO (successfully) first"});
    // A fresh output event, whatever the client put in outputFence->event.
    auto output = std::make_shared<Event>();
    const uint64_t id = g->next_run++;
    ++g->in_flight;
    try {
      g->workers.emplace(id, std::thread(Worker, g.get(), id, g->io, std::move(input), output));
    } catch (...) {
      --g->in_flight;
      return Report("onnxRunGraph", Result{ONNXIFI_STATUS_NO_SYSTEM_RESOURCES, "could not start a worker thread"});
    }
    outputFence->event = const_cast<void*>(Register(Reg().events, std::move(output)));
    return ONNXIFI_STATUS_SUCCESS;
  });
}

ONNXIFI_EXPORT onnxStatus ONNXIFI_ABI onnxReleaseGraph(onnxGraph graph) {
  return Guard("onnxReleaseGraph", [&]() -> onnxStatus {
    auto g = Take(Reg().graphs, graph);
    if (!g) return Report("onnxReleaseGraph", Result{ONNXIFI_STATUS_INVALID_GRAPH, "not a live graph handle"});
    std::unique_lock<std::mutex> lk(g->mu);
    g->cv.wait(lk, [&] { return g->in_flight == 0; });  // runs in flight complete first
    g->Reap(lk);
    std::vector<std::thread> rest;
    for (auto& [id, t] : g->workers) rest.push_back(std::move(t));
    g->workers.clear();
    lk.unlock();
    for (std::thread& t : rest) t.join();
    return ONNXIFI_STATUS_SUCCESS;
  });
}

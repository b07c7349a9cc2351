// The OAAX C facade: the only place a Status becomes an int and the calling
// thread's error message. No exception crosses these functions.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>

#include "oaax_vulkan/interface.h"
#include "runtime/bundle.h"
#include "runtime/executor.h"
#include "runtime/log.h"
#include "runtime/vk_context.h"

#define OAAX_EXPORT extern "C" __attribute__((visibility("default")))

namespace oaaxvk::runtime {
namespace {

struct Runtime {
  std::unique_ptr<VkContext> ctx;
  std::unique_ptr<Executor> exec;
  ExecutorOptions exec_options;
  std::string model_path;
};

// init/load/destroy take it exclusively; send/receive share it so that one
// producer and one consumer run concurrently (the Executor synchronizes them).
std::shared_mutex g_state;
std::unique_ptr<Runtime> g_runtime;
// runtime_version's text: written by init/destroy, read by any thread at
// any time, so only under g_version_mutex (each reader gets its own copy).
std::mutex g_version_mutex;
std::string g_version = OAAXVK_VERSION " (no device)";
thread_local std::string t_version;
void SetVersion(std::string v) {
  std::lock_guard<std::mutex> lk(g_version_mutex);
  g_version.swap(v);
}
thread_local std::string t_error;

// Records the calling thread's error and logs it. `level`: kError for
// failures, kDebug for normal polling states (receive_output with nothing
// pending), so hosts that poll do not fill the log with errors.
// runtime_error_message() keeps the last failure of the thread until the next
// failure (like errno): a successful call does not clear it.
int Fail(const char* function, const Status& s, LogLevel level = LogLevel::kError) {
  t_error = std::string(function) + ": " + s.ToString();
  Log(level, t_error);
  int code = static_cast<int>(s.code());
  return code != 0 ? code : static_cast<int>(StatusCode::kInternal);
}

// Set by a body whose failure is a normal state (logged at debug level).
thread_local bool t_quiet_failure = false;

template <typename F>
int Guard(const char* function, F&& body) {
  try {
    t_quiet_failure = false;
    Status s = body();
    return s.ok() ? 0 : Fail(function, s, t_quiet_failure ? LogLevel::kDebug : LogLevel::kError);
  } catch (const std::bad_alloc&) {
    return Fail(function, ResourceExhausted("out of host memory"));
  } catch (const std::exception& e) {
    return Fail(function, Internal(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return Fail(function, Internal("unexpected exception"));
  }
}

StatusOr<uint64_t> ParseUnsigned(const char* key, const char* value, uint64_t min, uint64_t max) {
  if (!*value) return InvalidArgument(StrFormat("argument '%s': empty value", key));
  for (const char* p = value; *p; ++p)
    if (*p < '0' || *p > '9')
      return InvalidArgument(StrFormat("argument '%s' = '%s': expected an integer in [%llu, %llu]", key, value,
                                       static_cast<unsigned long long>(min), static_cast<unsigned long long>(max)));
  errno = 0;
  unsigned long long v = strtoull(value, nullptr, 10);
  if (errno == ERANGE || v < min || v > max)
    return InvalidArgument(StrFormat("argument '%s' = '%s': expected an integer in [%llu, %llu]", key, value,
                                     static_cast<unsigned long long>(min), static_cast<unsigned long long>(max)));
  return static_cast<uint64_t>(v);
}

// Values are NUL-terminated text strings. A host that passes a pointer to a
// binary value for a known key (older hosts pass `int*`) hands over bytes
// such as "\x02" or "" (the int 0): refused, naming the key, before parsing.
// (An int whose bytes happen to be printable digits, e.g. 0x31 = "1", reads
// as that text: there is no way to tell it apart.)
Status CheckTextValue(const char* key, const char* value, bool empty_ok) {
  if (!*value && !empty_ok)
    return InvalidArgument(StrFormat("argument '%s': empty value (values are NUL-terminated strings such as \"2\"; "
                                     "a pointer to a binary 0 reads as an empty string)",
                                     key));
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(value); *p; ++p)
    if (*p < 0x20 || *p == 0x7f)
      return InvalidArgument(StrFormat("argument '%s': the value holds control byte 0x%02X, so it is not a text "
                                       "string; values are NUL-terminated strings such as \"2\", not pointers to "
                                       "binary numbers (int*)",
                                       key, *p));
  return Status::Ok();
}

StatusOr<bool> ParseBool(const char* key, const char* value) {
  std::string v(value);
  for (char& c : v) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no" || v.empty()) return false;
  return InvalidArgument(StrFormat("argument '%s' = '%s': expected 0 or 1", key, value));
}

Status Initialize(int length, const char** keys, const void** values) {
  std::unique_lock<std::shared_mutex> lock(g_state);
  if (g_runtime) return FailedPrecondition("the runtime is already initialized (call runtime_destruction first)");
  if (length < 0) return InvalidArgument(StrFormat("length is %d", length));
  if (length > 0 && (!keys || !values)) return InvalidArgument("keys or values is NULL");

  ContextOptions copts;
  ExecutorOptions eopts;
  LogLevel level = LogLevel::kWarn;
  std::string log_file;
  for (int i = 0; i < length; ++i) {
    const char* key = keys[i];
    if (!key) return InvalidArgument(StrFormat("keys[%d] is NULL", i));
    const char* value = static_cast<const char*>(values[i]);
    auto known = [&](const char* k) { return strcmp(key, k) == 0; };
    const bool is_known = known("log_level") || known("log_file") || known("device") || known("frames_in_flight") ||
                          known("receive_timeout_ms") || known("validation") || known("pipeline_cache") ||
                          known("pipeline_cache_dir") || known("load_warmup") || known("force_staging") ||
                          known("profile") ||
                          known("kernel_variant") || known("fp16_weights") || known("shape_cache_size") ||
                          known("precision");
    if (!is_known) continue;  // spec 4.2: unknown keys are ignored
    if (!value) return InvalidArgument(StrFormat("value of argument '%s' is NULL", key));
    // Numbers and kernel_variant are never empty; the paths, device and the
    // booleans may be ("" = default).
    const bool empty_ok = !(known("log_level") || known("frames_in_flight") || known("receive_timeout_ms") ||
                            known("kernel_variant") || known("shape_cache_size") || known("precision"));
    OAAXVK_RETURN_IF_ERROR(CheckTextValue(key, value, empty_ok));
    if (known("log_level")) {
      OAAXVK_ASSIGN_OR_RETURN(uint64_t v, ParseUnsigned(key, value, 0, 6));
      level = static_cast<LogLevel>(v);
    } else if (known("log_file")) {
      log_file = value;
    } else if (known("device")) {
      copts.device = value;
    } else if (known("frames_in_flight")) {
      OAAXVK_ASSIGN_OR_RETURN(uint64_t v, ParseUnsigned(key, value, 1, 16));
      eopts.frames_in_flight = static_cast<uint32_t>(v);
    } else if (known("receive_timeout_ms")) {
      OAAXVK_ASSIGN_OR_RETURN(eopts.timeout_ms, ParseUnsigned(key, value, 0, 24ull * 3600 * 1000));
    } else if (known("validation")) {
      OAAXVK_ASSIGN_OR_RETURN(copts.validation, ParseBool(key, value));
    } else if (known("pipeline_cache")) {
      eopts.pipeline_cache = value;
    } else if (known("pipeline_cache_dir")) {
      eopts.pipeline_cache_dir = value;
    } else if (known("load_warmup")) {
      OAAXVK_ASSIGN_OR_RETURN(eopts.warmup, ParseBool(key, value));
    } else if (known("profile")) {
      OAAXVK_ASSIGN_OR_RETURN(eopts.profile, ParseBool(key, value));
    } else if (known("kernel_variant")) {
      OAAXVK_ASSIGN_OR_RETURN(eopts.kernel_variant, ParseKernelVariant(value));
    } else if (known("fp16_weights")) {
      OAAXVK_ASSIGN_OR_RETURN(eopts.fp16_weights, ParseBool(key, value));
    } else if (known("precision")) {
      if (strcmp(value, "fp16") == 0) {
        eopts.precision_fp16 = true;
      } else if (strcmp(value, "fp32") == 0) {
        eopts.precision_fp16 = false;
      } else {
        return InvalidArgument(StrFormat("runtime argument precision is '%s' (expected fp32 or fp16)", value));
      }
    } else if (known("shape_cache_size")) {
      OAAXVK_ASSIGN_OR_RETURN(uint64_t v, ParseUnsigned(key, value, 1, 1024));
      eopts.shape_cache_size = static_cast<uint32_t>(v);
    } else if (known("force_staging")) {  // undocumented test knob: 0, 1 or "outputs"
      if (strcmp(value, "outputs") == 0) {
        eopts.force_staging = StagingKnob::kOutputs;
      } else {
        OAAXVK_ASSIGN_OR_RETURN(bool all, ParseBool(key, value));
        eopts.force_staging = all ? StagingKnob::kAll : StagingKnob::kOff;
      }
    }
  }
  OAAXVK_RETURN_IF_ERROR(ConfigureLog(level, log_file));
  auto ctx = VkContext::Create(copts);
  if (!ctx.ok()) {
    ResetLog();
    return ctx.status();
  }
  auto rt = std::make_unique<Runtime>();
  rt->ctx = std::move(ctx).value();
  rt->exec_options = eopts;
  const std::string version = StrFormat("%s (%s)", OAAXVK_VERSION, rt->ctx->device_name().c_str());
  SetVersion(version);
  Log(LogLevel::kInfo, StrFormat("initialized: %s, frames_in_flight %u, receive_timeout_ms %llu", version.c_str(),
                                 eopts.frames_in_flight, static_cast<unsigned long long>(eopts.timeout_ms)));
  g_runtime = std::move(rt);
  return Status::Ok();
}

Status LoadModel(const char* path) {
  std::unique_lock<std::shared_mutex> lock(g_state);
  if (!g_runtime) return FailedPrecondition("the runtime is not initialized (call runtime_initialization first)");
  if (!path) return InvalidArgument("file_path is NULL");
  if (g_runtime->exec && !g_runtime->exec->device_status().ok())
    return FailedPrecondition(StrFormat("the Vulkan device was lost while running '%s' (%s); call "
                                        "runtime_destruction, then runtime_initialization, before loading a model",
                                        g_runtime->model_path.c_str(),
                                        g_runtime->exec->device_status().message().c_str()));
  if (g_runtime->exec)
    return FailedPrecondition(StrFormat("a model is already loaded ('%s'); one model per runtime: call "
                                        "runtime_destruction and runtime_initialization to load '%s'",
                                        g_runtime->model_path.c_str(), path));
  OAAXVK_ASSIGN_OR_RETURN(Bundle bundle, LoadBundle(path));
  OAAXVK_ASSIGN_OR_RETURN(g_runtime->exec,
                          Executor::Create(g_runtime->ctx.get(), std::move(bundle), g_runtime->exec_options));
  g_runtime->model_path = path;
  return Status::Ok();
}

Status Destroy() {
  std::unique_lock<std::shared_mutex> lock(g_state);
  if (!g_runtime) return FailedPrecondition("the runtime is not initialized");
  std::unique_ptr<Runtime> rt = std::move(g_runtime);
  rt->exec.reset();  // waits for the device
  std::vector<std::string> messages = rt->ctx->validation_messages();
  rt->ctx.reset();
  SetVersion(OAAXVK_VERSION " (no device)");
  Log(LogLevel::kInfo, "destroyed");
  ResetLog();
  if (!messages.empty())
    return Internal(StrFormat("the validation layer reported %zu message(s); first: %s", messages.size(),
                              messages[0].c_str()));
  return Status::Ok();
}

}  // namespace
}  // namespace oaaxvk::runtime

using namespace oaaxvk;
using namespace oaaxvk::runtime;

OAAX_EXPORT int runtime_initialization(void) {
  return Guard("runtime_initialization", [] { return Initialize(0, nullptr, nullptr); });
}

OAAX_EXPORT int runtime_initialization_with_args(int length, const char** keys, const void** values) {
  return Guard("runtime_initialization_with_args", [&] { return Initialize(length, keys, values); });
}

OAAX_EXPORT int runtime_model_loading(const char* file_path) {
  return Guard("runtime_model_loading", [&] { return LoadModel(file_path); });
}

OAAX_EXPORT int send_input(tensors_struct* input_tensors) {
  return Guard("send_input", [&]() -> Status {
    std::shared_lock<std::shared_mutex> lock(g_state);
    if (!g_runtime) return FailedPrecondition("the runtime is not initialized");
    if (!g_runtime->exec) return FailedPrecondition("no model is loaded (call runtime_model_loading first)");
    return g_runtime->exec->Send(input_tensors);
  });
}

OAAX_EXPORT int receive_output(tensors_struct** output_tensors) {
  return Guard("receive_output", [&]() -> Status {
    if (!output_tensors) return InvalidArgument("output_tensors is NULL");
    std::shared_lock<std::shared_mutex> lock(g_state);
    if (!g_runtime) return FailedPrecondition("the runtime is not initialized");
    if (!g_runtime->exec) return FailedPrecondition("no model is loaded (call runtime_model_loading first)");
    StatusOr<tensors_struct*> r = g_runtime->exec->Receive();
    if (!r.ok()) {
      // Nothing queued is the executor's only FailedPrecondition: a normal
      // state for hosts that poll, so it is logged at debug level only.
      if (r.status().code() == StatusCode::kFailedPrecondition) t_quiet_failure = true;
      return r.status();
    }
    *output_tensors = r.value();
    return Status::Ok();
  });
}

OAAX_EXPORT int runtime_destruction(void) {
  return Guard("runtime_destruction", [] { return Destroy(); });
}

OAAX_EXPORT const char* runtime_error_message(void) { return t_error.c_str(); }

OAAX_EXPORT const char* runtime_version(void) {
  // The thread's own copy stays valid until its next call, whatever other
  // threads initialize or destroy meanwhile.
  try {
    std::lock_guard<std::mutex> lk(g_version_mutex);
    t_version = g_version;
  } catch (...) {  // out of host memory: the previous copy (or "") stays
  }
  return t_version.c_str();
}

OAAX_EXPORT const char* runtime_name(void) { return "OAAX Vulkan Runtime"; }

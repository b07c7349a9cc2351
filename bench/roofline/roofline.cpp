// oaaxvk-roofline: the Vulkan device's roofline, measured with GPU timestamps.
//
//   fma_f32   sustained fp32 FMA rate, GFLOP/s (1 FMA = 2 FLOP)
//   fma_f16   the same in fp16 arithmetic, only where the device has shaderFloat16
//   copy      buffer-to-buffer copy bandwidth through a compute shader, GB/s
//             (bytes read + bytes written, 1 GB = 1e9 bytes): the bandwidth
//             roofline that memory-bound kernels are judged against
//   transfer_copy  the same with vkCmdCopyBuffer (the driver's copy), for context
//
// Every figure is a Google Benchmark with manual time: each iteration submits
// one command buffer (timestamp, dispatch, timestamp), waits for its fence and
// reports the GPU time between the two timestamps, so host submission and
// fence latency are not counted. Every kernel's result is checked on the host
// after the run (a benchmark whose kernel computed the wrong thing fails).
//
// The device is picked as libRuntimeLibrary.so picks it: discrete GPU, then
// integrated, virtual, CPU (lavapipe on a machine without a GPU), among Vulkan
// 1.1 devices with a compute queue; OAAXVK_BENCH_DEVICE=<index or name
// substring> overrides, like the runtime's `device` argument. SwiftShader:
// VK_ICD_FILENAMES=.../vk_swiftshader_icd.json.
//
// Extra flags (before the Google Benchmark ones):
//   --fma-invocations=N   invocations per FMA dispatch (default 65536)
//   --fma-iterations=N    loop rounds per invocation (default 1024)
//   --copy-mib=N          size of each copy buffer in MiB (default 64)
//   --device-json=FILE    write the device description (name, driver, limits) as JSON
//   --gemm-probe          also register the GEMM load-path probe (gemm_probe/<variant>,
//                         see gemm_probe.glsl and docs/benchmarks.md); off by default
//   --gemm-m/-n/-k=N      its problem size (default 64 x 2048 x 256; M % 8, N % 512,
//                         K % 4 == 0; the UBO variants need M * K * 4 <= 64 KiB)
// Exit status: 0 when every benchmark ran and verified, 1 on any error
// (printed with the Vulkan call and VK_ERROR_* name), 2 on bad usage.
#include <dlfcn.h>
#include <vulkan/vulkan.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"

#include "copy.spv.h"
#include "copy_texel.spv.h"
#include "copy_texel_image.spv.h"
#include "fma_f16.spv.h"
#include "fma_f32.spv.h"
#include "gemm_probe_l_regs.spv.h"
#include "gemm_probe_l_scalar.spv.h"
#include "gemm_probe_no_loads.spv.h"
#include "gemm_probe_shared.spv.h"
#include "gemm_probe_shared_l_regs.spv.h"
#include "gemm_probe_ssbo.spv.h"
#include "gemm_probe_ubo.spv.h"
#include "gemm_probe_ubo_l_regs.spv.h"
#include "gemm_probe_w_regs.spv.h"
#include "gemm_probe_w_scalar.spv.h"
#include "gemm_probe_l_texel.spv.h"
#include "gemm_probe_ubo_l_texel.spv.h"
#include "gemm_probe_ubo_l_image.spv.h"
#include "gemm_probe_texel.spv.h"
#include "gemm_probe_w_texel_l_regs.spv.h"
#include "gemm_probe_texel_r32.spv.h"

namespace {

using oaaxvk::Status;
using oaaxvk::StatusOr;
using oaaxvk::StrFormat;

const char* VkResultName(VkResult r) {
  switch (r) {
#define OAAXVK_CASE(x) case x: return #x;
    OAAXVK_CASE(VK_SUCCESS) OAAXVK_CASE(VK_NOT_READY) OAAXVK_CASE(VK_TIMEOUT) OAAXVK_CASE(VK_INCOMPLETE)
    OAAXVK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY) OAAXVK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    OAAXVK_CASE(VK_ERROR_INITIALIZATION_FAILED) OAAXVK_CASE(VK_ERROR_DEVICE_LOST)
    OAAXVK_CASE(VK_ERROR_MEMORY_MAP_FAILED) OAAXVK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    OAAXVK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT) OAAXVK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    OAAXVK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER) OAAXVK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    OAAXVK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED) OAAXVK_CASE(VK_ERROR_FRAGMENTED_POOL)
    OAAXVK_CASE(VK_ERROR_UNKNOWN)
#undef OAAXVK_CASE
    default: return "VK_RESULT_UNKNOWN";
  }
}

Status VkCheck(VkResult r, const char* call) {
  if (r == VK_SUCCESS) return Status::Ok();
  return Status(oaaxvk::StatusCode::kUnavailable, StrFormat("%s failed: %s (%d)", call, VkResultName(r), r));
}

int TypeRank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;  // host-visible buffers stay mapped
  VkDeviceSize size = 0;
};

// The device, its queue and everything the three kernels need. Owns every
// Vulkan object it creates; destroyed once after the benchmarks.
class Device {
 public:
  ~Device();
  Status Init();
  Status WriteJson(const std::string& path) const;

  bool has_f16() const { return has_f16_; }
  const VkPhysicalDeviceProperties& props() const { return props_; }

  // A compute pipeline for `spirv` with `bindings` buffers (storage buffers,
  // or `types[i]` where given), the given push-constant bytes and
  // specialization constants 0..n-1 (u32/i32).
  struct Kernel {
    VkShaderModule module = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VkDescriptorSet set = VK_NULL_HANDLE;
    std::vector<VkBufferView> views;  // one per texel-buffer binding (R32G32B32A32_SFLOAT)
  };
  StatusOr<Kernel> MakeKernel(const uint32_t* spirv, size_t spirv_bytes, uint32_t bindings, uint32_t push_bytes,
                              const std::vector<uint32_t>& spec, const std::vector<const Buffer*>& buffers,
                              const std::vector<VkDescriptorType>& types = {},
                              VkFormat texel_format = VK_FORMAT_R32G32B32A32_SFLOAT);
  void DestroyKernel(Kernel* k);
  // device_local: preferred device-local memory (falls back to any type);
  // otherwise host-visible + coherent, mapped.
  StatusOr<Buffer> MakeBuffer(VkDeviceSize size, bool device_local);
  void DestroyBuffer(Buffer* b);
  // Records timestamp, dispatch(groups), timestamp; submits, waits, returns
  // the GPU time in seconds between the two timestamps.
  StatusOr<double> TimedDispatch(const Kernel& k, const void* push, uint32_t push_bytes, uint32_t groups);
  // Records timestamp, `record(cmd)`, timestamp; submits, waits, returns the
  // GPU time in seconds between the two timestamps.
  StatusOr<double> Timed(const std::function<void(VkCommandBuffer)>& record);
  // Submits a command buffer recorded once with no commands and waits for its
  // fence (then resets it): the driver's submit + signal + wait latency, as
  // the runtime pays it per inference (its command buffers are recorded once).
  Status SubmitEmpty();
  // Copies `src` (device) into host-visible `dst` with vkCmdCopyBuffer.
  Status Readback(const Buffer& src, const Buffer& dst);
  // A command buffer recorded once with `record` (allocated from the
  // device's pool, freed with it) and its submission + fence wait, as the
  // runtime replays a recorded frame or segment.
  StatusOr<VkCommandBuffer> RecordOnce(const std::function<void(VkCommandBuffer)>& record);
  Status Replay(VkCommandBuffer cmd) { return SubmitAndWait(cmd, "a recorded command buffer"); }

 private:
  // Submits `cmd` with fence_, waits (120 s bound, `what` names the work in
  // the timeout message) and resets the fence.
  Status SubmitAndWait(VkCommandBuffer cmd, const char* what);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkPhysicalDeviceProperties props_{};
  VkPhysicalDeviceMemoryProperties mem_{};
  std::string driver_name_, driver_info_;
  bool has_f16_ = false;
  uint64_t ts_mask_ = ~0ull;
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkCommandBuffer empty_cmd_ = VK_NULL_HANDLE;  // SubmitEmpty, recorded at its first use
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
};

Device::~Device() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (queries_) vkDestroyQueryPool(device_, queries_, nullptr);
    if (fence_) vkDestroyFence(device_, fence_, nullptr);
    if (cmd_pool_) vkDestroyCommandPool(device_, cmd_pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

Status Device::Init() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "oaaxvk-roofline";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateInstance(&ici, nullptr, &instance_), "vkCreateInstance"));
  uint32_t count = 0;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices"));
  std::vector<VkPhysicalDevice> devs(count);
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkEnumeratePhysicalDevices(instance_, &count, devs.data()), "vkEnumeratePhysicalDevices"));
  devs.resize(count);
  if (devs.empty()) return oaaxvk::Unavailable("no Vulkan physical device found (is a Vulkan ICD installed?)");

  auto compute_family = [](VkPhysicalDevice d, uint32_t* fam) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &n, nullptr);
    std::vector<VkQueueFamilyProperties> f(n);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &n, f.data());
    for (uint32_t i = 0; i < n; ++i)
      if ((f[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && f[i].timestampValidBits > 0) { *fam = i; return true; }
    return false;
  };
  std::vector<VkPhysicalDeviceProperties> props(devs.size());
  std::string listing;
  for (size_t i = 0; i < devs.size(); ++i) {
    vkGetPhysicalDeviceProperties(devs[i], &props[i]);
    listing += StrFormat("%s%zu: '%s'", i ? ", " : "", i, props[i].deviceName);
  }
  int chosen = -1;
  const char* want_env = std::getenv("OAAXVK_BENCH_DEVICE");
  const std::string want = want_env ? want_env : "";
  if (!want.empty()) {
    if (want.find_first_not_of("0123456789") == std::string::npos && want.size() < 9) {
      const size_t idx = std::stoul(want);
      if (idx >= devs.size())
        return oaaxvk::NotFound(StrFormat("OAAXVK_BENCH_DEVICE=%s: index out of range (devices: %s)", want.c_str(),
                                          listing.c_str()));
      chosen = static_cast<int>(idx);
    } else {
      for (size_t i = 0; i < devs.size() && chosen < 0; ++i)
        if (Lower(props[i].deviceName).find(Lower(want)) != std::string::npos) chosen = static_cast<int>(i);
      if (chosen < 0)
        return oaaxvk::NotFound(StrFormat("OAAXVK_BENCH_DEVICE=%s: no device name contains it (devices: %s)",
                                          want.c_str(), listing.c_str()));
    }
    if (!compute_family(devs[chosen], &family_))
      return oaaxvk::Unavailable(StrFormat("device '%s' has no compute queue with timestamps", props[chosen].deviceName));
  } else {
    for (size_t i = 0; i < devs.size(); ++i) {
      uint32_t fam = 0;
      if (props[i].apiVersion < VK_API_VERSION_1_1 || !compute_family(devs[i], &fam)) continue;
      if (chosen < 0 || TypeRank(props[i].deviceType) < TypeRank(props[chosen].deviceType)) {
        chosen = static_cast<int>(i);
        family_ = fam;
      }
    }
    if (chosen < 0)
      return oaaxvk::Unavailable(
          StrFormat("no Vulkan 1.1 device with a timestamped compute queue (devices: %s)", listing.c_str()));
  }
  physical_ = devs[chosen];
  props_ = props[chosen];
  vkGetPhysicalDeviceMemoryProperties(physical_, &mem_);

  // Driver identification and shaderFloat16 (Vulkan 1.2 core structs, or the
  // KHR extensions on a 1.1 driver: both are plain pNext chains here).
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  const bool v12 = props_.apiVersion >= VK_API_VERSION_1_2;
  if (v12) p2.pNext = &driver;
  vkGetPhysicalDeviceProperties2(physical_, &p2);
  if (v12) {
    driver_name_ = driver.driverName;
    driver_info_ = driver.driverInfo;
  }
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  if (v12) f2.pNext = &f16;
  vkGetPhysicalDeviceFeatures2(physical_, &f2);
  has_f16_ = v12 && f16.shaderFloat16;

  uint32_t nfam = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nfam, nullptr);
  std::vector<VkQueueFamilyProperties> fams(nfam);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nfam, fams.data());
  const uint32_t bits = fams[family_].timestampValidBits;
  ts_mask_ = bits >= 64 ? ~0ull : ((1ull << bits) - 1);

  const float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkPhysicalDeviceShaderFloat16Int8Features f16_on{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  f16_on.shaderFloat16 = VK_TRUE;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  if (has_f16_) dci.pNext = &f16_on;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDevice(physical_, &dci, nullptr, &device_), "vkCreateDevice"));
  vkGetDeviceQueue(device_, family_, 0, &queue_);

  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpi.queueFamilyIndex = family_;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateCommandPool(device_, &cpi, nullptr, &cmd_pool_), "vkCreateCommandPool"));
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = cmd_pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateCommandBuffers(device_, &cai, &cmd_), "vkAllocateCommandBuffers"));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateFence(device_, &fci, nullptr, &fence_), "vkCreateFence"));
  VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpi.queryCount = 2;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateQueryPool(device_, &qpi, nullptr, &queries_), "vkCreateQueryPool"));
  return Status::Ok();
}

std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += c; }
    else if (static_cast<unsigned char>(c) < 0x20) o += StrFormat("\\u%04x", c);
    else o += c;
  }
  return o;
}

Status Device::WriteJson(const std::string& path) const {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return oaaxvk::InvalidArgument(StrFormat("--device-json '%s': cannot open for writing", path.c_str()));
  const char* type = props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? "cpu"
                     : props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? "discrete_gpu"
                     : props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? "integrated_gpu"
                     : props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU ? "virtual_gpu" : "other";
  std::fprintf(f,
               "{\n  \"name\": \"%s\",\n  \"type\": \"%s\",\n  \"vendor_id\": %u,\n  \"device_id\": %u,\n"
               "  \"api_version\": \"%u.%u.%u\",\n  \"driver_version_raw\": %u,\n  \"driver_name\": \"%s\",\n"
               "  \"driver_info\": \"%s\",\n  \"shader_float16\": %s,\n  \"timestamp_period_ns\": %g,\n"
               "  \"max_compute_shared_memory_bytes\": %u,\n  \"max_workgroup_invocations\": %u\n}\n",
               JsonEscape(props_.deviceName).c_str(), type, props_.vendorID, props_.deviceID,
               VK_VERSION_MAJOR(props_.apiVersion), VK_VERSION_MINOR(props_.apiVersion),
               VK_VERSION_PATCH(props_.apiVersion), props_.driverVersion, JsonEscape(driver_name_).c_str(),
               JsonEscape(driver_info_).c_str(), has_f16_ ? "true" : "false",
               static_cast<double>(props_.limits.timestampPeriod), props_.limits.maxComputeSharedMemorySize,
               props_.limits.maxComputeWorkGroupInvocations);
  const bool ok = std::fclose(f) == 0;
  return ok ? Status::Ok() : oaaxvk::DataLoss(StrFormat("--device-json '%s': write failed", path.c_str()));
}

StatusOr<Buffer> Device::MakeBuffer(VkDeviceSize size, bool device_local) {
  Buffer b;
  b.size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
              VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
              VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateBuffer(device_, &bci, nullptr, &b.buffer), "vkCreateBuffer"));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  const VkMemoryPropertyFlags want = device_local ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                                  : (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < mem_.memoryTypeCount && type == UINT32_MAX; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (mem_.memoryTypes[i].propertyFlags & want) == want) type = i;
  if (type == UINT32_MAX && device_local)
    for (uint32_t i = 0; i < mem_.memoryTypeCount && type == UINT32_MAX; ++i)
      if (req.memoryTypeBits & (1u << i)) type = i;
  if (type == UINT32_MAX) {
    DestroyBuffer(&b);
    return oaaxvk::Unavailable(StrFormat("no memory type for a %s buffer of %llu bytes",
                                         device_local ? "device-local" : "host-visible", (unsigned long long)size));
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  Status s = VkCheck(vkAllocateMemory(device_, &mai, nullptr, &b.memory), "vkAllocateMemory");
  if (s.ok()) s = VkCheck(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
  if (s.ok() && !device_local) s = VkCheck(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  if (!s.ok()) {
    DestroyBuffer(&b);
    return s.WithContext(StrFormat("buffer of %llu bytes", (unsigned long long)size));
  }
  return b;
}

void Device::DestroyBuffer(Buffer* b) {
  if (b->buffer) vkDestroyBuffer(device_, b->buffer, nullptr);
  if (b->memory) vkFreeMemory(device_, b->memory, nullptr);  // unmaps implicitly
  *b = Buffer();
}

StatusOr<Device::Kernel> Device::MakeKernel(const uint32_t* spirv, size_t spirv_bytes, uint32_t bindings,
                                            uint32_t push_bytes, const std::vector<uint32_t>& spec,
                                            const std::vector<const Buffer*>& buffers,
                                            const std::vector<VkDescriptorType>& types, VkFormat texel_format) {
  Kernel k;
  auto type_of = [&](uint32_t i) { return i < types.size() ? types[i] : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; };
  auto fail = [&](Status s) {
    DestroyKernel(&k);
    return s;
  };
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = spirv_bytes;
  smi.pCode = spirv;
  if (Status s = VkCheck(vkCreateShaderModule(device_, &smi, nullptr, &k.module), "vkCreateShaderModule"); !s.ok())
    return fail(s);
  std::vector<VkDescriptorSetLayoutBinding> lb(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    lb[i].binding = i;
    lb[i].descriptorType = type_of(i);
    lb[i].descriptorCount = 1;
    lb[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dli.bindingCount = bindings;
  dli.pBindings = lb.data();
  if (Status s = VkCheck(vkCreateDescriptorSetLayout(device_, &dli, nullptr, &k.set_layout), "vkCreateDescriptorSetLayout");
      !s.ok())
    return fail(s);
  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &k.set_layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &pcr;
  if (Status s = VkCheck(vkCreatePipelineLayout(device_, &pli, nullptr, &k.layout), "vkCreatePipelineLayout"); !s.ok())
    return fail(s);
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, static_cast<uint32_t>(i * 4), 4};
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), spec.size() * 4, spec.data()};
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = k.module;
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = &si;
  cpi.layout = k.layout;
  if (Status s = VkCheck(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cpi, nullptr, &k.pipeline),
                         "vkCreateComputePipelines");
      !s.ok())
    return fail(s);
  std::vector<VkDescriptorPoolSize> ps(bindings);
  for (uint32_t i = 0; i < bindings; ++i) ps[i] = {type_of(i), 1};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = bindings;
  dpi.pPoolSizes = ps.data();
  if (Status s = VkCheck(vkCreateDescriptorPool(device_, &dpi, nullptr, &k.pool), "vkCreateDescriptorPool"); !s.ok())
    return fail(s);
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = k.pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &k.set_layout;
  if (Status s = VkCheck(vkAllocateDescriptorSets(device_, &dai, &k.set), "vkAllocateDescriptorSets"); !s.ok())
    return fail(s);
  std::vector<VkDescriptorBufferInfo> infos(bindings);
  std::vector<VkWriteDescriptorSet> writes(bindings);
  k.views.assign(bindings, VK_NULL_HANDLE);
  for (uint32_t i = 0; i < bindings; ++i) {
    infos[i] = {buffers[i]->buffer, 0, VK_WHOLE_SIZE};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = k.set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = type_of(i);
    writes[i].pBufferInfo = &infos[i];
    if (type_of(i) == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER || type_of(i) == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER) {
      // A whole-buffer view (R32G32B32A32_SFLOAT and R32_SFLOAT: formats every
      // device supports for both texel-buffer kinds).
      VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
      vi.buffer = buffers[i]->buffer;
      vi.format = texel_format;
      vi.offset = 0;
      vi.range = VK_WHOLE_SIZE;
      if (Status s = VkCheck(vkCreateBufferView(device_, &vi, nullptr, &k.views[i]), "vkCreateBufferView"); !s.ok())
        return fail(s);
      writes[i].pBufferInfo = nullptr;
      writes[i].pTexelBufferView = &k.views[i];
    }
  }
  vkUpdateDescriptorSets(device_, bindings, writes.data(), 0, nullptr);
  return k;
}

void Device::DestroyKernel(Kernel* k) {
  for (VkBufferView v : k->views)
    if (v) vkDestroyBufferView(device_, v, nullptr);
  if (k->pool) vkDestroyDescriptorPool(device_, k->pool, nullptr);
  if (k->pipeline) vkDestroyPipeline(device_, k->pipeline, nullptr);
  if (k->layout) vkDestroyPipelineLayout(device_, k->layout, nullptr);
  if (k->set_layout) vkDestroyDescriptorSetLayout(device_, k->set_layout, nullptr);
  if (k->module) vkDestroyShaderModule(device_, k->module, nullptr);
  *k = Kernel();
}

StatusOr<double> Device::TimedDispatch(const Kernel& k, const void* push, uint32_t push_bytes, uint32_t groups) {
  return Timed([&](VkCommandBuffer cmd) {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &k.set, 0, nullptr);
    vkCmdPushConstants(cmd, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    vkCmdDispatch(cmd, groups, 1, 1);
  });
}

Status Device::SubmitAndWait(VkCommandBuffer cmd, const char* what) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit"));
  // 120 s: SwiftShader on a loaded 2-core machine is slow, but never that slow.
  VkResult w = vkWaitForFences(device_, 1, &fence_, VK_TRUE, 120ull * 1000 * 1000 * 1000);
  if (w == VK_TIMEOUT) return oaaxvk::DeadlineExceeded(StrFormat("vkWaitForFences: %s did not finish in 120 s", what));
  OAAXVK_RETURN_IF_ERROR(VkCheck(w, "vkWaitForFences"));
  return VkCheck(vkResetFences(device_, 1, &fence_), "vkResetFences");
}

Status Device::SubmitEmpty() {
  if (!empty_cmd_) {
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = cmd_pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateCommandBuffers(device_, &cai, &empty_cmd_), "vkAllocateCommandBuffers"));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(empty_cmd_, &bi), "vkBeginCommandBuffer"));
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkEndCommandBuffer(empty_cmd_), "vkEndCommandBuffer"));
  }
  return SubmitAndWait(empty_cmd_, "an empty submission");
}

StatusOr<double> Device::Timed(const std::function<void(VkCommandBuffer)>& record) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer"));
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer"));
  vkCmdResetQueryPool(cmd_, queries_, 0, 2);
  // Earlier submissions' shader/transfer writes become visible to this one
  // (each benchmark feeds one submission's output to the next).
  const VkPipelineStageFlags work = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier in{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  in.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
  in.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd_, work | VK_PIPELINE_STAGE_HOST_BIT, work, 0, 1, &in, 0, nullptr, 0, nullptr);
  // Both timestamps at the bottom of the pipe: the first one once all earlier
  // work is done, the second once the recorded work is.
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 0);
  record(cmd_);
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
  VkMemoryBarrier out{VK_STRUCTURE_TYPE_MEMORY_BARRIER};  // and to the host, after the fence
  out.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  out.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, work, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &out, 0, nullptr, 0, nullptr);
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer"));
  OAAXVK_RETURN_IF_ERROR(SubmitAndWait(cmd_, "the work"));
  uint64_t ts[2] = {0, 0};
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkGetQueryPoolResults(device_, queries_, 0, 2, sizeof(ts), ts, sizeof(uint64_t),
                                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                                 "vkGetQueryPoolResults"));
  const double ns = static_cast<double>((ts[1] - ts[0]) & ts_mask_) * props_.limits.timestampPeriod;
  return ns * 1e-9;
}

Status Device::Readback(const Buffer& src, const Buffer& dst) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer"));
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer"));
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
  VkBufferCopy region{0, 0, std::min(src.size, dst.size)};
  vkCmdCopyBuffer(cmd_, src.buffer, dst.buffer, 1, &region);
  VkMemoryBarrier hb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  hb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, nullptr, 0,
                       nullptr);
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer"));
  return SubmitAndWait(cmd_, "the readback");
}

StatusOr<VkCommandBuffer> Device::RecordOnce(const std::function<void(VkCommandBuffer)>& record) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = cmd_pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateCommandBuffers(device_, &cai, &cmd), "vkAllocateCommandBuffers"));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer"));
  record(cmd);
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkEndCommandBuffer(cmd), "vkEndCommandBuffer"));
  return cmd;
}

// ---- configuration and shared state (set in main before the benchmarks run) ----
Device* g_device = nullptr;
uint32_t g_fma_invocations = 65536;
uint32_t g_fma_iterations = 1024;
uint32_t g_copy_mib = 64;
constexpr uint32_t kLocalSize = 64;
bool g_failed = false;
bool g_gemm_probe = false;
uint32_t g_gemm_m = 64, g_gemm_n = 2048, g_gemm_k = 256;
double g_fma_best_gflops = 0.0;  // best fma_f32 figure of this run (0: not run)

void Fail(benchmark::State& state, const Status& s) {
  g_failed = true;
  state.SkipWithError(s.ToString().c_str());
}

struct FmaPush {
  uint32_t iterations;
  float x, y;
};

// Verifies the FMA kernel's output: every invocation's accumulators converge
// to y / (1 - x) = 1, so each stored sum is 4 * acc within rounding. The
// initial values (up to 6 + acc) are far from 1 and decay as 0.5^iterations.
Status CheckFma(const Buffer& host, uint32_t n, int acc, double tol) {
  const float* r = static_cast<const float*>(host.mapped);
  for (uint32_t i = 0; i < n; ++i) {
    const double want = 4.0 * acc;
    if (!(std::fabs(r[i] - want) <= tol * want))
      return oaaxvk::Internal(StrFormat("FMA kernel result %u is %g, expected %g: the kernel did not run the loop", i,
                                        static_cast<double>(r[i]), want));
  }
  return Status::Ok();
}

void BM_Fma(benchmark::State& state, bool f16) {
  Device& d = *g_device;
  const int acc = static_cast<int>(state.range(0));
  const uint32_t n = g_fma_invocations, groups = n / kLocalSize;
  auto out = d.MakeBuffer(uint64_t{n} * 4, true);
  if (!out.ok()) return Fail(state, out.status());
  auto host = d.MakeBuffer(uint64_t{n} * 4, false);
  if (!host.ok()) {
    d.DestroyBuffer(&out.value());
    return Fail(state, host.status());
  }
  const uint32_t* code = f16 ? fma_f16_spv : fma_f32_spv;
  const size_t bytes = f16 ? sizeof(fma_f16_spv) : sizeof(fma_f32_spv);
  auto k = d.MakeKernel(code, bytes, 1, sizeof(FmaPush), {kLocalSize, static_cast<uint32_t>(acc)}, {&out.value()});
  Status status = k.status();
  const FmaPush push{g_fma_iterations, 0.5f, 0.5f};
  if (status.ok()) {
    // One untimed dispatch: lavapipe compiles the pipeline on first use.
    auto warm = d.TimedDispatch(*k, &push, sizeof(push), groups);
    status = warm.status();
  }
  double seconds = 0.0;
  int64_t runs = 0;
  for (auto _ : state) {
    if (!status.ok()) break;
    auto t = d.TimedDispatch(*k, &push, sizeof(push), groups);
    if (!t.ok()) { status = t.status(); break; }
    state.SetIterationTime(*t);
    seconds += *t;
    ++runs;
  }
  if (status.ok()) status = d.Readback(*out, *host);
  if (status.ok()) status = CheckFma(*host, n, acc, f16 ? 1e-2 : 1e-5);
  if (status.ok()) {
    const double flops = 2.0 * 4.0 * acc * double(g_fma_iterations) * n;
    if (!f16 && seconds > 0.0) g_fma_best_gflops = std::max(g_fma_best_gflops, flops * runs / seconds * 1e-9);
    state.counters["FLOP"] = flops;
    state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    Fail(state, status);
  }
  if (k.ok()) d.DestroyKernel(&k.value());
  d.DestroyBuffer(&out.value());
  d.DestroyBuffer(&host.value());
}

// A compute-shader copy kernel and how it binds its source and destination.
struct CopyVariant {
  const uint32_t* code;
  size_t bytes;
  VkDescriptorType src_type, dst_type;
};
const CopyVariant kCopySsbo{copy_spv, sizeof(copy_spv), VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
const CopyVariant kCopyTexel{copy_texel_spv, sizeof(copy_texel_spv), VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
                             VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
const CopyVariant kCopyTexelImage{copy_texel_image_spv, sizeof(copy_texel_image_spv),
                                  VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER};

void BM_Copy(benchmark::State& state, const CopyVariant* v) {
  Device& d = *g_device;
  const uint64_t bytes = uint64_t{g_copy_mib} << 20;
  const uint32_t count = static_cast<uint32_t>(bytes / 16);  // vec4 elements
  // Bounded group count: grid-stride covers the rest (lavapipe runs one
  // workgroup per thread at a time; more groups than that add nothing).
  const uint32_t groups = std::min<uint32_t>(4096, (count + kLocalSize - 1) / kLocalSize);
  StatusOr<Buffer> src = d.MakeBuffer(bytes, true), dst = d.MakeBuffer(bytes, true), host = d.MakeBuffer(bytes, false);
  Status status = !src.ok() ? src.status() : !dst.ok() ? dst.status() : host.status();
  StatusOr<Device::Kernel> fill = oaaxvk::Internal("not created"), copy = oaaxvk::Internal("not created");
  // Fill src with a known pattern through the copy kernel itself from a host
  // buffer (so src is device-local without needing a transfer path).
  if (status.ok()) {
    uint32_t* h = static_cast<uint32_t*>(host->mapped);
    for (uint64_t i = 0; i < bytes / 4; ++i) h[i] = static_cast<uint32_t>(i * 2654435761u);
    fill = d.MakeKernel(copy_spv, sizeof(copy_spv), 2, 4, {kLocalSize}, {&host.value(), &src.value()});
    status = fill.status();
  }
  if (status.ok()) status = d.TimedDispatch(*fill, &count, 4, groups).status();
  if (status.ok()) {
    copy = d.MakeKernel(v->code, v->bytes, 2, 4, {kLocalSize}, {&src.value(), &dst.value()}, {v->src_type, v->dst_type});
    status = copy.status();
  }
  if (status.ok()) status = d.TimedDispatch(*copy, &count, 4, groups).status();  // warm-up
  for (auto _ : state) {
    if (!status.ok()) break;
    auto t = d.TimedDispatch(*copy, &count, 4, groups);
    if (!t.ok()) { status = t.status(); break; }
    state.SetIterationTime(*t);
  }
  if (status.ok()) {
    std::memset(host->mapped, 0, bytes);
    status = d.Readback(*dst, *host);
  }
  if (status.ok()) {
    const uint32_t* h = static_cast<const uint32_t*>(host->mapped);
    for (uint64_t i = 0; i < bytes / 4; ++i) {
      if (h[i] != static_cast<uint32_t>(i * 2654435761u)) {
        status = oaaxvk::Internal(StrFormat("copy kernel: word %llu is 0x%08x, expected 0x%08x", (unsigned long long)i,
                                            h[i], static_cast<uint32_t>(i * 2654435761u)));
        break;
      }
    }
  }
  if (status.ok()) {
    state.counters["bytes"] = 2.0 * static_cast<double>(bytes);
    state.counters["GBs"] =
        benchmark::Counter(2.0 * static_cast<double>(bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    Fail(state, status);
  }
  if (fill.ok()) d.DestroyKernel(&fill.value());
  if (copy.ok()) d.DestroyKernel(&copy.value());
  for (StatusOr<Buffer>* b : {&src, &dst, &host})
    if (b->ok()) d.DestroyBuffer(&b->value());
}

// vkCmdCopyBuffer between two device-local buffers: the driver's own copy,
// for context (kernels are judged against the compute-shader copy above).
void BM_TransferCopy(benchmark::State& state) {
  Device& d = *g_device;
  const uint64_t bytes = uint64_t{g_copy_mib} << 20;
  StatusOr<Buffer> src = d.MakeBuffer(bytes, true), dst = d.MakeBuffer(bytes, true), host = d.MakeBuffer(bytes, false);
  Status status = !src.ok() ? src.status() : !dst.ok() ? dst.status() : host.status();
  auto copy = [&](const Buffer& from, const Buffer& to) {
    return d.Timed([&](VkCommandBuffer cmd) {
      VkBufferCopy region{0, 0, bytes};
      vkCmdCopyBuffer(cmd, from.buffer, to.buffer, 1, &region);
    });
  };
  if (status.ok()) {
    uint32_t* h = static_cast<uint32_t*>(host->mapped);
    for (uint64_t i = 0; i < bytes / 4; ++i) h[i] = static_cast<uint32_t>(i * 40503u + 17u);
    status = copy(*host, *src).status();
  }
  if (status.ok()) status = copy(*src, *dst).status();  // warm-up
  for (auto _ : state) {
    if (!status.ok()) break;
    auto t = copy(*src, *dst);
    if (!t.ok()) { status = t.status(); break; }
    state.SetIterationTime(*t);
  }
  if (status.ok()) {
    std::memset(host->mapped, 0, bytes);
    status = copy(*dst, *host).status();
  }
  if (status.ok()) {
    const uint32_t* h = static_cast<const uint32_t*>(host->mapped);
    for (uint64_t i = 0; i < bytes / 4; ++i) {
      if (h[i] != static_cast<uint32_t>(i * 40503u + 17u)) {
        status = oaaxvk::Internal(StrFormat("vkCmdCopyBuffer: word %llu is wrong", (unsigned long long)i));
        break;
      }
    }
  }
  if (status.ok()) {
    state.counters["bytes"] = 2.0 * static_cast<double>(bytes);
    state.counters["GBs"] =
        benchmark::Counter(2.0 * static_cast<double>(bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    Fail(state, status);
  }
  for (StatusOr<Buffer>* b : {&src, &dst, &host})
    if (b->ok()) d.DestroyBuffer(&b->value());
}

// Submission round trip: submit a command buffer recorded once with no
// commands and wait for its fence; host wall-clock time per iteration. The
// floor of any send -> receive on this device, whatever the runtime does
// around it.
void BM_SubmitRoundTrip(benchmark::State& state) {
  Device& d = *g_device;
  Status status;
  for (auto _ : state) {
    status = d.SubmitEmpty();
    if (!status.ok()) break;
  }
  if (!status.ok()) Fail(state, status);
}

// Cost of one mid-frame read-back (feature segment_program,
// docs/bundle-format.md "Segment program"): the same two small dispatches
// (copy kernel, 16 KiB each) run as one recorded command buffer with one
// fence wait (arg 0), or as two recorded segments with, between them, a
// fence wait, an 8-byte vkCmdCopyBuffer into a host-visible buffer and a
// host read of it (arg 1), as the control program's `read` does. Host wall
// time per frame; the difference of the two is the read-back's cost.
void BM_MidFrameReadback(benchmark::State& state) {
  Device& d = *g_device;
  const bool split = state.range(0) != 0;
  constexpr uint32_t kCount = 1024;  // vec4 elements: 16 KiB
  constexpr uint64_t kBytes = uint64_t{kCount} * 16;
  StatusOr<Buffer> a = d.MakeBuffer(kBytes, true), b = d.MakeBuffer(kBytes, true), c = d.MakeBuffer(kBytes, true),
                   host = d.MakeBuffer(kBytes, false), scalar = d.MakeBuffer(256, false);
  Status status = Status::Ok();
  for (StatusOr<Buffer>* x : {&a, &b, &c, &host, &scalar})
    if (status.ok()) status = x->status();
  StatusOr<Device::Kernel> fill = oaaxvk::Internal("not created"), first = oaaxvk::Internal("not created"),
                           second = oaaxvk::Internal("not created");
  if (status.ok()) {
    uint32_t* h = static_cast<uint32_t*>(host->mapped);
    for (uint64_t i = 0; i < kBytes / 4; ++i) h[i] = static_cast<uint32_t>(i * 2654435761u);
    fill = d.MakeKernel(copy_spv, sizeof(copy_spv), 2, 4, {kLocalSize}, {&host.value(), &a.value()});
    first = d.MakeKernel(copy_spv, sizeof(copy_spv), 2, 4, {kLocalSize}, {&a.value(), &b.value()});
    second = d.MakeKernel(copy_spv, sizeof(copy_spv), 2, 4, {kLocalSize}, {&b.value(), &c.value()});
    status = !fill.ok() ? fill.status() : !first.ok() ? first.status() : second.status();
  }
  if (status.ok()) status = d.TimedDispatch(*fill, &kCount, 4, kCount / kLocalSize).status();
  const VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  auto dispatch = [&](VkCommandBuffer cmd, const Device::Kernel& k) {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &k.set, 0, nullptr);
    vkCmdPushConstants(cmd, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &kCount);
    vkCmdDispatch(cmd, kCount / kLocalSize, 1, 1);
  };
  auto barrier = [](VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                    VkAccessFlags dst_access) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src_access;
    mb.dstAccessMask = dst_access;
    vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
  };
  // One frame: first, barrier, second. Split: segment 1 = first + the
  // 8-byte copy of b's first element to the host; segment 2 = second.
  StatusOr<VkCommandBuffer> whole = oaaxvk::Internal("not recorded"), seg1 = oaaxvk::Internal("not recorded"),
                            seg2 = oaaxvk::Internal("not recorded");
  if (status.ok()) {
    whole = d.RecordOnce([&](VkCommandBuffer cmd) {
      dispatch(cmd, *first);
      barrier(cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute, VK_ACCESS_SHADER_READ_BIT);
      dispatch(cmd, *second);
      barrier(cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    });
    seg1 = d.RecordOnce([&](VkCommandBuffer cmd) {
      dispatch(cmd, *first);
      barrier(cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
      VkBufferCopy region{0, 0, 8};
      vkCmdCopyBuffer(cmd, b->buffer, scalar->buffer, 1, &region);
      barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
              VK_ACCESS_HOST_READ_BIT);
    });
    seg2 = d.RecordOnce([&](VkCommandBuffer cmd) {
      // The first segment's writes, complete at its fence, are visible here.
      dispatch(cmd, *second);
      barrier(cmd, kCompute, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    });
    status = !whole.ok() ? whole.status() : !seg1.ok() ? seg1.status() : seg2.status();
  }
  const uint64_t expected = uint64_t{static_cast<uint32_t>(1 * 2654435761u)} << 32 | 0u;
  for (auto _ : state) {
    if (!status.ok()) break;
    if (!split) {
      status = d.Replay(*whole);
      continue;
    }
    status = d.Replay(*seg1);
    if (!status.ok()) break;
    uint64_t v = 0;
    std::memcpy(&v, scalar->mapped, 8);
    if (v != expected) {
      status = oaaxvk::Internal(StrFormat("read-back: 0x%016llx, expected 0x%016llx", (unsigned long long)v,
                                          (unsigned long long)expected));
      break;
    }
    benchmark::DoNotOptimize(v);
    status = d.Replay(*seg2);
  }
  if (!status.ok()) Fail(state, status);
  for (StatusOr<Device::Kernel>* k : {&fill, &first, &second})
    if (k->ok()) d.DestroyKernel(&k->value());
  for (StatusOr<Buffer>* x : {&a, &b, &c, &host, &scalar})
    if (x->ok()) d.DestroyBuffer(&x->value());
}

// ---- GEMM load-path probe (--gemm-probe; gemm_probe.glsl) ----
// The register-blocked inner loop of shaders/gemm_cpu.comp (8 x 8 outputs per
// invocation, 64 vec4 FMAs per 4 k) built once per operand source: the
// variants differ only in where W (the workgroup-uniform operand, gemm_cpu's
// A) and L (the lane-varying one, gemm_cpu's B) come from. Same FLOPs, same
// grid; each one's output is checked against a CPU reference.
struct GemmVariant {
  const char* name;
  const uint32_t* code;
  size_t bytes;
  VkDescriptorType w_type;  // how W (binding 0) is bound
  VkDescriptorType l_type;  // how L (binding 1) is bound
  bool w_regs;  // the kernel uses W[m][k % 4] (loaded once), not W[m][k]
  bool l_regs;  // the kernel uses L[k % 4][n] (loaded once), not L[k][n]
  VkFormat texel_format = VK_FORMAT_R32G32B32A32_SFLOAT;  // of texel-buffer views
};
constexpr VkDescriptorType kSsbo = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kUbo = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                           kTexel = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
                           kImage = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
#define OAAXVK_GEMM_VARIANT(stem, wt, lt, wr, lr, ...) \
  {#stem, gemm_probe_##stem##_spv, sizeof(gemm_probe_##stem##_spv), wt, lt, wr, lr, ##__VA_ARGS__}
const GemmVariant kGemmVariants[] = {
    OAAXVK_GEMM_VARIANT(ssbo, kSsbo, kSsbo, false, false),
    OAAXVK_GEMM_VARIANT(w_scalar, kSsbo, kSsbo, false, false),
    OAAXVK_GEMM_VARIANT(l_scalar, kSsbo, kSsbo, false, false),
    OAAXVK_GEMM_VARIANT(ubo, kUbo, kSsbo, false, false),
    OAAXVK_GEMM_VARIANT(shared, kSsbo, kSsbo, false, false),
    OAAXVK_GEMM_VARIANT(w_regs, kSsbo, kSsbo, true, false),
    OAAXVK_GEMM_VARIANT(l_regs, kSsbo, kSsbo, false, true),
    OAAXVK_GEMM_VARIANT(ubo_l_regs, kUbo, kSsbo, false, true),
    OAAXVK_GEMM_VARIANT(shared_l_regs, kSsbo, kSsbo, false, true),
    OAAXVK_GEMM_VARIANT(no_loads, kSsbo, kSsbo, true, true),
    OAAXVK_GEMM_VARIANT(l_texel, kSsbo, kTexel, false, false),
    OAAXVK_GEMM_VARIANT(ubo_l_texel, kUbo, kTexel, false, false),
    OAAXVK_GEMM_VARIANT(ubo_l_image, kUbo, kImage, false, false),
    OAAXVK_GEMM_VARIANT(texel, kTexel, kTexel, false, false),
    OAAXVK_GEMM_VARIANT(w_texel_l_regs, kTexel, kSsbo, false, true),
    OAAXVK_GEMM_VARIANT(texel_r32, kTexel, kTexel, false, false, VK_FORMAT_R32_SFLOAT),
};
#undef OAAXVK_GEMM_VARIANT
constexpr uint64_t kUboBytes = 65536;  // gemm_probe.glsl's uniform block: vec4 wu[4096]

void BM_GemmProbe(benchmark::State& state, const GemmVariant* v) {
  Device& d = *g_device;
  const uint32_t M = g_gemm_m, N = g_gemm_n, K = g_gemm_k;
  if (v->w_type == kUbo && (uint64_t{M} * K * 4 > kUboBytes || d.props().limits.maxUniformBufferRange < kUboBytes))
    return Fail(state, oaaxvk::InvalidArgument(StrFormat(
                           "gemm_probe/%s: W is %llu bytes, a uniform buffer holds %llu here (--gemm-m * --gemm-k * 4)",
                           v->name, (unsigned long long)(uint64_t{M} * K * 4),
                           (unsigned long long)std::min<uint64_t>(kUboBytes, d.props().limits.maxUniformBufferRange))));
  // Small multiples of 1/8: every product and partial sum is exact in fp32,
  // so the result does not depend on the summation order.
  std::vector<float> w(size_t{M} * K), l(size_t{K} * N);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t k = 0; k < K; ++k) w[size_t{m} * K + k] = static_cast<float>(int((m * 7 + k * 3) % 17) - 8) / 8.0f;
  for (uint32_t k = 0; k < K; ++k)
    for (uint32_t n = 0; n < N; ++n) l[size_t{k} * N + n] = static_cast<float>(int((k * 5 + n * 11) % 13) - 6) / 8.0f;
  const uint64_t wbytes = std::max<uint64_t>(w.size() * 4, kUboBytes), lbytes = l.size() * 4,
                 ybytes = uint64_t{M} * N * 4;
  StatusOr<Buffer> wd = d.MakeBuffer(wbytes, true), ld = d.MakeBuffer(lbytes, true), yd = d.MakeBuffer(ybytes, true),
                   host = d.MakeBuffer(std::max({wbytes, lbytes, ybytes}), false);
  Status status = !wd.ok() ? wd.status() : !ld.ok() ? ld.status() : !yd.ok() ? yd.status() : host.status();
  auto upload = [&](const std::vector<float>& src, const Buffer& dst) {
    std::memcpy(host->mapped, src.data(), src.size() * 4);
    return d.Timed([&](VkCommandBuffer cmd) {
      VkBufferCopy region{0, 0, src.size() * 4};
      vkCmdCopyBuffer(cmd, host->buffer, dst.buffer, 1, &region);
    }).status();
  };
  if (status.ok()) status = upload(w, *wd);
  if (status.ok()) status = upload(l, *ld);
  StatusOr<Device::Kernel> k = oaaxvk::Internal("not created");
  if (status.ok()) {
    k = d.MakeKernel(v->code, v->bytes, 3, 4, {M, N, K}, {&wd.value(), &ld.value(), &yd.value()},
                     {v->w_type, v->l_type, kSsbo}, v->texel_format);
    status = k.status();
  }
  auto dispatch = [&]() {
    return d.Timed([&](VkCommandBuffer cmd) {
      vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
      vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &k->set, 0, nullptr);
      vkCmdDispatch(cmd, M / 8, N / 512, 1);
    });
  };
  if (status.ok()) status = dispatch().status();  // warm-up (lavapipe compiles on first use)
  double seconds = 0.0;
  int64_t runs = 0;
  for (auto _ : state) {
    if (!status.ok()) break;
    auto t = dispatch();
    if (!t.ok()) { status = t.status(); break; }
    state.SetIterationTime(*t);
    seconds += *t;
    ++runs;
  }
  if (status.ok()) {
    std::memset(host->mapped, 0xff, ybytes);  // NaN: an unwritten output cannot match
    status = d.Readback(*yd, *host);
  }
  if (status.ok()) {
    const float* y = static_cast<const float*>(host->mapped);
    std::vector<double> row(N);
    for (uint32_t m = 0; m < M && status.ok(); ++m) {
      std::fill(row.begin(), row.end(), 0.0);
      for (uint32_t kk = 0; kk < K; ++kk) {
        const double a = w[size_t{m} * K + (v->w_regs ? kk % 4 : kk)];
        const float* lr = &l[size_t{v->l_regs ? kk % 4 : kk} * N];
        for (uint32_t n = 0; n < N; ++n) row[n] += a * lr[n];
      }
      for (uint32_t n = 0; n < N; ++n) {
        const float got = y[size_t{m} * N + n];
        if (!(std::fabs(got - row[n]) <= 1e-3)) {
          status = oaaxvk::Internal(StrFormat("gemm_probe/%s: Y[%u][%u] is %g, the CPU reference %g", v->name, m, n,
                                              static_cast<double>(got), row[n]));
          break;
        }
      }
    }
  }
  if (status.ok()) {
    const double flops = 2.0 * M * N * K;
    state.counters["FLOP"] = flops;
    state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    if (g_fma_best_gflops > 0.0 && seconds > 0.0)
      state.counters["pct_fma_roofline"] = 100.0 * flops * runs / seconds * 1e-9 / g_fma_best_gflops;
  } else {
    Fail(state, status);
  }
  if (k.ok()) d.DestroyKernel(&k.value());
  for (StatusOr<Buffer>* b : {&wd, &ld, &yd, &host})
    if (b->ok()) d.DestroyBuffer(&b->value());
}

bool ParseU32Flag(const char* arg, const char* name, uint32_t* out, bool* bad) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  char* end = nullptr;
  const unsigned long v = std::strtoul(arg + n + 1, &end, 10);
  if (end == arg + n + 1 || *end != '\0' || v == 0 || v > (1ul << 30)) *bad = true;
  else *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device_json;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    bool bad = false;
    if (ParseU32Flag(argv[i], "--fma-invocations", &g_fma_invocations, &bad) ||
        ParseU32Flag(argv[i], "--fma-iterations", &g_fma_iterations, &bad) ||
        ParseU32Flag(argv[i], "--copy-mib", &g_copy_mib, &bad) ||
        ParseU32Flag(argv[i], "--gemm-m", &g_gemm_m, &bad) || ParseU32Flag(argv[i], "--gemm-n", &g_gemm_n, &bad) ||
        ParseU32Flag(argv[i], "--gemm-k", &g_gemm_k, &bad)) {
      if (bad) {
        std::fprintf(stderr, "oaaxvk-roofline: %s: expected a positive integer <= 2^30\n", argv[i]);
        return 2;
      }
    } else if (std::strcmp(argv[i], "--gemm-probe") == 0) {
      g_gemm_probe = true;
    } else if (std::strncmp(argv[i], "--device-json=", 14) == 0) {
      device_json = argv[i] + 14;
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (g_fma_invocations % kLocalSize != 0) {
    std::fprintf(stderr, "oaaxvk-roofline: --fma-invocations must be a multiple of %u\n", kLocalSize);
    return 2;
  }
  if (g_gemm_m % 8 != 0 || g_gemm_n % 512 != 0 || g_gemm_k % 4 != 0) {
    std::fprintf(stderr, "oaaxvk-roofline: --gemm-m must be a multiple of 8, --gemm-n of 512, --gemm-k of 4\n");
    return 2;
  }
  int bargc = static_cast<int>(rest.size());
  benchmark::Initialize(&bargc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, rest.data())) return 2;

  // The Vulkan loader unloads the driver at vkDestroyInstance; buffers that
  // lavapipe/LLVM keep in their own globals then look leaked to LeakSanitizer
  // (with "<unknown module>" frames). Pinning the driver, as a long-lived host
  // effectively does, keeps them reachable. A missing library is fine.
  dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  auto device = std::make_unique<Device>();
  if (Status s = device->Init(); !s.ok()) {
    std::fprintf(stderr, "oaaxvk-roofline: %s\n", s.ToString().c_str());
    return 1;
  }
  std::fprintf(stderr, "oaaxvk-roofline: device '%s', shaderFloat16 %s\n", device->props().deviceName,
               device->has_f16() ? "yes" : "no");
  if (!device_json.empty()) {
    if (Status s = device->WriteJson(device_json); !s.ok()) {
      std::fprintf(stderr, "oaaxvk-roofline: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  g_device = device.get();
  // ACC = vec4 accumulators per invocation: the sustained rate is the best
  // of these (too few chains stall on FMA latency, too many spill).
  benchmark::RegisterBenchmark("fma_f32", BM_Fma, false)->Arg(2)->Arg(4)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond);
  if (device->has_f16())
    benchmark::RegisterBenchmark("fma_f16", BM_Fma, true)->Arg(2)->Arg(4)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("copy", BM_Copy, &kCopySsbo)->UseManualTime()->Unit(benchmark::kMillisecond);
  // The same copy reading through a uniform texel buffer (and writing through a
  // storage texel buffer): the load paths the texel-binding kernels use.
  benchmark::RegisterBenchmark("copy_texel", BM_Copy, &kCopyTexel)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("copy_texel_image", BM_Copy, &kCopyTexelImage)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("transfer_copy", BM_TransferCopy)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("submit_round_trip", BM_SubmitRoundTrip)->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("mid_frame_readback", BM_MidFrameReadback)
      ->ArgName("split")
      ->Arg(0)
      ->Arg(1)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  // Opt-in (bench/run_bench.py passes it in the full run: "GEMM load-path probe"): registered after fma_f32,
  // whose best figure of the same run is the pct_fma_roofline denominator.
  if (g_gemm_probe)
    for (const GemmVariant& v : kGemmVariants)
      benchmark::RegisterBenchmark((std::string("gemm_probe/") + v.name).c_str(), BM_GemmProbe, &v)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_device = nullptr;
  device.reset();
  return g_failed ? 1 : 0;
}

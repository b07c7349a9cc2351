#include "runtime/vk_context.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "runtime/log.h"

namespace oaaxvk::runtime {

const char* VkResultName(VkResult r) {
  switch (r) {
#define OAAXVK_CASE(x) case x: return #x;
    OAAXVK_CASE(VK_SUCCESS)
    OAAXVK_CASE(VK_NOT_READY)
    OAAXVK_CASE(VK_TIMEOUT)
    OAAXVK_CASE(VK_EVENT_SET)
    OAAXVK_CASE(VK_EVENT_RESET)
    OAAXVK_CASE(VK_INCOMPLETE)
    OAAXVK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    OAAXVK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    OAAXVK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    OAAXVK_CASE(VK_ERROR_DEVICE_LOST)
    OAAXVK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    OAAXVK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    OAAXVK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    OAAXVK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    OAAXVK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    OAAXVK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    OAAXVK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    OAAXVK_CASE(VK_ERROR_FRAGMENTED_POOL)
    OAAXVK_CASE(VK_ERROR_UNKNOWN)
    OAAXVK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    OAAXVK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    OAAXVK_CASE(VK_ERROR_FRAGMENTATION)
    OAAXVK_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    OAAXVK_CASE(VK_PIPELINE_COMPILE_REQUIRED)
    OAAXVK_CASE(VK_ERROR_VALIDATION_FAILED_EXT)
    OAAXVK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef OAAXVK_CASE
    default: break;
  }
  static thread_local char buf[32];
  snprintf(buf, sizeof buf, "VkResult(%d)", static_cast<int>(r));
  return buf;
}

Status VkCheck(VkResult r, const char* call) {
  if (r == VK_SUCCESS) return Status::Ok();
  std::string msg = StrFormat("%s failed: %s", call, VkResultName(r));
  switch (r) {
    case VK_ERROR_DEVICE_LOST: return Unavailable(msg + " (the Vulkan device was lost)");
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_TOO_MANY_OBJECTS: return ResourceExhausted(msg);
    case VK_TIMEOUT: return DeadlineExceeded(msg);
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED: return Unavailable(msg);
    default: return Internal(msg);
  }
}

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

VKAPI_ATTR VkBool32 VKAPI_CALL DebugCallback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                             VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                             const VkDebugUtilsMessengerCallbackDataEXT* data,
                                             void* user) {
  auto* ctx = static_cast<VkContext*>(user);
  std::string msg = StrFormat("[validation] %s: %s",
                              (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning",
                              data && data->pMessage ? data->pMessage : "(no message)");
  Log(LogLevel::kError, msg);
  ctx->RecordValidationMessage(std::move(msg));
  return VK_FALSE;
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
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

bool HasComputeQueue(VkPhysicalDevice pd, uint32_t* family) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
  for (uint32_t i = 0; i < n; ++i) {
    if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount > 0) {
      *family = i;
      return true;
    }
  }
  return false;
}


bool HasDeviceExtension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> ext(n);
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, ext.data()) != VK_SUCCESS) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (std::strcmp(ext[i].extensionName, name) == 0) return true;
  return false;
}

// Whether the device lists an m x n x k subgroup-scope shape with binary16 A
// and B and fp32 C and D (VK_NV_cooperative_matrix).
bool HasCoopMatShapeNV(VkInstance instance, VkPhysicalDevice pd, uint32_t m, uint32_t n, uint32_t k) {
  auto props_fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (!props_fn) return false;
  uint32_t count = 0;
  if (props_fn(pd, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkCooperativeMatrixPropertiesNV> props(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  if (props_fn(pd, &count, props.data()) != VK_SUCCESS) return false;
  for (const VkCooperativeMatrixPropertiesNV& p : props)
    if (p.MSize == m && p.NSize == n && p.KSize == k && p.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        p.BType == VK_COMPONENT_TYPE_FLOAT16_NV && p.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        p.DType == VK_COMPONENT_TYPE_FLOAT32_NV && p.scope == VK_SCOPE_SUBGROUP_NV)
      return true;
  return false;
}

// Whether VkPhysicalDeviceCooperativeMatrixPropertiesNV lists compute among
// cooperativeMatrixSupportedStages.
bool HasCoopMatComputeStage(VkPhysicalDevice pd) {
  VkPhysicalDeviceCooperativeMatrixPropertiesNV cmp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &cmp;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  return (cmp.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
}


}  // namespace

FloatControls FloatControlsFor(const VkPhysicalDeviceFloatControlsProperties& p) {
  FloatControls fc;
  if (p.shaderSignedZeroInfNanPreserveFloat16) fc.signed_zero_inf_nan_preserve |= kFloatWidth16;
  if (p.shaderSignedZeroInfNanPreserveFloat32) fc.signed_zero_inf_nan_preserve |= kFloatWidth32;
  if (p.shaderSignedZeroInfNanPreserveFloat64) fc.signed_zero_inf_nan_preserve |= kFloatWidth64;
  const bool d16 = p.shaderDenormPreserveFloat16, d32 = p.shaderDenormPreserveFloat32,
             d64 = p.shaderDenormPreserveFloat64;
  switch (p.denormBehaviorIndependence) {
    case VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL:
      fc.denorm_preserve = (d16 ? kFloatWidth16 : 0u) | (d32 ? kFloatWidth32 : 0u) | (d64 ? kFloatWidth64 : 0u);
      break;
    case VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY:
      fc.denorm_preserve = (d32 ? kFloatWidth32 : 0u) | (d16 && d64 ? kFloatWidth16 | kFloatWidth64 : 0u);
      break;
    default:  // NONE, or a value newer than this runtime: every width alike
      fc.denorm_preserve = d16 && d32 && d64 ? kFloatWidth16 | kFloatWidth32 | kFloatWidth64 : 0u;
      break;
  }
  return fc;
}

StatusOr<std::unique_ptr<VkContext>> VkContext::Create(const ContextOptions& options) {
  std::unique_ptr<VkContext> ctx(new VkContext());
  OAAXVK_RETURN_IF_ERROR(ctx->Init(options));
  return ctx;
}

void VkContext::RecordValidationMessage(std::string message) {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  messages_.push_back(std::move(message));
}

std::vector<std::string> VkContext::validation_messages() const {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  return messages_;
}

Status VkContext::Init(const ContextOptions& options) {
  // ---- instance ----
  std::vector<const char*> layers, extensions;
  if (options.validation) {
    uint32_t n = 0;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkEnumerateInstanceLayerProperties(&n, nullptr),
                                   "vkEnumerateInstanceLayerProperties"));
    std::vector<VkLayerProperties> props(n);
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkEnumerateInstanceLayerProperties(&n, props.data()),
                                   "vkEnumerateInstanceLayerProperties"));
    bool have_layer = std::any_of(props.begin(), props.end(), [](const VkLayerProperties& p) {
      return strcmp(p.layerName, kValidationLayer) == 0;
    });
    uint32_t ne = 0;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkEnumerateInstanceExtensionProperties(nullptr, &ne, nullptr),
                                   "vkEnumerateInstanceExtensionProperties"));
    std::vector<VkExtensionProperties> exts(ne);
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkEnumerateInstanceExtensionProperties(nullptr, &ne, exts.data()),
                                   "vkEnumerateInstanceExtensionProperties"));
    bool have_utils = std::any_of(exts.begin(), exts.end(), [](const VkExtensionProperties& e) {
      return strcmp(e.extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0;
    });
    if (have_layer && have_utils) {
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      validation_enabled_ = true;
    } else {
      Log(LogLevel::kWarn, StrFormat("validation requested but %s is not installed; continuing without it",
                                     have_layer ? VK_EXT_DEBUG_UTILS_EXTENSION_NAME : kValidationLayer));
    }
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "oaax-vulkan";
  app.pEngineName = "oaax-vulkan";
  app.apiVersion = VK_API_VERSION_1_1;
  VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dbg.pfnUserCallback = DebugCallback;
  dbg.pUserData = this;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  if (validation_enabled_) ici.pNext = &dbg;  // also covers create/destroy instance
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateInstance(&ici, nullptr, &instance_), "vkCreateInstance"));
  if (validation_enabled_) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create) return Internal("vkGetInstanceProcAddr(vkCreateDebugUtilsMessengerEXT) returned NULL");
    OAAXVK_RETURN_IF_ERROR(VkCheck(create(instance_, &dbg, nullptr, &messenger_),
                                   "vkCreateDebugUtilsMessengerEXT"));
    Log(LogLevel::kInfo, "validation layer enabled");
  }

  // ---- physical device ----
  uint32_t count = 0;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkEnumeratePhysicalDevices(instance_, &count, nullptr),
                                 "vkEnumeratePhysicalDevices"));
  std::vector<VkPhysicalDevice> devices(count);
  if (count) {
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkEnumeratePhysicalDevices(instance_, &count, devices.data()),
                                   "vkEnumeratePhysicalDevices"));
  }
  devices.resize(count);
  if (devices.empty()) return Unavailable("no Vulkan physical device found (is a Vulkan ICD installed?)");

  std::vector<VkPhysicalDeviceProperties> props(devices.size());
  std::string listing;
  for (size_t i = 0; i < devices.size(); ++i) {
    vkGetPhysicalDeviceProperties(devices[i], &props[i]);
    listing += StrFormat("%s%zu: '%s'", i ? ", " : "", i, props[i].deviceName);
  }
  int chosen = -1;
  const std::string& want = options.device;
  if (!want.empty()) {
    bool numeric = std::all_of(want.begin(), want.end(), [](char c) { return isdigit(static_cast<unsigned char>(c)); });
    if (numeric) {
      unsigned long idx = strtoul(want.c_str(), nullptr, 10);
      if (want.size() > 9 || idx >= devices.size())
        return NotFound(StrFormat("device index %s out of range (devices: %s)", want.c_str(), listing.c_str()));
      chosen = static_cast<int>(idx);
    } else {
      std::string lw = Lower(want);
      for (size_t i = 0; i < devices.size(); ++i) {
        if (Lower(props[i].deviceName).find(lw) != std::string::npos) { chosen = static_cast<int>(i); break; }
      }
      if (chosen < 0)
        return NotFound(StrFormat("no Vulkan device name contains '%s' (devices: %s)", want.c_str(), listing.c_str()));
    }
    uint32_t fam;
    if (!HasComputeQueue(devices[chosen], &fam))
      return Unavailable(StrFormat("device '%s' has no compute queue", props[chosen].deviceName));
    if (props[chosen].apiVersion < VK_API_VERSION_1_1)
      return Unavailable(StrFormat("device '%s' supports only Vulkan %u.%u; 1.1 is required", props[chosen].deviceName,
                                   VK_API_VERSION_MAJOR(props[chosen].apiVersion),
                                   VK_API_VERSION_MINOR(props[chosen].apiVersion)));
  } else {
    for (size_t i = 0; i < devices.size(); ++i) {
      uint32_t fam;
      if (!HasComputeQueue(devices[i], &fam) || props[i].apiVersion < VK_API_VERSION_1_1) continue;
      if (chosen < 0 || TypeRank(props[i].deviceType) < TypeRank(props[chosen].deviceType))
        chosen = static_cast<int>(i);
    }
    if (chosen < 0)
      return Unavailable(StrFormat("no Vulkan 1.1 device with a compute queue (devices: %s)", listing.c_str()));
  }
  physical_ = devices[chosen];
  properties_ = props[chosen];
  // Subgroup properties (Vulkan 1.1 core, chained into the properties2 query).
  subgroup_ = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  subgroup_.pNext = &m3;
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &subgroup_;
  vkGetPhysicalDeviceProperties2(physical_, &p2);
  subgroup_.pNext = nullptr;
  if (m3.maxMemoryAllocationSize > 0) max_allocation_ = m3.maxMemoryAllocationSize;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
  HasComputeQueue(physical_, &queue_family_);

  // ---- features ----
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  // shaderFloat16 (VK_KHR_shader_float16_int8): the instance asks for Vulkan
  // 1.1, where it is an extension even on a 1.2 device (core features of a
  // later version need that version's instance): queried and enabled only
  // when the device lists the extension.
  const bool has_f16_ext = HasDeviceExtension(physical_, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  if (has_f16_ext) s16.pNext = &f16;
  // Cooperative matrices (VK_NV_cooperative_matrix) and the Vulkan memory
  // model their modules use (VK_KHR_vulkan_memory_model: the instance asks
  // for Vulkan 1.1, where the memory model is an extension): queried and
  // enabled only when the device lists the extensions.
  const bool has_coopmat_ext = HasDeviceExtension(physical_, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const bool has_vmm_ext = HasDeviceExtension(physical_, VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME);
  VkPhysicalDeviceVulkanMemoryModelFeatures vmm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  if (has_vmm_ext) {
    vmm.pNext = s16.pNext;
    s16.pNext = &vmm;
  }
  if (has_coopmat_ext) {
    cm.pNext = s16.pNext;
    s16.pNext = &cm;
  }
  // Pipeline statistics (ContextOptions::pipeline_statistics): only when asked for.
  const bool has_pep_ext = options.pipeline_statistics &&
                           HasDeviceExtension(physical_, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (has_pep_ext) {
    pep.pNext = s16.pNext;
    s16.pNext = &pep;
  }
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &s16;
  vkGetPhysicalDeviceFeatures2(physical_, &f2);
  // With the memory model enabled, every module's Device-scope barriers
  // (memoryBarrier() in the ordinary kernels) need vulkanMemoryModelDeviceScope
  // too (VUID-RuntimeSpirv-vulkanMemoryModel-06265): both, or neither.
  const bool memory_model = has_vmm_ext && vmm.vulkanMemoryModel == VK_TRUE &&
                            vmm.vulkanMemoryModelDeviceScope == VK_TRUE;
  const bool coopmat = has_coopmat_ext && memory_model && cm.cooperativeMatrix == VK_TRUE;
  VkPhysicalDeviceFeatures enabled{};
  robust_buffer_access_ = f2.features.robustBufferAccess == VK_TRUE;
  enabled.robustBufferAccess = f2.features.robustBufferAccess;
  storage_16bit_ = s16.storageBuffer16BitAccess == VK_TRUE;
  shader_float16_ = has_f16_ext && f16.shaderFloat16 == VK_TRUE;
  VkPhysicalDeviceShaderFloat16Int8Features f16_on{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  f16_on.shaderFloat16 = shader_float16_ ? VK_TRUE : VK_FALSE;
  VkPhysicalDevice16BitStorageFeatures s16_on{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  s16_on.storageBuffer16BitAccess = storage_16bit_ ? VK_TRUE : VK_FALSE;
  if (shader_float16_) s16_on.pNext = &f16_on;
  VkPhysicalDeviceVulkanMemoryModelFeatures vmm_on{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  vmm_on.vulkanMemoryModel = VK_TRUE;
  vmm_on.vulkanMemoryModelDeviceScope = VK_TRUE;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cm_on{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  cm_on.cooperativeMatrix = VK_TRUE;
  std::vector<const char*> device_extensions;
  if (shader_float16_) device_extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  // Float controls: the instance asks for Vulkan 1.1, so even on a 1.2
  // device (where they are core) the modes are used through the extension;
  // enabled only when the device supports one of the modes.
  if (HasDeviceExtension(physical_, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME)) {
    VkPhysicalDeviceFloatControlsProperties fcp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
    VkPhysicalDeviceProperties2 fc2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    fc2.pNext = &fcp;
    vkGetPhysicalDeviceProperties2(physical_, &fc2);
    float_controls_ = FloatControlsFor(fcp);
    if (float_controls_.empty())
      float_controls_missing_ = "it supports neither SignedZeroInfNanPreserve nor DenormPreserve";
    else
      device_extensions.push_back(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
  } else {
    float_controls_missing_ = "it does not list " VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME;
  }
  if (memory_model) {
    vmm_on.pNext = s16_on.pNext;
    s16_on.pNext = &vmm_on;
    device_extensions.push_back(VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME);
  }
  if (coopmat) {
    cm_on.pNext = s16_on.pNext;
    s16_on.pNext = &cm_on;
    device_extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  pipeline_statistics_ = has_pep_ext && pep.pipelineExecutableInfo == VK_TRUE;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep_on{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  pep_on.pipelineExecutableInfo = VK_TRUE;
  if (pipeline_statistics_) {
    pep_on.pNext = s16_on.pNext;
    s16_on.pNext = &pep_on;
    device_extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  }

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &s16_on;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.pEnabledFeatures = &enabled;
  dci.enabledExtensionCount = static_cast<uint32_t>(device_extensions.size());
  dci.ppEnabledExtensionNames = device_extensions.data();
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDevice(physical_, &dci, nullptr, &device_), "vkCreateDevice")
                             .WithContext(StrFormat("device '%s'", properties_.deviceName)));
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  // ---- capabilities (bundle feature device_variants) ----
  if (storage_16bit_) capabilities_.insert("storageBuffer16BitAccess");
  const VkSubgroupFeatureFlags arithmetic = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  if ((subgroup_.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
      (subgroup_.supportedOperations & arithmetic) == arithmetic)
    capabilities_.insert("subgroupArithmetic");
  // Kernels with up to 32 KiB of shared memory (the GPU-class GEMM tiles);
  // Vulkan guarantees only 16 KiB.
  if (properties_.limits.maxComputeSharedMemorySize >= 32768) capabilities_.insert("sharedMemory32KiB");
  if (shader_float16_) capabilities_.insert("shaderFloat16");
  if (memory_model) capabilities_.insert("vulkanMemoryModel");
  // The matrix kernels give each subgroup of 32 its fragments
  // (shaders/gpu_tile_matrix.glsl).
  if (coopmat && subgroup_.subgroupSize == 32 && HasCoopMatComputeStage(physical_) &&
      HasCoopMatShapeNV(instance_, physical_, 16, 16, 16))
    capabilities_.insert("cooperativeMatrixNV16x16x16f16f32");
  std::string caps;
  for (const std::string& c : capabilities_) caps += (caps.empty() ? "" : " ") + c;
  Log(LogLevel::kInfo, StrFormat("using Vulkan device '%s' (queue family %u, robustBufferAccess %s, capabilities: %s)",
                                 properties_.deviceName, queue_family_, robust_buffer_access_ ? "on" : "off",
                                 caps.empty() ? "none" : caps.c_str()));
  if (LogEnabled(LogLevel::kDebug)) {
    static const struct { VkSubgroupFeatureFlagBits bit; const char* name; } kOps[] = {
        {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},           {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
        {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"}, {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
        {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},       {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
        {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},   {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"}};
    std::string ops;
    for (const auto& op : kOps)
      if (subgroup_.supportedOperations & op.bit) ops += (ops.empty() ? "" : " ") + std::string(op.name);
    Log(LogLevel::kDebug, StrFormat("device '%s': subgroupSize %u, subgroup operations {%s}, in compute shaders: %s; "
                                    "storageBuffer16BitAccess %s, shaderFloat16 %s, float controls: %s",
                                    properties_.deviceName, subgroup_.subgroupSize, ops.c_str(),
                                    (subgroup_.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? "yes" : "no",
                                    storage_16bit_ ? "on" : "off", shader_float16_ ? "on" : "off",
                                    DescribeFloatControls(float_controls_).c_str()));
  }
  return Status::Ok();
}

int VkContext::FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred) const {
  int fallback = -1;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = memory_.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    if ((f & preferred) == preferred) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

VkContext::~VkContext() {
  if (device_) {
    vkDeviceWaitIdle(device_);  // result irrelevant: everything is destroyed next
    vkDestroyDevice(device_, nullptr);
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

}  // namespace oaaxvk::runtime

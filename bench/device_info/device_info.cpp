// oaaxvk-device-info: what every Vulkan device on this machine offers to a
// compute runtime, as one JSON object on stdout (or a few human lines with
// --summary). It needs nothing but the Vulkan loader, so it stands in for
// vulkaninfo on machines (GPU servers, containers) that do not ship it.
//
//   oaaxvk-device-info                       JSON on stdout
//   oaaxvk-device-info --device-json F.json  the same, also written to F.json
//   oaaxvk-device-info --summary             a few lines per device instead
//
// Output: {"loader_api_version": "1.3.x", "devices": [ {...}, ... ]}, every
// physical device the loader enumerates, in its order (index i is the index
// the runtime's `device` option takes). Per device: identity and driver,
// compute limits, subgroup properties, the storage / arithmetic features the
// kernel variants depend on, cooperative matrix support (NV and KHR), memory
// heaps and types, and the presence of the extensions of interest.
//
// Every pNext structure is chained only when the device's effective API
// version (the lower of the instance's and the device's) includes it or the
// device exposes its extension: an unknown structure in a chain is undefined
// behaviour and crashes some older drivers. A feature that cannot be queried
// is reported as false (the device cannot be asked to enable it either).
//
// VK_KHR_cooperative_matrix is newer than the Vulkan headers this project
// builds against (1.3.239), so its structures are declared here with the
// specification's layout and its query function is fetched by name.
//
// Exit status: 0 on success; 77 when there is no Vulkan loader instance or no
// device (the test command treats 77 as "skipped"); 1 when a Vulkan query
// fails or the JSON file cannot be written; CLI11's codes on bad usage.
#include <vulkan/vulkan.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Json = nlohmann::ordered_json;

// VK_KHR_cooperative_matrix, declared with the specification's layout and
// enumerant values because the installed headers predate it.
constexpr VkStructureType kStypePhysicalDeviceCooperativeMatrixFeaturesKhr = static_cast<VkStructureType>(1000506000);
constexpr VkStructureType kStypeCooperativeMatrixPropertiesKhr = static_cast<VkStructureType>(1000506001);

struct CooperativeMatrixPropertiesKhr {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize;
  uint32_t NSize;
  uint32_t KSize;
  int32_t AType;  // VkComponentTypeKHR
  int32_t BType;
  int32_t CType;
  int32_t ResultType;
  VkBool32 saturatingAccumulation;
  int32_t scope;  // VkScopeKHR
};

struct PhysicalDeviceCooperativeMatrixFeaturesKhr {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
};

using GetCooperativeMatrixPropertiesKhrFn = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*,
                                                                   CooperativeMatrixPropertiesKhr*);

// Extension names the headers lack (newer than 1.3.239).
constexpr const char* kKhrCooperativeMatrix = "VK_KHR_cooperative_matrix";
constexpr const char* kNvCooperativeMatrix2 = "VK_NV_cooperative_matrix2";

// The extensions reported under "extensions_of_interest": the ones the
// runtime's kernel variants or the benchmark kit look for.
const char* const kExtensionsOfInterest[] = {
    "VK_KHR_shader_float16_int8",   "VK_KHR_16bit_storage",
    "VK_KHR_8bit_storage",          "VK_EXT_subgroup_size_control",
    "VK_KHR_shader_integer_dot_product", "VK_EXT_shader_atomic_float",
    kKhrCooperativeMatrix,          "VK_NV_cooperative_matrix",
    kNvCooperativeMatrix2,          "VK_KHR_shader_subgroup_extended_types",
    "VK_EXT_memory_budget",         "VK_KHR_pipeline_executable_properties",
};

// A Vulkan call failed after the instance exists: carries the call and the
// VkResult so main() can say what failed and exit 1.
struct VulkanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws VulkanError naming `what` when `result` is an error. VK_INCOMPLETE
// is not one: the two-call enumerations below handle it by retrying.
void check(VkResult result, const char* what) {
  if (result < 0) {
    throw VulkanError(std::string(what) + " failed with VkResult " + std::to_string(static_cast<int>(result)));
  }
}

// "major.minor.patch" of a Vulkan-encoded version (apiVersion, loader
// version): the variant bits are ignored, as every Vulkan implementation here
// uses variant 0.
std::string version_string(uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." + std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

// NVIDIA packs its driver version as major (bits 31..22) and minor (bits
// 21..14), e.g. 550.54; the Vulkan encoding would print it wrongly, so it
// is decoded separately for vendor 0x10de.
std::string nvidia_driver_version(uint32_t version) {
  return std::to_string((version >> 22) & 0x3ffu) + "." + std::to_string((version >> 14) & 0xffu);
}

// The JSON name of a VkPhysicalDeviceType.
const char* device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// The name of a VkComponentTypeKHR / VkComponentTypeNV value (the NV values
// are the KHR ones' first eleven). Values beyond the core eleven come from
// later extensions (bfloat16, packed int8, fp8); anything unknown is printed
// with its number, so a newer driver's type is visible rather than dropped.
std::string component_type_name(int32_t type) {
  static const char* const kCore[] = {"float16", "float32", "float64", "sint8",  "sint16", "sint32",
                                      "sint64",  "uint8",   "uint16",  "uint32", "uint64"};
  if (type >= 0 && type < 11) return kCore[type];
  switch (type) {
    case 1000141000: return "bfloat16";
    case 1000491000: return "sint8_packed";
    case 1000491001: return "uint8_packed";
    case 1000491002: return "float_e4m3";
    case 1000491003: return "float_e5m2";
    default: return "unknown(" + std::to_string(type) + ")";
  }
}

// A short form of a component_type_name for the --summary lines ("f16",
// "s8"); the longer names (bfloat16, packed and fp8 types) stay as they are.
std::string component_type_short(const std::string& name) {
  if (name.rfind("float", 0) == 0 && name.size() <= 7) return "f" + name.substr(5);
  if (name.rfind("sint", 0) == 0) return "s" + name.substr(4);
  if (name.rfind("uint", 0) == 0 && name.find('_') == std::string::npos) return "u" + name.substr(4);
  return name;
}

// The name of a VkScopeKHR / VkScopeNV value (same numbering).
std::string scope_name(int32_t scope) {
  switch (scope) {
    case 1: return "device";
    case 2: return "workgroup";
    case 3: return "subgroup";
    case 5: return "queue_family";
    default: return "unknown(" + std::to_string(scope) + ")";
  }
}

// The subgroup operation bits as names, in the order of the specification's
// VkSubgroupFeatureFlagBits, so the list reads the same on every device.
Json subgroup_operation_names(VkSubgroupFeatureFlags flags) {
  static const std::pair<VkSubgroupFeatureFlagBits, const char*> kBits[] = {
      {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
      {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
      {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
      {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
      {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},
      {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"},
      {VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV, "partitioned_nv"},
  };
  Json names = Json::array();
  for (const auto& [bit, name] : kBits) {
    if (flags & bit) names.push_back(name);
  }
  return names;
}

// Appends `next` to a pNext chain whose last link is `*tail`, and makes it
// the new tail. Structures are chained in the order they are added, so each
// one is only linked when the caller has decided it may be queried.
template <typename T>
void chain(void**& tail, T& next) {
  *tail = &next;
  tail = &next.pNext;
}

// The names of the device extensions, for presence tests.
std::set<std::string> device_extensions(VkPhysicalDevice device) {
  uint32_t count = 0;
  std::vector<VkExtensionProperties> props;
  VkResult result;
  do {
    check(vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr),
          "vkEnumerateDeviceExtensionProperties");
    props.resize(count);
    result = vkEnumerateDeviceExtensionProperties(device, nullptr, &count, props.data());
    check(result, "vkEnumerateDeviceExtensionProperties");
  } while (result == VK_INCOMPLETE);
  std::set<std::string> names;
  for (uint32_t i = 0; i < count; ++i) names.insert(props[i].extensionName);
  return names;
}

// The cooperative-matrix shapes a query entry point lists (the NV or the KHR
// one: the same two-call enumeration over different structures), each turned
// into JSON by `to_json`. The entry point is fetched from the instance
// because the loader does not export extension functions; an absent one (a
// loader that does not know the extension) yields an empty list.
template <typename Props, typename Fn, typename ToJson>
Json cooperative_matrix_shapes(VkInstance instance, VkPhysicalDevice device, const char* entry, Props blank,
                               ToJson to_json) {
  auto fn = reinterpret_cast<Fn>(vkGetInstanceProcAddr(instance, entry));
  Json list = Json::array();
  if (fn == nullptr) return list;
  uint32_t count = 0;
  std::vector<Props> props;
  VkResult result;
  do {
    check(fn(device, &count, nullptr), entry);
    props.assign(count, blank);
    result = fn(device, &count, props.data());
    check(result, entry);
  } while (result == VK_INCOMPLETE);
  for (uint32_t i = 0; i < count; ++i) list.push_back(to_json(props[i]));
  return list;
}

// One shape in the common JSON form: sizes, component types ("d" is the
// result type, named DType by NV and ResultType by KHR) and scope.
template <typename Props, typename ComponentType>
Json shape_json(const Props& p, ComponentType result) {
  return Json{{"m", p.MSize},
              {"n", p.NSize},
              {"k", p.KSize},
              {"a", component_type_name(p.AType)},
              {"b", component_type_name(p.BType)},
              {"c", component_type_name(p.CType)},
              {"d", component_type_name(result)},
              {"scope", scope_name(p.scope)}};
}

// The NV shapes in the common JSON form.
Json nv_cooperative_matrix_properties(VkInstance instance, VkPhysicalDevice device) {
  VkCooperativeMatrixPropertiesNV blank{VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV};
  return cooperative_matrix_shapes<VkCooperativeMatrixPropertiesNV, PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      instance, device, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", blank,
      [](const VkCooperativeMatrixPropertiesNV& p) { return shape_json(p, p.DType); });
}

// The KHR shapes, same form as the NV ones plus saturating_accumulation (the
// KHR structure has it; "d" is its ResultType).
Json khr_cooperative_matrix_properties(VkInstance instance, VkPhysicalDevice device) {
  CooperativeMatrixPropertiesKhr blank{};
  blank.sType = kStypeCooperativeMatrixPropertiesKhr;
  return cooperative_matrix_shapes<CooperativeMatrixPropertiesKhr, GetCooperativeMatrixPropertiesKhrFn>(
      instance, device, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", blank,
      [](const CooperativeMatrixPropertiesKhr& p) {
        Json j = shape_json(p, p.ResultType);
        j["saturating_accumulation"] = p.saturatingAccumulation == VK_TRUE;
        return j;
      });
}

// Everything reported for one physical device. `instance_api` is the
// apiVersion the instance was created with: the device's effective version
// is the lower of the two, and it decides which core structures may be
// chained.
Json describe_device(VkInstance instance, uint32_t instance_api, VkPhysicalDevice device) {
  const std::set<std::string> exts = device_extensions(device);
  auto has = [&exts](const char* name) { return exts.count(name) != 0; };

  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(device, &base);
  const uint32_t api = std::min(instance_api, base.apiVersion);
  const bool v11 = api >= VK_API_VERSION_1_1;
  const bool v12 = api >= VK_API_VERSION_1_2;
  const bool v13 = api >= VK_API_VERSION_1_3;

  // Properties: each structure only where core or its extension allows.
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  void** tail = &props2.pNext;
  VkPhysicalDeviceMaintenance3Properties maintenance3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  const bool have_maintenance3 = v11 || has(VK_KHR_MAINTENANCE_3_EXTENSION_NAME);
  if (have_maintenance3) chain(tail, maintenance3);
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  if (v11) chain(tail, subgroup);
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  const bool have_size_control = v13 || has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  if (have_size_control) chain(tail, size_control);
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  const bool have_driver = v12 || has(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (have_driver) chain(tail, driver);
  vkGetPhysicalDeviceProperties2(device, &props2);
  const VkPhysicalDeviceProperties& p = props2.properties;

  // Features: the VulkanNN structures where the version has them, else the
  // individual (core 1.1 or extension) structures.
  VkPhysicalDeviceFeatures2 feats2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  tail = &feats2.pNext;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDevice16BitStorageFeatures f16storage{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features f16int8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice8BitStorageFeatures f8storage{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceBufferDeviceAddressFeatures fbda{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
  VkPhysicalDeviceTimelineSemaphoreFeatures ftimeline{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  VkPhysicalDeviceVulkanMemoryModelFeatures fmodel{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  VkPhysicalDeviceSynchronization2Features fsync2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures fsize{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV fcoop_nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  PhysicalDeviceCooperativeMatrixFeaturesKhr fcoop_khr{kStypePhysicalDeviceCooperativeMatrixFeaturesKhr};
  if (v12) {
    chain(tail, f11);
    chain(tail, f12);
  } else {
    if (v11 || has(VK_KHR_16BIT_STORAGE_EXTENSION_NAME)) chain(tail, f16storage);
    if (has(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) chain(tail, f16int8);
    if (has(VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) chain(tail, f8storage);
    if (has(VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME)) chain(tail, fbda);
    if (has(VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME)) chain(tail, ftimeline);
    if (has(VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME)) chain(tail, fmodel);
  }
  if (v13) {
    chain(tail, f13);
  } else {
    if (has(VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME)) chain(tail, fsync2);
    if (has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) chain(tail, fsize);
  }
  const bool nv_coop = has(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const bool khr_coop = has(kKhrCooperativeMatrix);
  if (nv_coop) chain(tail, fcoop_nv);
  if (khr_coop) chain(tail, fcoop_khr);
  vkGetPhysicalDeviceFeatures2(device, &feats2);
  const VkPhysicalDeviceFeatures& f = feats2.features;

  // One value per feature whichever structure carried it.
  auto yes = [](VkBool32 b) { return b == VK_TRUE; };
  Json features{
      {"storage_buffer_16bit_access", yes(v12 ? f11.storageBuffer16BitAccess : f16storage.storageBuffer16BitAccess)},
      {"uniform_and_storage_buffer_16bit_access",
       yes(v12 ? f11.uniformAndStorageBuffer16BitAccess : f16storage.uniformAndStorageBuffer16BitAccess)},
      {"storage_push_constant16", yes(v12 ? f11.storagePushConstant16 : f16storage.storagePushConstant16)},
      {"shader_float16", yes(v12 ? f12.shaderFloat16 : f16int8.shaderFloat16)},
      {"shader_int8", yes(v12 ? f12.shaderInt8 : f16int8.shaderInt8)},
      {"storage_buffer_8bit_access", yes(v12 ? f12.storageBuffer8BitAccess : f8storage.storageBuffer8BitAccess)},
      {"shader_int16", yes(f.shaderInt16)},
      {"shader_int64", yes(f.shaderInt64)},
      {"shader_float64", yes(f.shaderFloat64)},
      {"buffer_device_address", yes(v12 ? f12.bufferDeviceAddress : fbda.bufferDeviceAddress)},
      {"timeline_semaphore", yes(v12 ? f12.timelineSemaphore : ftimeline.timelineSemaphore)},
      {"synchronization2", yes(v13 ? f13.synchronization2 : fsync2.synchronization2)},
      {"vulkan_memory_model", yes(v12 ? f12.vulkanMemoryModel : fmodel.vulkanMemoryModel)},
      {"subgroup_size_control", yes(v13 ? f13.subgroupSizeControl : fsize.subgroupSizeControl)},
      {"compute_full_subgroups", yes(v13 ? f13.computeFullSubgroups : fsize.computeFullSubgroups)},
  };

  Json dev;
  dev["name"] = p.deviceName;
  dev["type"] = device_type_name(p.deviceType);
  dev["vendor_id"] = p.vendorID;
  dev["device_id"] = p.deviceID;
  dev["api_version"] = version_string(p.apiVersion);
  dev["driver_version"] = Json{{"raw", p.driverVersion}};
  if (p.vendorID == 0x10de) dev["driver_version"]["nvidia"] = nvidia_driver_version(p.driverVersion);
  if (have_driver) {
    dev["driver_name"] = driver.driverName;
    dev["driver_info"] = driver.driverInfo;
    const auto& c = driver.conformanceVersion;
    dev["conformance_version"] = std::to_string(c.major) + "." + std::to_string(c.minor) + "." +
                                 std::to_string(c.subminor) + "." + std::to_string(c.patch);
  } else {
    dev["driver_name"] = nullptr;
    dev["driver_info"] = nullptr;
    dev["conformance_version"] = nullptr;
  }

  const VkPhysicalDeviceLimits& l = p.limits;
  dev["limits"] = Json{
      {"max_compute_shared_memory_bytes", l.maxComputeSharedMemorySize},
      {"max_workgroup_invocations", l.maxComputeWorkGroupInvocations},
      {"max_workgroup_size", {l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupSize[1], l.maxComputeWorkGroupSize[2]}},
      {"max_workgroup_count", {l.maxComputeWorkGroupCount[0], l.maxComputeWorkGroupCount[1], l.maxComputeWorkGroupCount[2]}},
      {"max_storage_buffer_range", l.maxStorageBufferRange},
      {"max_push_constants_size", l.maxPushConstantsSize},
      {"timestamp_period_ns", l.timestampPeriod},
      {"timestamp_compute_and_graphics", yes(l.timestampComputeAndGraphics)},
      {"min_storage_buffer_offset_alignment", l.minStorageBufferOffsetAlignment},
      {"max_memory_allocation_size", have_maintenance3 ? Json(maintenance3.maxMemoryAllocationSize) : Json(nullptr)},
      {"max_bound_descriptor_sets", l.maxBoundDescriptorSets},
  };

  // Subgroup properties exist from Vulkan 1.1; a 1.0 device reports nulls.
  Json sg;
  if (v11) {
    sg["size"] = subgroup.subgroupSize;
    sg["supported_stages"] = Json{{"compute", (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0}};
    sg["supported_operations"] = subgroup_operation_names(subgroup.supportedOperations);
    sg["quad_operations_in_all_stages"] = yes(subgroup.quadOperationsInAllStages);
  } else {
    sg["size"] = nullptr;
    sg["supported_stages"] = nullptr;
    sg["supported_operations"] = nullptr;
    sg["quad_operations_in_all_stages"] = nullptr;
  }
  if (have_size_control) {
    sg["size_control"] = Json{
        {"min_subgroup_size", size_control.minSubgroupSize},
        {"max_subgroup_size", size_control.maxSubgroupSize},
        {"max_compute_workgroup_subgroups", size_control.maxComputeWorkgroupSubgroups},
        {"required_subgroup_size_stages_compute",
         (size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0},
    };
  } else {
    sg["size_control"] = nullptr;
  }
  dev["subgroup"] = sg;
  dev["features"] = features;

  Json coop;
  coop["nv"] = nv_coop;
  coop["nv_feature"] = nv_coop && yes(fcoop_nv.cooperativeMatrix);
  coop["nv_properties"] = nv_coop ? nv_cooperative_matrix_properties(instance, device) : Json::array();
  coop["khr"] = khr_coop;
  coop["khr_feature"] = khr_coop && yes(fcoop_khr.cooperativeMatrix);
  coop["khr_properties"] = khr_coop ? khr_cooperative_matrix_properties(instance, device) : Json::array();
  coop["nv2"] = has(kNvCooperativeMatrix2);
  dev["cooperative_matrix"] = coop;

  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(device, &mem);
  Json heaps = Json::array();
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    heaps.push_back(Json{{"size_bytes", mem.memoryHeaps[i].size},
                         {"device_local", (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0}});
  }
  dev["memory_heaps"] = heaps;
  Json types = Json::array();
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags fl = mem.memoryTypes[i].propertyFlags;
    types.push_back(Json{{"heap_index", mem.memoryTypes[i].heapIndex},
                         {"device_local", (fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0},
                         {"host_visible", (fl & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0},
                         {"host_coherent", (fl & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0},
                         {"host_cached", (fl & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0}});
  }
  dev["memory_type_count"] = mem.memoryTypeCount;
  dev["memory_types"] = types;

  // Queue families: the timestamp bits decide whether GPU timing works on
  // the compute queue a benchmark would use.
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, families.data());
  Json queues = Json::array();
  for (uint32_t i = 0; i < family_count; ++i) {
    const VkQueueFlags qf = families[i].queueFlags;
    queues.push_back(Json{{"count", families[i].queueCount},
                          {"graphics", (qf & VK_QUEUE_GRAPHICS_BIT) != 0},
                          {"compute", (qf & VK_QUEUE_COMPUTE_BIT) != 0},
                          {"transfer", (qf & VK_QUEUE_TRANSFER_BIT) != 0},
                          {"timestamp_valid_bits", families[i].timestampValidBits}});
  }
  dev["queue_families"] = queues;

  Json interest;
  for (const char* name : kExtensionsOfInterest) interest[name] = has(name);
  dev["extensions_of_interest"] = interest;
  return dev;
}

// "16x16x16 f16->f32 (7 shapes)": the first (the driver's preferred) shape
// of a cooperative matrix property list and how many there are.
std::string cooperative_matrix_summary(const Json& list) {
  if (list.empty()) return "no shapes";
  const Json& first = list.front();
  std::ostringstream out;
  out << list.size() << (list.size() == 1 ? " shape" : " shapes") << ", e.g. " << first["m"].get<uint32_t>() << "x"
      << first["n"].get<uint32_t>() << "x" << first["k"].get<uint32_t>() << " "
      << component_type_short(first["a"].get<std::string>()) << "->"
      << component_type_short(first["d"].get<std::string>());
  return out.str();
}

// "yes" / "no" for the --summary lines.
const char* yes_no(const Json& value) { return value.is_boolean() && value.get<bool>() ? "yes" : "no"; }

// The --summary text of one device, built from its JSON so that the two
// outputs cannot disagree.
std::string device_summary(size_t index, const Json& dev) {
  std::ostringstream out;
  out << "device " << index << ": " << dev["name"].get<std::string>() << " (" << dev["type"].get<std::string>()
      << ")\n";
  out << "  driver: ";
  if (dev["driver_name"].is_string()) {
    out << dev["driver_name"].get<std::string>();
    const std::string info = dev["driver_info"].get<std::string>();
    if (!info.empty()) out << ", " << info;
  } else {
    out << "(no driver properties)";
  }
  if (dev["driver_version"].contains("nvidia")) out << ", NVIDIA " << dev["driver_version"]["nvidia"].get<std::string>();
  out << "; Vulkan " << dev["api_version"].get<std::string>() << "\n";

  const Json& sg = dev["subgroup"];
  out << "  subgroup: ";
  if (sg["size"].is_number()) {
    out << sg["size"].get<uint32_t>();
  } else {
    out << "n/a";
  }
  if (sg["size_control"].is_object()) {
    out << " (" << sg["size_control"]["min_subgroup_size"].get<uint32_t>() << ".."
        << sg["size_control"]["max_subgroup_size"].get<uint32_t>() << ")";
  }
  out << ", shared memory " << dev["limits"]["max_compute_shared_memory_bytes"].get<uint32_t>() / 1024 << " KiB\n";

  const Json& f = dev["features"];
  out << "  fp16: storage " << yes_no(f["storage_buffer_16bit_access"]) << ", arithmetic " << yes_no(f["shader_float16"])
      << "; int8: storage " << yes_no(f["storage_buffer_8bit_access"]) << ", arithmetic " << yes_no(f["shader_int8"])
      << "\n";

  const Json& coop = dev["cooperative_matrix"];
  out << "  cooperative matrix: NV ";
  if (coop["nv"].get<bool>()) {
    out << "yes (" << cooperative_matrix_summary(coop["nv_properties"]) << ")";
  } else {
    out << "no";
  }
  out << ", KHR ";
  if (coop["khr"].get<bool>()) {
    out << "yes (" << cooperative_matrix_summary(coop["khr_properties"]) << ")";
  } else {
    out << "no";
  }
  out << ", NV2 " << yes_no(coop["nv2"]) << "\n";

  uint64_t device_local = 0;
  for (const Json& heap : dev["memory_heaps"]) {
    if (heap["device_local"].get<bool>()) device_local += heap["size_bytes"].get<uint64_t>();
  }
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.2f", static_cast<double>(device_local) / (1024.0 * 1024.0 * 1024.0));
  out << "  device-local memory: " << gib << " GiB\n";
  return out.str();
}

// The message and exit status for a machine without a usable Vulkan device:
// 77, so the test command reports "skipped" rather than a failure.
int no_device(const std::string& why) {
  std::cerr << "oaaxvk-device-info: no Vulkan device: " << why
            << "; install a Vulkan driver (mesa-vulkan-drivers for lavapipe) or check VK_ICD_FILENAMES\n";
  return 77;
}

// Owns the instance so every exit path (including a VulkanError thrown
// mid-query) destroys it.
struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  ~Instance() {
    if (handle != VK_NULL_HANDLE) vkDestroyInstance(handle, nullptr);
  }
};

}  // namespace

// Creates a layer-free instance at the loader's version, describes every
// physical device and prints the JSON (or the summary); see the exit status
// at the top of the file.
int main(int argc, char** argv) {
  CLI::App app{"oaaxvk-device-info: every Vulkan device's compute capabilities as JSON (stdout)."};
  std::string json_path;
  bool summary = false;
  app.add_option("--device-json", json_path, "also write the JSON to this file");
  app.add_flag("--summary", summary, "print a few human-readable lines per device instead of the JSON");
  CLI11_PARSE(app, argc, argv);

  // The loader's version decides the instance's apiVersion: with a 1.1+
  // instance the *2 queries are core and every device's effective version is
  // its own (up to the loader's). A 1.0 loader lacks vkEnumerateInstanceVersion.
  auto enumerate_version = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  uint32_t loader_api = VK_API_VERSION_1_0;
  if (enumerate_version != nullptr && enumerate_version(&loader_api) != VK_SUCCESS) loader_api = VK_API_VERSION_1_0;
  if (loader_api < VK_API_VERSION_1_1) {
    return no_device("the Vulkan loader is " + version_string(loader_api) +
                     ", this program needs a Vulkan 1.1 loader (libvulkan1 from a current distribution)");
  }

  VkApplicationInfo app_info{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app_info.pApplicationName = "oaaxvk-device-info";
  app_info.apiVersion = loader_api;
  VkInstanceCreateInfo create_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  create_info.pApplicationInfo = &app_info;
  Instance instance;
  if (VkResult r = vkCreateInstance(&create_info, nullptr, &instance.handle); r != VK_SUCCESS) {
    instance.handle = VK_NULL_HANDLE;
    return no_device("vkCreateInstance failed with VkResult " + std::to_string(static_cast<int>(r)));
  }

  try {
    uint32_t count = 0;
    std::vector<VkPhysicalDevice> devices;
    VkResult result;
    do {
      if (VkResult r = vkEnumeratePhysicalDevices(instance.handle, &count, nullptr); r < 0) {
        return no_device("vkEnumeratePhysicalDevices failed with VkResult " + std::to_string(static_cast<int>(r)));
      }
      devices.resize(count);
      result = vkEnumeratePhysicalDevices(instance.handle, &count, devices.data());
      check(result, "vkEnumeratePhysicalDevices");
    } while (result == VK_INCOMPLETE);
    if (count == 0) return no_device("the Vulkan loader found no physical device");

    Json root;
    root["loader_api_version"] = version_string(loader_api);
    root["devices"] = Json::array();
    for (uint32_t i = 0; i < count; ++i) root["devices"].push_back(describe_device(instance.handle, loader_api, devices[i]));

    // Invalid UTF-8 in a driver string is replaced rather than aborting the dump.
    const std::string text = root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
    if (!json_path.empty()) {
      std::ofstream file(json_path);
      file << text;
      file.close();
      if (!file) {
        std::cerr << "oaaxvk-device-info: cannot write " << json_path
                  << "; check that its directory exists and is writable\n";
        return 1;
      }
    }
    if (summary) {
      for (size_t i = 0; i < root["devices"].size(); ++i) std::cout << device_summary(i, root["devices"][i]);
    } else {
      std::cout << text;
    }
  } catch (const VulkanError& e) {
    std::cerr << "oaaxvk-device-info: " << e.what()
              << "; the driver rejected a device query (try another ICD via VK_ICD_FILENAMES)\n";
    return 1;
  }
  return 0;
}

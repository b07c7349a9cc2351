// oaaxvk-pipeline-stats: the Vulkan driver's own statistics of the pipelines
// a bundle's rows create (VK_KHR_pipeline_executable_properties), as JSON:
// what the compiler made of each kernel at each row's specialization
// (registers, spills to local memory, shared memory, instruction counts:
// whatever the driver reports, under its own names). The GPU device check's
// convolution-tile probe (bench/conv_probe.py, docs/gpu-check.md) sets
// conv2d_gemm_gpu's figures beside gemm_gpu's, which timing alone cannot
// tell apart from the other suspects.
//
//   oaaxvk-pipeline-stats BUNDLE.oinf [--device D] [--compile-only]
//
// --compile-only builds every pipeline the same way without asking for
// statistics (each entry then has "executables": []), on any device: how
// the tool is tested where no driver offers the extension (lavapipe).
//
// Rows: every row of program.dispatch (table "default") and of
// program.dispatch.gpu ("gpu"), and for a GPU row with precision forms its
// fp16 form ("gpu fp16") and that form's cooperative-matrix form
// ("gpu coopmat"); a kernel whose required capabilities the device lacks is
// listed with them and not compiled. Each distinct (kernel, specialization
// values) pair is compiled once (on up to 8 threads), without a pipeline
// cache (a cached pipeline may carry no statistics), and listed with the ops
// of the rows that use it:
//   {"device": NAME, "bundle": PATH, "pipelines": [{"table": T, "kernel": K,
//     "ops": [...], "executables": [{"name": N, "description": D,
//     "subgroup_size": S, "statistics": {NAME: VALUE, ...}}]} or
//     "missing_capabilities": [...]]}
//
// Exit status: 0 on success; 77 when there is no Vulkan device or it does
// not offer VK_KHR_pipeline_executable_properties (nothing to report: the
// JSON then says why); 1 when the bundle cannot be read or a Vulkan call
// fails (the message names the call and the kernel); 2 on bad usage.
#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/bundle.h"
#include "runtime/vk_context.h"

namespace {

using oaaxvk::Status;
using oaaxvk::runtime::Bundle;
using oaaxvk::runtime::Dispatch;
using oaaxvk::runtime::Kernel;
using oaaxvk::runtime::VkCheck;
using json = nlohmann::json;

// One row to compile: its table, kernel and specialization values.
struct Row {
  std::string table;
  uint32_t kernel;
  std::vector<uint32_t> spec;
  std::string op;
};

json StatisticValue(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 == VK_TRUE;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return s.value.i64;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return s.value.u64;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return s.value.f64;
    default: return nullptr;
  }
}

// Compiles kernel `k` at `spec` (with statistics capture unless
// compile_only) and returns its executables' statistics; the pipeline and
// its layouts are destroyed again.
Status Compile(VkDevice dev, const Bundle& b, uint32_t k, const std::vector<uint32_t>& spec, bool compile_only,
               json* out) {
  const Kernel& kernel = b.kernels[k];
  const std::string what = "kernel '" + kernel.name + "'";
  auto props_fn = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR"));
  auto stats_fn = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR"));
  if (!compile_only && (!props_fn || !stats_fn))
    return oaaxvk::Internal("the driver lists VK_KHR_pipeline_executable_properties without its functions");
  VkShaderModule sm = VK_NULL_HANDLE;
  VkDescriptorSetLayout sets[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  VkPipelineLayout pl = VK_NULL_HANDLE;
  VkPipeline p = VK_NULL_HANDLE;
  Status st = [&]() -> Status {
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = kernel.spirv_words * 4;
    smi.pCode = kernel.spirv;
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkCreateShaderModule(dev, &smi, nullptr, &sm), "vkCreateShaderModule").WithContext(what));
    // The runtime's layouts (pipelines.cpp): set 0 the kernel's bindings, set 1 the parameter buffer.
    std::vector<VkDescriptorSetLayoutBinding> lb(kernel.bindings);
    for (uint32_t i = 0; i < kernel.bindings; ++i) {
      lb[i] = {};
      lb[i].binding = i;
      lb[i].descriptorType = kernel.binding_types[i] == 's' ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                             : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
      lb[i].descriptorCount = 1;
      lb[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = kernel.bindings;
    dli.pBindings = lb.data();
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorSetLayout(dev, &dli, nullptr, &sets[0]),
                                   "vkCreateDescriptorSetLayout")
                               .WithContext(what));
    uint32_t set_count = 1;
    if (b.features.count("parameter_buffer")) {
      VkDescriptorSetLayoutBinding pb{};
      pb.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
      pb.descriptorCount = 1;
      pb.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
      VkDescriptorSetLayoutCreateInfo pli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
      pli.bindingCount = 1;
      pli.pBindings = &pb;
      OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorSetLayout(dev, &pli, nullptr, &sets[1]),
                                     "vkCreateDescriptorSetLayout")
                                 .WithContext("parameter buffer"));
      set_count = 2;
    }
    VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    plci.setLayoutCount = set_count;
    plci.pSetLayouts = sets;
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkCreatePipelineLayout(dev, &plci, nullptr, &pl), "vkCreatePipelineLayout").WithContext(what));
    std::vector<VkSpecializationMapEntry> entries(spec.size());
    for (uint32_t s = 0; s < spec.size(); ++s) entries[s] = {s, 4 * s, 4};
    VkSpecializationInfo si{};
    si.mapEntryCount = static_cast<uint32_t>(entries.size());
    si.pMapEntries = entries.data();
    si.dataSize = spec.size() * 4;
    si.pData = spec.data();
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.flags = compile_only ? 0 : VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = sm;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
    ci.layout = pl;
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, nullptr, &p), "vkCreateComputePipelines")
            .WithContext(what));
    *out = json::array();
    if (compile_only) return Status::Ok();
    VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pi.pipeline = p;
    uint32_t n = 0;
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(props_fn(dev, &pi, &n, nullptr), "vkGetPipelineExecutablePropertiesKHR").WithContext(what));
    std::vector<VkPipelineExecutablePropertiesKHR> props(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(props_fn(dev, &pi, &n, props.data()), "vkGetPipelineExecutablePropertiesKHR").WithContext(what));
    for (uint32_t e = 0; e < n; ++e) {
      VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
      ei.pipeline = p;
      ei.executableIndex = e;
      uint32_t ns = 0;
      OAAXVK_RETURN_IF_ERROR(
          VkCheck(stats_fn(dev, &ei, &ns, nullptr), "vkGetPipelineExecutableStatisticsKHR").WithContext(what));
      std::vector<VkPipelineExecutableStatisticKHR> stats(ns, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      OAAXVK_RETURN_IF_ERROR(
          VkCheck(stats_fn(dev, &ei, &ns, stats.data()), "vkGetPipelineExecutableStatisticsKHR").WithContext(what));
      json values = json::object();
      for (uint32_t s = 0; s < ns; ++s) values[stats[s].name] = StatisticValue(stats[s]);
      out->push_back({{"name", props[e].name},
                      {"description", props[e].description},
                      {"subgroup_size", props[e].subgroupSize},
                      {"statistics", values}});
    }
    return Status::Ok();
  }();
  if (p) vkDestroyPipeline(dev, p, nullptr);
  if (pl) vkDestroyPipelineLayout(dev, pl, nullptr);
  for (VkDescriptorSetLayout l : sets)
    if (l) vkDestroyDescriptorSetLayout(dev, l, nullptr);
  if (sm) vkDestroyShaderModule(dev, sm, nullptr);
  return st;
}

int Usage() {
  std::fprintf(stderr, "usage: oaaxvk-pipeline-stats BUNDLE.oinf [--device D] [--compile-only]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, device;
  bool compile_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = argv[++i];
    } else if (std::strcmp(argv[i], "--compile-only") == 0) {
      compile_only = true;
    } else if (argv[i][0] == '-' || !path.empty()) {
      return Usage();
    } else {
      path = argv[i];
    }
  }
  if (path.empty()) return Usage();
  auto bundle = oaaxvk::runtime::LoadBundle(path);
  if (!bundle.ok()) {
    std::fprintf(stderr, "oaaxvk-pipeline-stats: %s\n", bundle.status().ToString().c_str());
    return 1;
  }
  oaaxvk::runtime::ContextOptions options;
  options.device = device;
  options.pipeline_statistics = !compile_only;
  auto ctx = oaaxvk::runtime::VkContext::Create(options);
  json out = {{"bundle", path}};
  if (!ctx.ok()) {
    out["error"] = "no Vulkan device: " + ctx.status().ToString();
    std::printf("%s\n", out.dump(1).c_str());
    return 77;
  }
  out["device"] = (*ctx)->device_name();
  if (!compile_only && !(*ctx)->pipeline_statistics()) {
    out["error"] = "the device does not offer VK_KHR_pipeline_executable_properties (pipelineExecutableInfo)";
    std::printf("%s\n", out.dump(1).c_str());
    return 77;
  }
  const Bundle& b = *bundle;
  std::vector<Row> rows;
  auto add = [&](const char* table, const std::vector<Dispatch>& ds) {
    for (const Dispatch& d : ds) {
      const std::vector<uint32_t> spec(b.spec.begin() + d.first_spec, b.spec.begin() + d.first_spec + d.n_spec);
      const std::string op = d.op < b.op_names.size() ? b.op_names[d.op] : "";
      rows.push_back({table, d.kernel, spec, op});
      if (std::strcmp(table, "gpu") != 0) continue;
      const int64_t f16 = b.kernels[d.kernel].fp16_kernel;
      if (f16 < 0) continue;
      rows.push_back({"gpu fp16", static_cast<uint32_t>(f16), spec, op});
      const int64_t mat = b.kernels[f16].matrix_kernel;
      if (mat >= 0) rows.push_back({"gpu coopmat", static_cast<uint32_t>(mat), spec, op});
    }
  };
  add("default", b.dispatches);
  add("gpu", b.gpu_dispatches);
  oaaxvk::runtime::DeviceLimits limits;
  limits.capabilities = (*ctx)->capabilities();
  // (table, kernel, values) -> its entry in out["pipelines"] and its row.
  std::map<std::pair<std::string, std::pair<uint32_t, std::vector<uint32_t>>>, size_t> seen;
  std::vector<const Row*> unique;
  out["pipelines"] = json::array();
  for (const Row& r : rows) {
    const auto key = std::make_pair(r.table, std::make_pair(r.kernel, r.spec));
    auto it = seen.find(key);
    if (it != seen.end()) {
      out["pipelines"][it->second]["ops"].push_back(r.op);
      continue;
    }
    seen[key] = unique.size();
    unique.push_back(&r);
    json e = {{"table", r.table}, {"kernel", b.kernels[r.kernel].name}, {"ops", json::array({r.op})}};
    const std::vector<std::string> missing = oaaxvk::runtime::MissingCapabilities(b.kernels[r.kernel], limits);
    if (!missing.empty()) e["missing_capabilities"] = missing;
    out["pipelines"].push_back(e);
  }
  // Compiled on a few threads (the driver's compiler dominates; creating
  // pipelines concurrently is allowed), reported in row order.
  std::vector<json> exes(unique.size());
  std::vector<Status> status(unique.size());
  std::vector<bool> skip(unique.size());
  for (size_t i = 0; i < unique.size(); ++i) skip[i] = out["pipelines"][i].contains("missing_capabilities");
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t i = next++; i < unique.size(); i = next++) {
      if (skip[i]) continue;
      try {
        status[i] = Compile((*ctx)->device(), b, unique[i]->kernel, unique[i]->spec, compile_only, &exes[i]);
      } catch (...) {  // host memory ran out
        status[i] = oaaxvk::ResourceExhausted("out of host memory while compiling a pipeline");
      }
    }
  };
  const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 8u));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (size_t i = 0; i < unique.size(); ++i) {
    if (!status[i].ok()) {
      std::fprintf(stderr, "oaaxvk-pipeline-stats: %s\n", status[i].ToString().c_str());
      return 1;
    }
    if (!skip[i]) out["pipelines"][i]["executables"] = exes[i];
  }
  std::printf("%s\n", out.dump(1).c_str());
  return 0;
}

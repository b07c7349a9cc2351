#include "runtime/pipelines.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

#include <unistd.h>

#include "runtime/log.h"

namespace oaaxvk::runtime {

namespace {

using Clock = std::chrono::steady_clock;

// Descriptor type of a binding-type letter (Kernel::binding_types).
VkDescriptorType DescriptorType(char t) {
  return t == 's' ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
}

}  // namespace

Status Pipelines::Create(const std::string& cache_path) {
  cache_path_ = cache_path;
  if (!cache_path_.empty()) {
    std::vector<uint8_t> data;
    if (FILE* f = fopen(cache_path_.c_str(), "rb")) {
      uint8_t buf[65536];
      size_t got;
      while ((got = fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + got);
      fclose(f);
    }
    VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    pci.initialDataSize = data.size();
    pci.pInitialData = data.empty() ? nullptr : data.data();
    VkResult r = vkCreatePipelineCache(dev_, &pci, nullptr, &cache_);
    if (r != VK_SUCCESS && !data.empty()) {
      Log(LogLevel::kWarn, StrFormat("pipeline cache '%s' rejected (%s); starting empty",
                                     cache_path_.c_str(), VkResultName(r)));
      pci.initialDataSize = 0;
      pci.pInitialData = nullptr;
      r = vkCreatePipelineCache(dev_, &pci, nullptr, &cache_);
    }
    OAAXVK_RETURN_IF_ERROR(VkCheck(r, "vkCreatePipelineCache"));
  }
  // Shader modules only for the kernels of the chosen rows: the bundle also
  // carries the other tables' kernels, whose SPIR-V may declare capabilities
  // the device lacks or did not enable (StorageBuffer16BitAccess on a device
  // without it), which a module must not be created from.
  std::vector<bool> used(bundle_->kernels.size(), false);
  for (const Dispatch& d : bundle_->dispatches) used[d.kernel] = true;
  if (bundle_->features.count("parameter_buffer")) {  // set 1 of every pipeline layout
    VkDescriptorSetLayoutBinding lb{};
    lb.binding = 0;
    lb.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    lb.descriptorCount = 1;
    lb.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = 1;
    dli.pBindings = &lb;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorSetLayout(dev_, &dli, nullptr, &params_layout_),
                                   "vkCreateDescriptorSetLayout")
                               .WithContext("parameter buffer"));
  }
  for (size_t j = 0; j < bundle_->kernels.size(); ++j) {
    const Kernel& k = bundle_->kernels[j];
    const std::string what = StrFormat("kernel %zu ('%s')", j, k.name.c_str());
    VkShaderModule sm = VK_NULL_HANDLE;
    if (used[j]) {
      VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
      smi.codeSize = k.spirv_words * 4;
      smi.pCode = k.spirv;
      OAAXVK_RETURN_IF_ERROR(
          VkCheck(vkCreateShaderModule(dev_, &smi, nullptr, &sm), "vkCreateShaderModule").WithContext(what));
    }
    modules_.push_back(sm);
    // Layouts too only for used kernels: an unused one may exceed the
    // device's descriptor limits, which creating its layout would violate.
    if (!used[j]) {
      set_layouts_.push_back(VK_NULL_HANDLE);
      pipeline_layouts_.push_back(VK_NULL_HANDLE);
      continue;
    }
    std::vector<VkDescriptorSetLayoutBinding> lb(k.bindings);
    for (uint32_t b = 0; b < k.bindings; ++b) {
      lb[b] = {};
      lb[b].binding = b;
      lb[b].descriptorType = DescriptorType(k.binding_types[b]);
      lb[b].descriptorCount = 1;
      lb[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = k.bindings;
    dli.pBindings = lb.data();
    VkDescriptorSetLayout dsl;
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkCreateDescriptorSetLayout(dev_, &dli, nullptr, &dsl), "vkCreateDescriptorSetLayout").WithContext(what));
    set_layouts_.push_back(dsl);
    const VkDescriptorSetLayout both[2] = {dsl, params_layout_};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = params_layout_ ? 2 : 1;
    pli.pSetLayouts = both;
    VkPipelineLayout pl;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreatePipelineLayout(dev_, &pli, nullptr, &pl), "vkCreatePipelineLayout").WithContext(what));
    pipeline_layouts_.push_back(pl);
  }
  // Feature dynamic_shapes: dispatches whose specialization values depend on
  // the shape get their pipelines per recording (AcquirePipeline); every
  // other dispatch has one pipeline for the executor's lifetime.
  const ShapeProgram& sp = bundle_->shape;
  dynamic_spec_.assign(bundle_->dispatches.size(), false);
  for (size_t i = 0; i < bundle_->dispatches.size(); ++i) {
    const Dispatch& d = bundle_->dispatches[i];
    auto it = std::lower_bound(sp.spec_expr.begin(), sp.spec_expr.end(), std::make_pair(d.first_spec, int64_t{-1}));
    dynamic_spec_[i] = it != sp.spec_expr.end() && it->first < d.first_spec + d.n_spec;
  }
  for (size_t i = 0; i < bundle_->dispatches.size(); ++i) {
    const Dispatch& d = bundle_->dispatches[i];
    if (LogEnabled(LogLevel::kDebug)) {
      const char* op = d.op < bundle_->op_names.size() ? bundle_->op_names[d.op].c_str() : "";
      Log(LogLevel::kDebug, StrFormat("dispatch %zu: op '%s' kernel '%s' groups (%u, %u, %u)%s%s", i, op,
                                      bundle_->kernels[d.kernel].name.c_str(), d.groups[0], d.groups[1], d.groups[2],
                                      d.barrier ? " after a barrier" : "",
                                      dynamic_spec_[i] ? ", specialized per shape" : ""));
    }
    if (dynamic_spec_[i]) {
      dispatch_pipeline_.push_back(VK_NULL_HANDLE);
      continue;
    }
    std::vector<uint32_t> values(bundle_->spec.begin() + d.first_spec, bundle_->spec.begin() + d.first_spec + d.n_spec);
    auto key = std::make_pair(d.kernel, values);
    auto it = pipelines_.find(key);
    if (it == pipelines_.end()) {
      OAAXVK_ASSIGN_OR_RETURN(VkPipeline p, CreatePipeline(d.kernel, values,
                                                           StrFormat("dispatch %zu, kernel %u ('%s')", i, d.kernel,
                                                                     bundle_->kernels[d.kernel].name.c_str())));
      Entry e;
      e.pipeline = p;
      e.permanent = true;
      it = pipelines_.emplace(std::move(key), e).first;
    }
    dispatch_pipeline_.push_back(it->second.pipeline);
  }
  peak_ = pipelines_.size();
  return Status::Ok();
}

StatusOr<VkPipeline> Pipelines::CreatePipeline(uint32_t kernel, const std::vector<uint32_t>& values,
                                               const std::string& what) {
  std::vector<VkSpecializationMapEntry> entries(values.size());
  for (uint32_t s = 0; s < values.size(); ++s) entries[s] = {s, 4 * s, 4};
  VkSpecializationInfo spec{};
  spec.mapEntryCount = static_cast<uint32_t>(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = values.size() * 4;
  spec.pData = values.data();
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = modules_[kernel];
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = values.empty() ? nullptr : &spec;
  ci.layout = pipeline_layouts_[kernel];
  VkPipeline p = VK_NULL_HANDLE;
  const auto start = Clock::now();
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkCreateComputePipelines(dev_, cache_, 1, &ci, nullptr, &p), "vkCreateComputePipelines")
          .WithContext(what));
  Log(LogLevel::kDebug, StrFormat("pipeline of kernel '%s' (#%u) created in %.1f ms (%s)",
                                  bundle_->kernels[kernel].name.c_str(), kernel,
                                  std::chrono::duration<double, std::milli>(Clock::now() - start).count(),
                                  what.c_str()));
  return p;
}

StatusOr<VkPipeline> Pipelines::Acquire(uint32_t kernel, const std::vector<uint32_t>& values, size_t dispatch) {
  std::lock_guard<std::mutex> lk(mu_);
  Key key(kernel, values);
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) {
    OAAXVK_ASSIGN_OR_RETURN(VkPipeline p, CreatePipeline(kernel, values,
                                                         StrFormat("dispatch %zu, kernel %u ('%s'), specialized for "
                                                                   "a shape", dispatch, kernel,
                                                                   bundle_->kernels[kernel].name.c_str())));
    Entry e;
    e.pipeline = p;
    it = pipelines_.emplace(std::move(key), e).first;
    peak_ = std::max(peak_, pipelines_.size());
  }
  ++it->second.users;
  return it->second.pipeline;
}

void Pipelines::Release(const Key& key) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) return;
  if (it->second.users > 0) --it->second.users;
  if (it->second.users == 0 && !it->second.permanent) {
    vkDestroyPipeline(dev_, it->second.pipeline, nullptr);
    pipelines_.erase(it);
  }
}

size_t Pipelines::count() const {
  std::lock_guard<std::mutex> lk(mu_);
  return pipelines_.size();
}

size_t Pipelines::peak() const {
  std::lock_guard<std::mutex> lk(mu_);
  return peak_;
}

void Pipelines::SaveCache() {
  if (!cache_ || cache_path_.empty()) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(dev_, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<uint8_t> data(size);
  VkResult r = vkGetPipelineCacheData(dev_, cache_, &size, data.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    Log(LogLevel::kWarn, StrFormat("vkGetPipelineCacheData failed: %s", VkResultName(r)));
    return;
  }
  // A temporary name of this process's own (pid and random bits), renamed
  // over the cache at the end: processes saving the same cache at once never
  // write into one file, and a reader sees an old or a new cache, whole.
  const std::string& path = cache_path_;
  const std::string tmp = StrFormat("%s.%ld.%08lx.tmp", path.c_str(), static_cast<long>(getpid()),
                                    static_cast<unsigned long>(std::random_device()()));
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) {
    Log(LogLevel::kWarn, StrFormat("pipeline cache '%s': cannot create '%s': %s (the cache is not saved)", path.c_str(),
                                   tmp.c_str(), strerror(errno)));
    return;
  }
  std::string error;
  if (fwrite(data.data(), 1, size, f) != size) error = StrFormat("writing '%s': %s", tmp.c_str(), strerror(errno));
  if (fclose(f) != 0 && error.empty()) error = StrFormat("closing '%s': %s", tmp.c_str(), strerror(errno));
  if (error.empty() && rename(tmp.c_str(), path.c_str()) != 0)
    error = StrFormat("renaming '%s' to it: %s", tmp.c_str(), strerror(errno));
  if (!error.empty()) {
    Log(LogLevel::kWarn, StrFormat("pipeline cache '%s': %s (the cache is not saved)", path.c_str(), error.c_str()));
    remove(tmp.c_str());
  }
}

Pipelines::~Pipelines() {
  for (auto& kv : pipelines_) vkDestroyPipeline(dev_, kv.second.pipeline, nullptr);
  if (cache_) vkDestroyPipelineCache(dev_, cache_, nullptr);
  for (VkPipelineLayout pl : pipeline_layouts_) vkDestroyPipelineLayout(dev_, pl, nullptr);
  for (VkDescriptorSetLayout l : set_layouts_) vkDestroyDescriptorSetLayout(dev_, l, nullptr);
  if (params_layout_) vkDestroyDescriptorSetLayout(dev_, params_layout_, nullptr);
  for (VkShaderModule m : modules_) vkDestroyShaderModule(dev_, m, nullptr);
}

}  // namespace oaaxvk::runtime

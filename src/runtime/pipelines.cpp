#include "runtime/pipelines.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <unordered_map>

#include <time.h>

#include "runtime/log.h"

namespace oaaxvk::runtime {

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of the calling thread in ms: pipeline creation runs on a few
// threads of a machine that may be busy with other work, where wall time
// says little about what a pipeline costs the driver.
double ThreadCpuMs() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0.0;
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Descriptor type of a binding-type letter (Kernel::binding_types).
VkDescriptorType DescriptorType(char t) {
  return t == 's' ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
}

bool SameKernel(const Kernel& a, const Kernel& b) {
  return a.spirv_words == b.spirv_words && a.binding_types == b.binding_types &&
         memcmp(a.spirv, b.spirv, a.spirv_words * 4) == 0;
}

// Runs job(0) .. job(n - 1) on up to `threads` threads (the calling one
// included); each job is independent and must not throw. When no thread can
// be started the calling thread runs them all.
template <typename Job>
void ParallelFor(size_t n, unsigned threads, const Job& job) {
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t i = next++; i < n; i = next++) job(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < n; ++t) {
    try {
      pool.emplace_back(work);
    } catch (...) {  // no more threads: the ones started and this one do the rest
      break;
    }
  }
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace

Status Pipelines::Create(const std::string& cache, const std::string& cache_dir) {
  // Identical kernels (the tables of a bundle with variants often repeat
  // one) share a module, layouts and pipelines: by SPIR-V hash first.
  const size_t nk = bundle_->kernels.size();
  canonical_.resize(nk);
  std::unordered_multimap<uint64_t, uint32_t> by_hash;
  for (uint32_t j = 0; j < nk; ++j) {
    const Kernel& k = bundle_->kernels[j];
    const uint64_t h = Fnv1a(k.spirv, k.spirv_words * 4, kFnvOffset);
    canonical_[j] = j;
    auto range = by_hash.equal_range(h);
    for (auto it = range.first; it != range.second; ++it)
      if (SameKernel(bundle_->kernels[it->second], k)) {
        canonical_[j] = it->second;
        break;
      }
    if (canonical_[j] == j) by_hash.emplace(h, j);
  }
  OAAXVK_RETURN_IF_ERROR(CreateLayouts());
  const FloatControls& fc = ctx_->float_controls();
  if (fc.empty())
    Log(LogLevel::kDebug, StrFormat("float controls: not available on '%s' (%s); the kernels keep the driver's "
                                    "default treatment of signed zeros, infinities, NaN and subnormals",
                                    ctx_->device_name().c_str(), ctx_->float_controls_missing().c_str()));
  else
    Log(LogLevel::kDebug, StrFormat("float controls: %s declared in every kernel (at the float widths it uses) on '%s'",
                                    DescribeFloatControls(fc).c_str(), ctx_->device_name().c_str()));
  // Feature dynamic_shapes: dispatches whose specialization values depend on
  // the shape get their pipelines per recording (Acquire); every other
  // dispatch has one pipeline for the executor's lifetime.
  const ShapeProgram& sp = bundle_->shape;
  dynamic_spec_.assign(bundle_->dispatches.size(), false);
  for (size_t i = 0; i < bundle_->dispatches.size(); ++i) {
    const Dispatch& d = bundle_->dispatches[i];
    auto it = std::lower_bound(sp.spec_expr.begin(), sp.spec_expr.end(), std::make_pair(d.first_spec, int64_t{-1}));
    dynamic_spec_[i] = it != sp.spec_expr.end() && it->first < d.first_spec + d.n_spec;
  }
  OAAXVK_RETURN_IF_ERROR(OpenCache(cache, cache_dir));
  spirv_ = {};  // the modules hold their own copies; only the cache key needed them
  OAAXVK_RETURN_IF_ERROR(CreateStaticPipelines());
  SaveCache();
  return Status::Ok();
}

Status Pipelines::CreateLayouts() {
  // Shader modules only for the kernels of the chosen rows: the bundle also
  // carries the other tables' kernels, whose SPIR-V may declare capabilities
  // the device lacks or did not enable (StorageBuffer16BitAccess on a device
  // without it), which a module must not be created from.
  std::vector<bool> used(bundle_->kernels.size(), false);
  for (const Dispatch& d : bundle_->dispatches) used[canonical_[d.kernel]] = true;
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
  spirv_.assign(bundle_->kernels.size(), {});
  for (size_t j = 0; j < bundle_->kernels.size(); ++j) {
    const Kernel& k = bundle_->kernels[j];
    const std::string what = StrFormat("kernel %zu ('%s')", j, k.name.c_str());
    VkShaderModule sm = VK_NULL_HANDLE;
    if (used[j]) {
      // The float-controls modes the device supports (spirv_float_controls.h;
      // none: the module as the bundle has it, its structure checked alike).
      StatusOr<std::vector<uint32_t>> code = AddFloatControls(k.spirv, k.spirv_words, ctx_->float_controls());
      if (!code.ok()) return code.status().WithContext(what);
      spirv_[j] = std::move(code).value();
      VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
      smi.codeSize = spirv_[j].size() * 4;
      smi.pCode = spirv_[j].data();
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
  return Status::Ok();
}

Status Pipelines::OpenCache(const std::string& cache, const std::string& cache_dir) {
  // The key: everything the pipelines are made of (the used kernels' SPIR-V
  // as the modules got it, float controls included, and binding types, the
  // specialization values, whether set 1 exists), so
  // a reconverted bundle with new weights but the same kernels keeps its
  // cache, and different kernels never read another bundle's.
  uint64_t h = kFnvOffset;
  std::vector<bool> hashed(bundle_->kernels.size(), false);
  for (const Dispatch& d : bundle_->dispatches) {
    const uint32_t c = canonical_[d.kernel];
    h = Fnv1a(&c, sizeof c, h);
    if (hashed[c]) continue;
    hashed[c] = true;
    const Kernel& k = bundle_->kernels[c];
    h = Fnv1a(spirv_[c].data(), spirv_[c].size() * 4, h);
    h = Fnv1a(k.binding_types.data(), k.binding_types.size(), h);
  }
  h = Fnv1a(bundle_->spec.data(), bundle_->spec.size() * 4, h);
  const uint8_t params = params_layout_ ? 1 : 0;
  h = Fnv1a(&params, 1, h);
  const VkPhysicalDeviceProperties& props = ctx_->properties();
  cache_key_.bundle_hash = h;
  memcpy(cache_key_.cache_uuid, props.pipelineCacheUUID, VK_UUID_SIZE);
  cache_key_.vendor_id = props.vendorID;
  cache_key_.device_id = props.deviceID;
  cache_key_.driver_version = props.driverVersion;
  std::string why_none;
  cache_path_ = PipelineCachePath(cache, cache_dir, cache_key_, &cache_dir_, &why_none);
  if (cache_path_.empty()) {
    Log(LogLevel::kInfo, StrFormat("no pipeline cache: %s", why_none.c_str()));
    return Status::Ok();
  }
  const std::vector<uint8_t> data = ReadPipelineCache(cache_path_, cache_key_);
  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  pci.initialDataSize = data.size();
  pci.pInitialData = data.empty() ? nullptr : data.data();
  VkResult r = vkCreatePipelineCache(dev_, &pci, nullptr, &cache_);
  if (r != VK_SUCCESS && !data.empty()) {
    Log(LogLevel::kWarn, StrFormat("pipeline cache '%s' ignored: the driver rejected its data (%s); pipelines are "
                                   "created without it and the file is replaced when the cache is saved",
                                   cache_path_.c_str(), VkResultName(r)));
    pci.initialDataSize = 0;
    pci.pInitialData = nullptr;
    r = vkCreatePipelineCache(dev_, &pci, nullptr, &cache_);
  } else if (!data.empty()) {
    cache_saved_hash_ = Fnv1a(data.data(), data.size(), kFnvOffset);
    cache_saved_bytes_ = data.size();
  }
  OAAXVK_RETURN_IF_ERROR(VkCheck(r, "vkCreatePipelineCache"));
  Log(LogLevel::kInfo, data.empty() || !cache_saved_bytes_
                           ? StrFormat("pipeline cache '%s': starting empty", cache_path_.c_str())
                           : StrFormat("pipeline cache '%s': read %zu bytes", cache_path_.c_str(), data.size()));
  return Status::Ok();
}

Status Pipelines::CreateStaticPipelines() {
  // The distinct (kernel, values) pairs in program order; `job_of[i]`: the
  // pair dispatch i uses.
  struct Job {
    Key key;
    size_t first_dispatch;
    StatusOr<VkPipeline> result{VK_NULL_HANDLE};
  };
  std::vector<Job> jobs;
  std::map<Key, size_t> index;
  std::vector<size_t> job_of(bundle_->dispatches.size(), SIZE_MAX);
  for (size_t i = 0; i < bundle_->dispatches.size(); ++i) {
    const Dispatch& d = bundle_->dispatches[i];
    if (LogEnabled(LogLevel::kDebug)) {
      const char* op = d.op < bundle_->op_names.size() ? bundle_->op_names[d.op].c_str() : "";
      Log(LogLevel::kDebug, StrFormat("dispatch %zu: op '%s' kernel '%s' groups (%u, %u, %u)%s%s", i, op,
                                      bundle_->kernels[d.kernel].name.c_str(), d.groups[0], d.groups[1], d.groups[2],
                                      d.barrier ? " after a barrier" : "",
                                      dynamic_spec_[i] ? ", specialized per shape" : ""));
    }
    if (dynamic_spec_[i]) continue;
    Key key(canonical_[d.kernel],
            std::vector<uint32_t>(bundle_->spec.begin() + d.first_spec, bundle_->spec.begin() + d.first_spec + d.n_spec));
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, jobs.size()).first;
      jobs.push_back({std::move(key), i});
    }
    job_of[i] = it->second;
  }
  const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 8u));
  const auto start = Clock::now();
  ParallelFor(jobs.size(), threads, [&](size_t j) {
    Job& job = jobs[j];
    try {
      const size_t i = job.first_dispatch;
      const uint32_t kernel = bundle_->dispatches[i].kernel;
      job.result = CreatePipeline(job.key.first, job.key.second,
                                  StrFormat("dispatch %zu, kernel %u ('%s')", i, kernel,
                                            bundle_->kernels[kernel].name.c_str()));
    } catch (...) {  // host memory ran out building a name
      job.result = ResourceExhausted("out of host memory while creating a pipeline");
    }
  });
  // Every pipeline created is kept (the destructor frees it) before the
  // first error in program order is returned.
  Status first_error;
  for (Job& job : jobs) {
    if (!job.result.ok()) {
      if (first_error.ok()) first_error = job.result.status();
      continue;
    }
    Entry e;
    e.pipeline = job.result.value();
    e.permanent = true;
    pipelines_.emplace(job.key, e);
  }
  peak_ = pipelines_.size();
  OAAXVK_RETURN_IF_ERROR(first_error);
  dispatch_pipeline_.assign(bundle_->dispatches.size(), VK_NULL_HANDLE);
  for (size_t i = 0; i < bundle_->dispatches.size(); ++i)
    if (job_of[i] != SIZE_MAX) dispatch_pipeline_[i] = jobs[job_of[i]].result.value();
  size_t shared = 0;
  for (uint32_t j = 0; j < canonical_.size(); ++j) shared += canonical_[j] != j ? 1 : 0;
  Log(LogLevel::kInfo,
      StrFormat("%zu pipelines created in %.1f ms on %u thread(s)%s%s", jobs.size(),
                std::chrono::duration<double, std::milli>(Clock::now() - start).count(),
                std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(jobs.size(), 1))),
                cache_ ? " through the pipeline cache" : "",
                shared ? StrFormat(" (%zu kernels identical to another share its pipelines)", shared).c_str() : ""));
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
  const double cpu_start = ThreadCpuMs();
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkCreateComputePipelines(dev_, cache_, 1, &ci, nullptr, &p), "vkCreateComputePipelines")
          .WithContext(what));
  Log(LogLevel::kDebug, StrFormat("pipeline of kernel '%s' (#%u) created in %.1f ms, %.1f ms CPU (%s)",
                                  bundle_->kernels[kernel].name.c_str(), kernel,
                                  std::chrono::duration<double, std::milli>(Clock::now() - start).count(),
                                  ThreadCpuMs() - cpu_start, what.c_str()));
  return p;
}

StatusOr<VkPipeline> Pipelines::Acquire(uint32_t kernel, const std::vector<uint32_t>& values, size_t dispatch) {
  std::lock_guard<std::mutex> lk(mu_);
  Key key(canonical_[kernel], values);
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) {
    OAAXVK_ASSIGN_OR_RETURN(VkPipeline p, CreatePipeline(key.first, values,
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

void Pipelines::Release(const Key& held) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = pipelines_.find(Key(canonical_[held.first], held.second));
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
    Log(LogLevel::kWarn, StrFormat("pipeline cache '%s': vkGetPipelineCacheData failed: %s (the cache is not saved)",
                                   cache_path_.c_str(), VkResultName(r)));
    return;
  }
  data.resize(size);
  const uint64_t h = Fnv1a(data.data(), data.size(), kFnvOffset);
  if (h == cache_saved_hash_ && data.size() == cache_saved_bytes_) return;  // unchanged (or its save failed)
  cache_saved_hash_ = h;
  cache_saved_bytes_ = data.size();
  if (!WritePipelineCache(cache_path_, cache_dir_, cache_key_, data)) return;
  Log(LogLevel::kInfo, StrFormat("pipeline cache '%s': saved %zu bytes", cache_path_.c_str(), data.size()));
  // The per-user directory collects a file per bundle, device and driver: bounded.
  if (!cache_dir_.empty()) PrunePipelineCacheDir(cache_dir_, cache_path_, kPipelineCacheDirBytes);
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

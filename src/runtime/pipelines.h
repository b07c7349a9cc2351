// The compute pipelines of an executor and everything they are made of:
// shader modules (the kernels' SPIR-V with the float-controls modes the
// device supports declared: spirv_float_controls.h) and descriptor-set /
// pipeline layouts of the kernels the chosen dispatch rows use, the pipelines themselves keyed by (kernel,
// specialization values), and the persistent VkPipelineCache
// (pipeline_cache.h). Kernels with identical SPIR-V and binding types share
// one module, one layout and their pipelines; the pipelines of a load are
// created in parallel on a few threads (VkPipelineCache and
// vkCreateComputePipelines are internally synchronized).
#ifndef OAAXVK_RUNTIME_PIPELINES_H_
#define OAAXVK_RUNTIME_PIPELINES_H_

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"
#include "runtime/bundle.h"
#include "runtime/pipeline_cache.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

class Pipelines {
 public:
  using Key = std::pair<uint32_t, std::vector<uint32_t>>;  // kernel, specialization values

  // `ctx` and `bundle` outlive this object; nothing is created until Create.
  Pipelines(VkContext* ctx, const Bundle* bundle) : ctx_(ctx), dev_(ctx->device()), bundle_(bundle) {}
  // Destroys every pipeline, layout and module (no frame may still use them).
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  // Creates the modules and layouts of the kernels the bundle's dispatch rows
  // use, and one pipeline per distinct (kernel, specialization values) of the
  // dispatches whose specialization is static, on up to
  // hardware_concurrency threads. `cache` and `cache_dir`: the runtime
  // arguments pipeline_cache and pipeline_cache_dir (PipelineCachePath); the
  // cache file is read first (an unusable one is logged and ignored) and
  // saved once the pipelines exist. Errors name the kernel or dispatch (the
  // first failing dispatch in program order when several fail).
  Status Create(const std::string& cache, const std::string& cache_dir);

  // The pipeline of (kernel, values) for dispatch `dispatch` specialized for
  // a shape, created when no recording holds it yet; counted until Release.
  // Thread-safe.
  StatusOr<VkPipeline> Acquire(uint32_t kernel, const std::vector<uint32_t>& values, size_t dispatch);
  // Destroys the pipeline when its last holder releases it (never one a
  // static dispatch uses). Callers guarantee no frame in flight uses it.
  // Thread-safe.
  void Release(const Key& key);

  // Writes the pipeline cache back to its file (temporary file + rename)
  // when its data changed since it was read or last saved; failures are
  // logged, never returned. Nothing without a cache file.
  void SaveCache();
  // The cache file in use ("" when none).
  const std::string& cache_path() const { return cache_path_; }

  // VkPipelines alive now; thread-safe.
  size_t count() const;
  // The most pipelines alive at once so far.
  size_t peak() const;
  // By dispatch: its pipeline when its specialization is static,
  // VK_NULL_HANDLE when it depends on the shape (dynamic_spec).
  const std::vector<VkPipeline>& dispatch_pipelines() const { return dispatch_pipeline_; }
  // By dispatch: whether its specialization values depend on the shape
  // (feature dynamic_shapes), so each recording acquires its pipeline.
  const std::vector<bool>& dynamic_spec() const { return dynamic_spec_; }
  // By kernel index (kernels identical to an earlier one return its
  // layouts); VK_NULL_HANDLE for kernels no chosen row uses.
  VkDescriptorSetLayout set_layout(uint32_t kernel) const { return set_layouts_[canonical_[kernel]]; }
  VkPipelineLayout layout(uint32_t kernel) const { return pipeline_layouts_[canonical_[kernel]]; }
  // Feature parameter_buffer: set 1 of every pipeline layout (binding 0, a
  // uniform buffer); VK_NULL_HANDLE for bundles without the feature.
  VkDescriptorSetLayout params_layout() const { return params_layout_; }

 private:
  struct Entry {
    VkPipeline pipeline = VK_NULL_HANDLE;
    uint32_t users = 0;      // recordings holding it (dynamic specialization)
    bool permanent = false;  // a dispatch whose specialization is static uses it: kept until destruction
  };

  // One compute pipeline of `kernel` specialized with `values`; `what`
  // names it in errors. Thread-safe (touches no member but reads).
  StatusOr<VkPipeline> CreatePipeline(uint32_t kernel, const std::vector<uint32_t>& values, const std::string& what);
  // The modules and layouts of the used kernels (canonical_ first).
  Status CreateLayouts();
  // Opens the cache (cache_path_ resolved from the arguments and the key).
  Status OpenCache(const std::string& cache, const std::string& cache_dir);
  // The static pipelines, in parallel.
  Status CreateStaticPipelines();

  VkContext* ctx_;
  VkDevice dev_;
  const Bundle* bundle_;
  // By kernel: the first kernel with the same SPIR-V and binding types (the
  // one whose module and layouts it uses, and whose index keys its pipelines).
  std::vector<uint32_t> canonical_;
  std::string cache_path_;  // "" = no cache file
  std::string cache_dir_;   // created before saving (the per-user directory; "" for an explicit file)
  PipelineCacheKey cache_key_;
  uint64_t cache_saved_hash_ = 0;  // Fnv1a of the data read or last saved (skips rewriting an unchanged cache)
  size_t cache_saved_bytes_ = 0;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  // By kernel: the SPIR-V its module was created from (the bundle's, with
  // the device's float-controls modes added); empty for kernels no chosen
  // row uses, and for all once the cache key is derived.
  std::vector<std::vector<uint32_t>> spirv_;
  std::vector<VkShaderModule> modules_;
  std::vector<VkDescriptorSetLayout> set_layouts_;
  VkDescriptorSetLayout params_layout_ = VK_NULL_HANDLE;
  std::vector<VkPipelineLayout> pipeline_layouts_;
  // Every pipeline alive, by (kernel, specialization values); guarded by
  // mu_ (send_input may create and release them on several threads).
  mutable std::mutex mu_;
  std::map<Key, Entry> pipelines_;
  size_t peak_ = 0;
  std::vector<VkPipeline> dispatch_pipeline_;
  std::vector<bool> dynamic_spec_;
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_PIPELINES_H_

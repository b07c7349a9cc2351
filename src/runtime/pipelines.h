// The compute pipelines of an executor and everything they are made of:
// shader modules and descriptor-set / pipeline layouts of the kernels the
// chosen dispatch rows use, the pipelines themselves keyed by (kernel,
// specialization values), and the optional on-disk VkPipelineCache.
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
  // use, and one pipeline per dispatch whose specialization is static.
  // `cache_path` ("" = none): the VkPipelineCache file read here (a file the
  // driver rejects is logged and ignored) and written by SaveCache. Errors
  // name the kernel or dispatch.
  Status Create(const std::string& cache_path);

  // The pipeline of (kernel, values) for dispatch `dispatch` specialized for
  // a shape, created when no recording holds it yet; counted until Release.
  // Thread-safe.
  StatusOr<VkPipeline> Acquire(uint32_t kernel, const std::vector<uint32_t>& values, size_t dispatch);
  // Destroys the pipeline when its last holder releases it (never one a
  // static dispatch uses). Callers guarantee no frame in flight uses it.
  // Thread-safe.
  void Release(const Key& key);

  // Writes the pipeline cache back to its file (temporary file + rename);
  // failures are logged, never returned. Nothing without a cache file.
  void SaveCache();

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
  // By kernel index; VK_NULL_HANDLE for kernels no chosen row uses.
  VkDescriptorSetLayout set_layout(uint32_t kernel) const { return set_layouts_[kernel]; }
  VkPipelineLayout layout(uint32_t kernel) const { return pipeline_layouts_[kernel]; }
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
  // names it in errors.
  StatusOr<VkPipeline> CreatePipeline(uint32_t kernel, const std::vector<uint32_t>& values, const std::string& what);

  VkContext* ctx_;
  VkDevice dev_;
  const Bundle* bundle_;
  std::string cache_path_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
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

#include "runtime/matrix_check.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/device_memory.h"
#include "runtime/fault_injection.h"
#include "runtime/log.h"

namespace oaaxvk::runtime {
namespace {

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The check's problem: its buffers (binding order), specialization values
// without the four tile constants, group counts per tile, and a host bound
// per output.
struct Problem {
  std::vector<std::vector<float>> buffers;  // inputs filled, the output sized
  uint32_t output = 0;                       // index of the output buffer
  std::vector<uint32_t> spec;
  bool vec_a = false, vec_b = false;         // allowed at the large tile
  uint32_t rows = 0, cols = 0, k = 0;        // GEMM view: M x N outputs, K deep
  std::vector<double> scale;                 // per output: sum |a b| + |bias| + |residual|
};

// Fixed pseudo-random values in [-1, 1] (a 32-bit LCG: the same data on every
// device and run).
struct Lcg {
  uint32_t s = 12345u;
  float Next() {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
};

Problem GemmProblem() {
  constexpr uint32_t M = 64, N = 64, K = 64;
  Problem p;
  Lcg r;
  std::vector<float> a(M * K), b(K * N), bias(N);
  for (float& v : a) v = r.Next();
  for (float& v : b) v = r.Next();
  for (float& v : bias) v = r.Next();
  p.scale.assign(M * N, 0.0);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t n = 0; n < N; ++n) {
      double s = std::fabs(bias[n]);
      for (uint32_t k = 0; k < K; ++k) s += std::fabs(static_cast<double>(a[m * K + k]) * b[k * N + n]);
      p.scale[m * N + n] = s;
    }
  p.buffers = {a, b, bias, std::vector<float>(M * N)};
  p.output = 3;
  // M, N, K, SAB, SAM, SAK, SBB, SBK, SBN, HAS_BIAS, SCM, SCN, ALPHA, BETA, ACT (ReLU), ACT_A, ACT_B
  p.spec = {M, N, K, M * K, K, 1, K * N, N, 1, 1, 0, 1, FloatBits(1.0f), FloatBits(1.0f), 1, 0, 0};
  p.vec_a = p.vec_b = true;
  p.rows = M;
  p.cols = N;
  p.k = K;
  return p;
}

Problem ConvProblem() {
  constexpr uint32_t C = 8, H = 8, W = 8, KO = 64, KH = 3, KW = 3, KD = C * KH * KW, NCOL = H * W;
  Problem p;
  Lcg r;
  std::vector<float> x(C * H * W), w(KO * KD), bias(KO), res(KO * NCOL);
  for (float& v : x) v = r.Next();
  for (float& v : w) v = r.Next();
  for (float& v : bias) v = r.Next();
  for (float& v : res) v = r.Next();
  p.scale.assign(KO * NCOL, 0.0);
  for (uint32_t oc = 0; oc < KO; ++oc)
    for (uint32_t oh = 0; oh < H; ++oh)
      for (uint32_t ow = 0; ow < W; ++ow) {
        const uint32_t yi = (oc * H + oh) * W + ow;
        double s = std::fabs(bias[oc]) + std::fabs(res[yi]);
        for (uint32_t c = 0; c < C; ++c)
          for (uint32_t kh = 0; kh < KH; ++kh)
            for (uint32_t kw = 0; kw < KW; ++kw) {
              const int ih = static_cast<int>(oh + kh) - 1, iw = static_cast<int>(ow + kw) - 1;
              if (ih < 0 || ih >= static_cast<int>(H) || iw < 0 || iw >= static_cast<int>(W)) continue;
              s += std::fabs(static_cast<double>(w[(oc * C + c) * KH * KW + kh * KW + kw]) *
                             x[(c * H + static_cast<uint32_t>(ih)) * W + static_cast<uint32_t>(iw)]);
            }
        p.scale[yi] = s;
      }
  p.buffers = {x, w, bias, std::vector<float>(KO * NCOL), res};
  p.output = 3;
  // N, C, H, W, K_OUT, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, GROUPS, HAS_BIAS, ACT (ReLU), ACT_A, ACT_B, HAS_RES
  p.spec = {1, C, H, W, KO, H, W, KH, KW, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1};
  p.vec_a = KD % 4 == 0;  // the weight rows as vec4
  p.vec_b = false;        // only a 1 x 1 convolution reads the input as vec4
  p.rows = KO;
  p.cols = NCOL;
  p.k = KD;
  return p;
}

// Every Vulkan object of one check, freed on every path.
struct Resources {
  VkDevice dev = VK_NULL_HANDLE;
  std::vector<Buffer> buffers;
  Buffer params;
  VkDescriptorSetLayout set_layouts[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkCommandPool cmd_pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::vector<VkShaderModule> modules;
  std::vector<VkPipeline> pipelines;
  ~Resources() {
    for (VkPipeline p : pipelines) vkDestroyPipeline(dev, p, nullptr);
    for (VkShaderModule m : modules) vkDestroyShaderModule(dev, m, nullptr);
    if (fence) vkDestroyFence(dev, fence, nullptr);
    if (cmd_pool) vkDestroyCommandPool(dev, cmd_pool, nullptr);
    if (pool) vkDestroyDescriptorPool(dev, pool, nullptr);
    if (layout) vkDestroyPipelineLayout(dev, layout, nullptr);
    for (VkDescriptorSetLayout l : set_layouts)
      if (l) vkDestroyDescriptorSetLayout(dev, l, nullptr);
    for (Buffer& b : buffers) DestroyBuffer(dev, &b);
    DestroyBuffer(dev, &params);
  }
};

StatusOr<VkPipeline> CreatePipeline(Resources* res, const Kernel& k, const std::vector<uint32_t>& spec,
                                    const FloatControls& fc) {
  // The module as the executor's pipelines get it (pipelines.h): the check
  // runs what the rows would run.
  OAAXVK_ASSIGN_OR_RETURN(const std::vector<uint32_t> code, AddFloatControls(k.spirv, k.spirv_words, fc));
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = code.size() * 4;
  smi.pCode = code.data();
  VkShaderModule sm = VK_NULL_HANDLE;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateShaderModule(res->dev, &smi, nullptr, &sm), "vkCreateShaderModule"));
  res->modules.push_back(sm);
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, 4 * i, 4};
  VkSpecializationInfo si{};
  si.mapEntryCount = static_cast<uint32_t>(entries.size());
  si.pMapEntries = entries.data();
  si.dataSize = spec.size() * 4;
  si.pData = spec.data();
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = sm;
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = &si;
  cpi.layout = res->layout;
  VkPipeline p = VK_NULL_HANDLE;
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkCreateComputePipelines(res->dev, VK_NULL_HANDLE, 1, &cpi, nullptr, &p), "vkCreateComputePipelines"));
  res->pipelines.push_back(p);
  return p;
}

// Runs `pipeline` once over `groups` with the output filled with NaN
// beforehand; the output is then in res->buffers[output].mapped.
Status RunOnce(VkContext* ctx, Resources* res, VkDescriptorSet sets[2], VkPipeline pipeline, const uint32_t groups[3],
               const Buffer& output) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float* y = static_cast<float*>(output.mapped);
  for (VkDeviceSize i = 0; i < output.size / 4; ++i) y[i] = nan;
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = res->cmd_pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateCommandBuffers(res->dev, &cai, &cb), "vkAllocateCommandBuffers"));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cb, &bi);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, res->layout, 0, 2, sets, 0, nullptr);
  vkCmdDispatch(cb, groups[0], groups[1], groups[2]);
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  Status s = VkCheck(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  if (s.ok()) {
    VkSubmitInfo sub{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    sub.commandBufferCount = 1;
    sub.pCommandBuffers = &cb;
    vkResetFences(res->dev, 1, &res->fence);
    s = VkCheck(vkQueueSubmit(ctx->queue(), 1, &sub, res->fence), "vkQueueSubmit");
    // 10 s: the problem takes microseconds; a kernel that hangs is broken.
    if (s.ok()) s = VkCheck(vkWaitForFences(res->dev, 1, &res->fence, VK_TRUE, 10'000'000'000ull), "vkWaitForFences");
  }
  vkFreeCommandBuffers(res->dev, res->cmd_pool, 1, &cb);
  return s;
}

}  // namespace

Status CheckMatrixKernel(VkContext* ctx, const Kernel& candidate, const Kernel& reference, bool inject_error) {
  const std::string what = StrFormat("cooperative-matrix kernel '%s' (load-time check against '%s')",
                                     candidate.name.c_str(), reference.name.c_str());
  const bool is_gemm = candidate.bindings == 4 && candidate.spec_constants == 21;
  const bool is_conv = candidate.bindings == 5 && candidate.spec_constants == 25;
  if ((!is_gemm && !is_conv) || reference.bindings != candidate.bindings ||
      reference.spec_constants != candidate.spec_constants)
    return Unimplemented(StrFormat("%s: %u bindings and %u specialization constants match neither the gemm_gpu (4, 21) "
                                   "nor the conv2d_gemm_gpu (5, 25) interface, so it cannot be checked",
                                   what.c_str(), candidate.bindings, candidate.spec_constants));
  const Problem p = is_gemm ? GemmProblem() : ConvProblem();
  // The spec constant that leaves the bias out in the injected error: HAS_BIAS.
  const uint32_t has_bias_id = is_gemm ? 9 : 16;

  Resources res;
  res.dev = ctx->device();
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  res.buffers.resize(p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx, p.buffers[i].size() * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host, 0,
                                        true, "matrix check buffer", &res.buffers[i]));
    std::memcpy(res.buffers[i].mapped, p.buffers[i].data(), p.buffers[i].size() * 4);
  }
  // Set 1: the parameter buffer the kernels declare (params.glsl); every
  // size here is a plain value, so it is never read.
  OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx, 16384, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, host, 0, true,
                                      "matrix check parameter buffer", &res.params));
  std::memset(res.params.mapped, 0, 16384);

  std::vector<VkDescriptorSetLayoutBinding> lb(candidate.bindings);
  for (uint32_t b = 0; b < candidate.bindings; ++b)
    lb[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutBinding pb{0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dli.bindingCount = candidate.bindings;
  dli.pBindings = lb.data();
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorSetLayout(res.dev, &dli, nullptr, &res.set_layouts[0]),
                                 "vkCreateDescriptorSetLayout"));
  dli.bindingCount = 1;
  dli.pBindings = &pb;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorSetLayout(res.dev, &dli, nullptr, &res.set_layouts[1]),
                                 "vkCreateDescriptorSetLayout"));
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 2;
  pli.pSetLayouts = res.set_layouts;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreatePipelineLayout(res.dev, &pli, nullptr, &res.layout), "vkCreatePipelineLayout"));
  VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, candidate.bindings},
                                   {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1}};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 2;
  dpi.poolSizeCount = 2;
  dpi.pPoolSizes = sizes;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorPool(res.dev, &dpi, nullptr, &res.pool), "vkCreateDescriptorPool"));
  VkDescriptorSet sets[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = res.pool;
  dai.descriptorSetCount = 2;
  dai.pSetLayouts = res.set_layouts;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateDescriptorSets(res.dev, &dai, sets), "vkAllocateDescriptorSets"));
  std::vector<VkDescriptorBufferInfo> infos(candidate.bindings + 1);
  std::vector<VkWriteDescriptorSet> writes(candidate.bindings + 1);
  for (uint32_t b = 0; b <= candidate.bindings; ++b) {
    const bool param = b == candidate.bindings;
    infos[b] = {param ? res.params.buffer : res.buffers[b].buffer, 0, VK_WHOLE_SIZE};
    writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[b].dstSet = sets[param ? 1 : 0];
    writes[b].dstBinding = param ? 0 : b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = param ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
  }
  vkUpdateDescriptorSets(res.dev, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = ctx->queue_family();
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateCommandPool(res.dev, &cpi, nullptr, &res.cmd_pool), "vkCreateCommandPool"));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateFence(res.dev, &fci, nullptr, &res.fence), "vkCreateFence"));

  struct Tile {
    uint32_t m, n;
    bool vec;
  };
  // Every fragment slot (128 x 128), one fragment (16 x 16), and both
  // orientations of an oblong tile (the fragment's row and column come from
  // different tile sizes).
  const Tile tiles[] = {{128, 128, true}, {16, 16, false}, {32, 64, true}, {64, 32, false}};
  const Buffer& out = res.buffers[p.output];
  // Each kernel's K fp32 additions may err by one ulp each (matrix units may
  // align the products by truncation, not rounding): 2 K ulps between them.
  const double unit = std::ldexp(1.0, -24) * (4.0 * p.k + 8.0);
  for (const Tile& t : tiles) {
    std::vector<uint32_t> spec = p.spec;
    spec.insert(spec.end(), {t.m, t.n, t.vec && p.vec_a ? 1u : 0u, t.vec && p.vec_b ? 1u : 0u});
    const uint32_t groups[3] = {(p.cols + t.n - 1) / t.n, (p.rows + t.m - 1) / t.m, 1};
    std::vector<uint32_t> cand_spec = spec;
    if (inject_error) cand_spec[has_bias_id] = 0;
    StatusOr<VkPipeline> ref_pipe = CreatePipeline(&res, reference, spec, ctx->float_controls());
    if (!ref_pipe.ok()) return ref_pipe.status().WithContext(what + ": the reference kernel");
    StatusOr<VkPipeline> cand_pipe = CreatePipeline(&res, candidate, cand_spec, ctx->float_controls());
    if (!cand_pipe.ok()) return cand_pipe.status().WithContext(what + ": it does not compile on this device");
    OAAXVK_RETURN_IF_ERROR(RunOnce(ctx, &res, sets, *ref_pipe, groups, out).WithContext(what + ": the reference run"));
    const std::vector<float> ref(static_cast<const float*>(out.mapped),
                                 static_cast<const float*>(out.mapped) + p.buffers[p.output].size());
    OAAXVK_RETURN_IF_ERROR(RunOnce(ctx, &res, sets, *cand_pipe, groups, out).WithContext(what + ": its run failed"));
    const float* got = static_cast<const float*>(out.mapped);
    for (size_t i = 0; i < ref.size(); ++i) {
      const double bound = unit * p.scale[i];
      const double diff = std::fabs(static_cast<double>(got[i]) - ref[i]);
      if (!(diff <= bound))  // NaN (an unwritten output) too
        return Internal(StrFormat("%s: at tile %ux%u output %zu is %.9g, the portable fp16 kernel gives %.9g "
                                  "(difference %.3g, bound %.3g)", what.c_str(), t.m, t.n, i, got[i], ref[i], diff,
                                  bound));
    }
  }
  return Status::Ok();
}

void CheckMatrixKernels(VkContext* ctx, Bundle* b, DeviceLimits* limits, std::set<uint32_t>* dropped) {
  const MatrixStandIn standin = InjectedMatrixStandIn();
  std::set<uint32_t> checked;
  for (size_t j = 0; j < b->kernels.size(); ++j) {
    const int64_t m = b->kernels[j].matrix_kernel;
    if (m < 0 || !checked.insert(static_cast<uint32_t>(m)).second) continue;
    Kernel& cand = b->kernels[static_cast<size_t>(m)];
    const Kernel& form = b->kernels[j];
    if (standin != MatrixStandIn::kNone) {
      cand.spirv = form.spirv;
      cand.spirv_words = form.spirv_words;
      for (const std::string& c : cand.required_capabilities) limits->capabilities.insert(c);
      Log(LogLevel::kWarn, StrFormat("fault injection: kernel '%s' stands in for cooperative-matrix kernel '%s'%s",
                                     form.name.c_str(), cand.name.c_str(),
                                     standin == MatrixStandIn::kWrong ? " with its bias left out in the check" : ""));
    }
    if (!MissingCapabilities(cand, *limits).empty()) continue;
    const Status s = CheckMatrixKernel(ctx, cand, form, standin == MatrixStandIn::kWrong);
    if (s.ok()) {
      Log(LogLevel::kInfo, StrFormat("'%s': cooperative-matrix kernel '%s' passed its load-time check on '%s' (agrees "
                                     "with '%s'); its rows use it", b->path.c_str(), cand.name.c_str(),
                                     limits->device_name.c_str(), form.name.c_str()));
    } else {
      dropped->insert(static_cast<uint32_t>(m));
      Log(LogLevel::kWarn, StrFormat("'%s': dropped %s; its rows run '%s' instead", b->path.c_str(),
                                     s.message().c_str(), form.name.c_str()));
    }
  }
}

std::string PrecisionSummary(const std::string& path, const VariantSelection& sel) {
  auto caps = [](const std::map<std::string, size_t>& m) {
    std::string s;
    for (const auto& kv : m) s += StrFormat("%s%s (%zu row%s)", s.empty() ? "" : ", ", kv.first.c_str(), kv.second,
                                            kv.second == 1 ? "" : "s");
    return s;
  };
  if (std::strcmp(sel.table, "gpu") != 0)
    return StrFormat("'%s': precision fp16: the %s table runs, whose kernels have no fp16 forms (they are the GPU "
                     "table's: kernel_variant=gpu, or auto on a GPU)", path.c_str(), sel.table);
  std::string line = StrFormat("'%s': precision fp16: %zu row%s run fp16 forms, %zu of them on cooperative matrices",
                               path.c_str(), sel.fp16_forms, sel.fp16_forms == 1 ? "" : "s", sel.matrix_forms);
  if (sel.fp16_kept > 0) {
    std::string why;
    if (!sel.fp16_missing_capabilities.empty())
      why = "capabilities the device lacks: " + caps(sel.fp16_missing_capabilities);
    if (sel.fp16_kept_range > 0)
      why += StrFormat("%s%zu with weights beyond binary16's range (+-65504)", why.empty() ? "" : "; ",
                       sel.fp16_kept_range);
    line += StrFormat("; %zu row%s keep fp32 (%s)", sel.fp16_kept, sel.fp16_kept == 1 ? "" : "s", why.c_str());
  }
  if (sel.matrix_kept > 0) {
    std::string why;
    if (!sel.matrix_missing_capabilities.empty())
      why = "capabilities the device lacks: " + caps(sel.matrix_missing_capabilities);
    if (sel.matrix_kept_dropped > 0)
      why += StrFormat("%s%zu whose cooperative-matrix kernel failed its load-time check", why.empty() ? "" : "; ",
                       sel.matrix_kept_dropped);
    line += StrFormat("; %zu row%s keep the fp16 form instead of cooperative matrices (%s)", sel.matrix_kept,
                      sel.matrix_kept == 1 ? "" : "s", why.c_str());
  }
  return line;
}

}  // namespace oaaxvk::runtime

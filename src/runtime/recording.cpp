#include "runtime/recording.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "oaax_vulkan/tensors_util.h"
#include "runtime/frame_slot.h"
#include "runtime/io.h"
#include "runtime/log.h"

namespace oaaxvk::runtime {

ShapeInstance Recorder::StaticInstance() const {
  ShapeInstance si;
  si.groups.resize(bundle_->dispatches.size());
  si.spec.resize(bundle_->dispatches.size());
  for (size_t i = 0; i < bundle_->dispatches.size(); ++i) {
    const Dispatch& d = bundle_->dispatches[i];
    si.groups[i] = {d.groups[0], d.groups[1], d.groups[2]};
  }
  for (const IoDesc& o : bundle_->outputs) {
    si.output_shapes.push_back(o.shape);
    si.output_nbytes.push_back(o.nbytes);
  }
  return si;
}

StatusOr<ShapeInstance> Recorder::Instantiate(const std::vector<int64_t>& symbols, bool check_outputs) const {
  const ShapeProgram& sp = bundle_->shape;
  std::vector<int64_t> v;
  OAAXVK_RETURN_IF_ERROR(sp.Evaluate(symbols, &v));
  ShapeInstance si;
  si.symbols = symbols;
  const size_t nd = bundle_->dispatches.size();
  si.groups.resize(nd);
  si.spec.resize(nd);
  const uint32_t* max_groups = ctx_->properties().limits.maxComputeWorkGroupCount;
  // Extents can be 0 only in a segment program (extents read back) or where
  // a symbol's range holds 0; elsewhere a group count of 0 is a bundle error.
  bool zero_extents = bundle_->features.count("segment_program") != 0;
  for (const ShapeSymbol& y : sp.symbols) zero_extents = zero_extents || y.min <= 0;
  const int64_t min_groups = zero_extents ? 0 : 1;
  for (size_t i = 0; i < nd; ++i) {
    const Dispatch& d = bundle_->dispatches[i];
    const auto& table = sp.group_expr[d.table];
    for (int a = 0; a < 3; ++a) {
      const int64_t e = table.empty() ? -1 : table[i][a];
      const int64_t g = e < 0 ? d.groups[a] : v[e];
      // 0 groups skips the dispatch: its tensors have a 0 extent (a
      // dimension or an extent read back that is 0 in this frame).
      if (g < min_groups || g > max_groups[a]) {
        const char* op = d.op < bundle_->op_names.size() ? bundle_->op_names[d.op].c_str() : "";
        return InvalidArgument(StrFormat(
            "dispatch %zu (kernel '%s', op '%s'): group count %c evaluates to %lld (shape.program instruction %lld) "
            "at %s; it must be in [%d, %u] (maxComputeWorkGroupCount[%d] of '%s')",
            i, bundle_->kernels[d.kernel].name.c_str(), op, "xyz"[a], static_cast<long long>(g),
            static_cast<long long>(e), sp.ValuesString(symbols).c_str(), static_cast<int>(min_groups), max_groups[a], a,
            ctx_->device_name().c_str()));
      }
      si.groups[i][a] = static_cast<uint32_t>(g);
    }
    if (!pipelines_->dynamic_spec()[i]) continue;
    std::vector<uint32_t>& values = si.spec[i];
    values.assign(bundle_->spec.begin() + d.first_spec, bundle_->spec.begin() + d.first_spec + d.n_spec);
    for (auto it = std::lower_bound(sp.spec_expr.begin(), sp.spec_expr.end(),
                                    std::make_pair(d.first_spec, int64_t{-1}));
         it != sp.spec_expr.end() && it->first < d.first_spec + d.n_spec; ++it) {
      const int64_t x = v[it->second];
      if (x < INT32_MIN || x > static_cast<int64_t>(UINT32_MAX))
        return InvalidArgument(StrFormat("dispatch %zu (kernel '%s'): specialization value program.spec[%u] evaluates "
                                         "to %lld (shape.program instruction %lld) at %s, which is not a 32-bit value",
                                         i, bundle_->kernels[d.kernel].name.c_str(), it->first,
                                         static_cast<long long>(x), static_cast<long long>(it->second),
                                         sp.ValuesString(symbols).c_str()));
      values[it->first - d.first_spec] = static_cast<uint32_t>(x);
    }
  }
  si.params.resize(sp.params);
  for (uint32_t p = 0; p < sp.params; ++p) {
    const int64_t x = v[sp.param_expr[p]];
    if (x < INT32_MIN || x > static_cast<int64_t>(UINT32_MAX))
      return InvalidArgument(StrFormat("parameter slot %u evaluates to %lld (shape.program instruction %lld) at %s, "
                                       "which is not a 32-bit value",
                                       p, static_cast<long long>(x), static_cast<long long>(sp.param_expr[p]),
                                       sp.ValuesString(symbols).c_str()));
    si.params[p] = static_cast<uint32_t>(x);
  }
  for (size_t o = 0; o < bundle_->outputs.size(); ++o) {
    const IoDesc& d = bundle_->outputs[o];
    std::vector<uint64_t> shape = d.shape;
    uint64_t numel = 1;
    bool overflow = false;
    for (size_t a = 0; a < shape.size(); ++a) {
      const int64_t e = sp.output_expr[o][a];
      if (e >= 0) {
        if (v[e] < 0)
          return InvalidArgument(StrFormat("output '%s': dimension %zu evaluates to %lld (shape.program instruction "
                                           "%lld) at %s",
                                           d.name.c_str(), a, static_cast<long long>(v[e]), static_cast<long long>(e),
                                           sp.ValuesString(symbols).c_str()));
        shape[a] = static_cast<uint64_t>(v[e]);
      }
      overflow = overflow || (shape[a] != 0 && numel > UINT64_MAX / shape[a]);
      numel *= shape[a];
    }
    if (!check_outputs && (overflow || numel > TensorMaxElements(d.dtype, d.nbytes))) {
      // The load-time recording of a bundle with value symbols: the maximum
      // of every value symbol is a placeholder (its output shapes are never
      // returned); the stored bytes stand in.
      shape = d.shape;
      numel = TensorMaxElements(d.dtype, d.nbytes);
      overflow = false;
    }
    if (overflow || numel > TensorMaxElements(d.dtype, d.nbytes))
      return InvalidArgument(StrFormat("output '%s': shape %s at %s needs more than the %llu bytes the memory plan "
                                       "reserves for it (maximum shape %s)",
                                       d.name.c_str(), ShapeString(shape).c_str(), sp.ValuesString(symbols).c_str(),
                                       static_cast<unsigned long long>(d.nbytes), ShapeString(d.shape).c_str()));
    si.output_shapes.push_back(std::move(shape));
    si.output_nbytes.push_back(TensorByteSize(d.dtype, numel));
  }
  return si;
}

Status Recorder::RecordInto(FrameSlot* s, const ShapeInstance& shape, size_t begin, size_t end, Recording* rec) {
  std::vector<VkPipeline> pipelines = pipelines_->dispatch_pipelines();
  for (size_t i = begin; i < end; ++i) {
    if (!pipelines_->dynamic_spec()[i]) continue;
    const uint32_t kernel = bundle_->dispatches[i].kernel;
    StatusOr<VkPipeline> p = pipelines_->Acquire(kernel, shape.spec[i], i);
    if (!p.ok()) {
      Free(s, rec);
      return p.status();
    }
    pipelines[i] = p.value();
    rec->held.emplace_back(kernel, shape.spec[i]);
  }
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = s->pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  Status st = VkCheck(vkAllocateCommandBuffers(dev_, &cai, &rec->cmd), "vkAllocateCommandBuffers");
  if (st.ok()) st = RecordCommands(s, rec->cmd, shape, pipelines, begin, end);
  if (!st.ok()) {
    Free(s, rec);
    return st;
  }
  rec->pipelines = std::move(pipelines);
  ++recordings_;
  return Status::Ok();
}

Status Recorder::RecordWarmUp(FrameSlot* s, VkCommandBuffer* cmd) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = s->pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateCommandBuffers(dev_, &cai, cmd), "vkAllocateCommandBuffers"));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(*cmd, &bi), "vkBeginCommandBuffer"));
  const std::vector<VkPipeline>& pipelines = s->current->pipelines;
  std::vector<VkPipeline> seen;
  for (size_t i = 0; i < bundle_->dispatches.size(); ++i) {
    const VkPipeline p = pipelines[i];
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
    if (!seen.empty()) {
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(*cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
                           0, nullptr, 0, nullptr);
    }
    seen.push_back(p);
    vkCmdBindPipeline(*cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    const VkDescriptorSet sets[2] = {s->sets[i], s->params_set};
    vkCmdBindDescriptorSets(*cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_->layout(bundle_->dispatches[i].kernel), 0,
                            pipelines_->params_layout() ? 2 : 1, sets, 0, nullptr);
    vkCmdDispatch(*cmd, 1, 1, 1);
  }
  return VkCheck(vkEndCommandBuffer(*cmd), "vkEndCommandBuffer");
}

Status Recorder::Record(FrameSlot* s, ShapeInstance shape) {
  Recording rec;
  OAAXVK_RETURN_IF_ERROR(RecordInto(s, shape, 0, bundle_->dispatches.size(), &rec));
  rec.shape = std::move(shape);
  s->recordings.push_front(std::move(rec));
  return Status::Ok();
}

Status Recorder::RecordRows(FrameSlot* s, const ShapeInstance& shape, uint32_t begin, uint32_t end, Recording* rec) {
  return RecordInto(s, shape, begin, end, rec);
}

void Recorder::Free(FrameSlot* s, Recording* rec) {
  for (const Pipelines::Key& k : rec->held) pipelines_->Release(k);
  rec->held.clear();
  if (rec->cmd) vkFreeCommandBuffers(dev_, s->pool, 1, &rec->cmd);
  rec->cmd = VK_NULL_HANDLE;
}

void Recorder::WriteParams(FrameSlot* s) {
  if (!s->params.mapped || !s->current) return;
  const std::vector<uint32_t>& p = s->current->shape.params;
  if (!p.empty()) memcpy(s->params.mapped, p.data(), 4 * p.size());
}

void Recorder::Evict(FrameSlot* s, std::list<Recording>::iterator it) {
  if (s->current == &*it) s->current = nullptr;
  if (it->cmd) vkFreeCommandBuffers(dev_, s->pool, 1, &it->cmd);
  for (const Pipelines::Key& k : it->held) pipelines_->Release(k);
  s->recordings.erase(it);
}

Status Recorder::RecordCommands(FrameSlot* s, VkCommandBuffer cmd, const ShapeInstance& shape,
                                const std::vector<VkPipeline>& pipelines, size_t begin, size_t end) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer"));
  auto barrier = [&](VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                     VkAccessFlags dst_access) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src_access;
    mb.dstAccessMask = dst_access;
    vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
  };
  // Host writes of the inputs → shader reads (through a staging copy when needed).
  if (s->in_staged) {
    barrier(VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy region{0, 0, s->in.size};
    vkCmdCopyBuffer(cmd, s->in_stage.buffer, s->in.buffer, 1, &region);
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT);
  } else {
    barrier(VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT);
  }
  const bool whole = begin == 0 && end == bundle_->dispatches.size();
  const VkQueryPool queries = whole ? s->queries : VK_NULL_HANDLE;
  const uint32_t nq = static_cast<uint32_t>(2 * bundle_->dispatches.size());
  if (queries) vkCmdResetQueryPool(cmd, queries, 0, nq);
  VkPipeline bound = VK_NULL_HANDLE;
  for (size_t i = begin; i < end; ++i) {
    const Dispatch& d = bundle_->dispatches[i];
    // A segment after the first reads what earlier submissions' shaders wrote.
    if (d.barrier || (i == begin && begin > 0)) {
      barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }
    if (pipelines[i] != bound) {
      vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[i]);
      bound = pipelines[i];
    }
    const VkDescriptorSet sets[2] = {s->sets[i], s->params_set};
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_->layout(d.kernel), 0,
                            pipelines_->params_layout() ? 2 : 1, sets, 0, nullptr);
    // profile: both timestamps at the bottom of the pipe, i.e. once every
    // earlier command (the previous dispatch, the barrier) has completed.
    const uint32_t q = static_cast<uint32_t>(2 * i);
    if (queries) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, q);
    // Feature segment_program: 0 groups (a tensor with a 0 extent) dispatches
    // nothing; its barrier above still orders the rows after it.
    const std::array<uint32_t, 3>& g = shape.groups[i];
    if (g[0] != 0 && g[1] != 0 && g[2] != 0) vkCmdDispatch(cmd, g[0], g[1], g[2]);
    if (queries) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, q + 1);
  }
  // Shader writes of the outputs → host reads.
  if (s->out_staged) {
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy region{0, 0, s->out.size};
    vkCmdCopyBuffer(cmd, s->out.buffer, s->out_stage.buffer, 1, &region);
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
  } else {
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
  }
  return VkCheck(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
}

}  // namespace oaaxvk::runtime

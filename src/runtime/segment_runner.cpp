#include "runtime/segment_runner.h"

#include <algorithm>
#include <cstring>

#include "runtime/fault_injection.h"

namespace oaaxvk::runtime {

namespace {

// Segment recordings a slot keeps: enough for every segment of a program
// at a few sizes each; a loop body at a size it already ran is a replay.
constexpr size_t kSegmentCacheSize = 64;

uint64_t RemainingNs(std::chrono::steady_clock::time_point deadline) {
  const auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return 0;
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count());
}

}  // namespace

// The executor's side of one frame, as the control program sees it.
class SegmentRunner::Host : public ControlHost {
 public:
  Host(SegmentRunner* runner, SlotState* st, std::chrono::steady_clock::time_point deadline)
      : r_(runner), st_(st), deadline_(deadline) {}

  Status RunSegment(uint32_t segment, const std::vector<int64_t>& symbols, const std::vector<int64_t>&) override {
    // Mid-frame shapes are not output shapes: those are checked at the end.
    OAAXVK_ASSIGN_OR_RETURN(ShapeInstance shape, r_->recorder_->Instantiate(symbols, /*check_outputs=*/false));
    OAAXVK_ASSIGN_OR_RETURN(VkCommandBuffer cmd, r_->SegmentCommands(st_, segment, shape));
    // The previous segment has completed (every run and read is waited
    // for), so its parameter values can be overwritten.
    FrameSlot* s = st_->slot;
    if (s->params.mapped && !shape.params.empty()) memcpy(s->params.mapped, shape.params.data(), 4 * shape.params.size());
    return r_->SubmitAndWait(st_, cmd, deadline_, "a segment");
  }

  StatusOr<int64_t> ReadScalar(uint32_t index, const ControlRead& read) override {
    OAAXVK_RETURN_IF_ERROR(r_->SubmitAndWait(st_, st_->read_cmds[index], deadline_, "a read-back"));
    const uint8_t* p = static_cast<const uint8_t*>(st_->readback.mapped);
    switch (read.dtype) {
      case 6: {
        int32_t v;
        memcpy(&v, p, 4);
        return int64_t{v};
      }
      case 7: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
      }
      default:  // BOOL (Validate admits 6, 7 and 9 only)
        return int64_t{p[0] != 0 ? 1 : 0};
    }
  }

 private:
  SegmentRunner* r_;
  SlotState* st_;
  std::chrono::steady_clock::time_point deadline_;
};

SegmentRunner::SegmentRunner(VkContext* ctx, const Bundle* bundle, Recorder* recorder, Submit submit, size_t slots)
    : ctx_(ctx), dev_(ctx->device()), bundle_(bundle), recorder_(recorder), submit_(std::move(submit)), slots_(slots) {}

SegmentRunner::~SegmentRunner() {
  for (SlotState& st : slots_) {
    if (!st.slot) continue;
    for (SegmentRecording& sr : st.recordings) recorder_->Free(st.slot, &sr.rec);
    recorder_->Free(st.slot, &st.final);
    if (!st.read_cmds.empty())
      vkFreeCommandBuffers(dev_, st.slot->pool, static_cast<uint32_t>(st.read_cmds.size()), st.read_cmds.data());
    if (st.fence) vkDestroyFence(dev_, st.fence, nullptr);
    DestroyBuffer(dev_, &st.readback);
  }
}

Status SegmentRunner::Attach(size_t index, FrameSlot* s) {
  SlotState& st = slots_[index];
  st.slot = s;
  OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx_, 16, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                      /*map=*/true, "the segment read-back buffer", &st.readback));
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateFence(dev_, &fi, nullptr, &st.fence), "vkCreateFence"));
  // One command buffer per read: the element's bytes into the read-back buffer.
  const std::vector<ControlRead>& reads = bundle_->control.reads;
  st.read_cmds.assign(reads.size(), VK_NULL_HANDLE);
  if (!reads.empty()) {
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = s->pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = static_cast<uint32_t>(reads.size());
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateCommandBuffers(dev_, &cai, st.read_cmds.data()), "vkAllocateCommandBuffers"));
  }
  for (size_t r = 0; r < reads.size(); ++r) {
    VkCommandBuffer cmd = st.read_cmds[r];
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer"));
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
    // Kind 1 = the arena, 3 = the outputs as the shaders write them (Validate admits only these).
    // An arena over the allocation limit is in several blocks: the read's
    // element lies in the block holding its binding's offset.
    const std::pair<VkBuffer, uint64_t> src = reads[r].buffer_kind == kArena
                                                  ? LocateBinding(s->arena, reads[r].offset)
                                                  : std::make_pair(s->out.buffer, reads[r].offset);
    if (reads[r].buffer_kind == kArena && !s->arena.blocks.empty()) {
      const BufferBlock& b = s->arena.blocks[BlockOf(s->arena.blocks, reads[r].offset)];
      if (reads[r].offset < b.begin || reads[r].offset + ControlReadBytes(reads[r].dtype) > b.end)
        return DataLoss(StrFormat("control.reads row %zu: arena bytes [%llu, %llu) are not inside one bound tensor's "
                                  "memory; a read-back reads an element of a tensor the program binds",
                                  r, static_cast<unsigned long long>(reads[r].offset),
                                  static_cast<unsigned long long>(reads[r].offset + ControlReadBytes(reads[r].dtype))));
    }
    VkBufferCopy region{src.second, 0, ControlReadBytes(reads[r].dtype)};
    vkCmdCopyBuffer(cmd, src.first, st.readback.buffer, 1, &region);
    VkMemoryBarrier hb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    hb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, nullptr, 0,
                         nullptr);
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkEndCommandBuffer(cmd), "vkEndCommandBuffer"));
  }
  // The frame the queue harvests: no rows, only the barriers (and staging
  // copies) around them.
  const uint32_t rows = static_cast<uint32_t>(bundle_->dispatches.size());
  return recorder_->RecordRows(s, recorder_->StaticInstance(), rows, rows, &st.final);
}

StatusOr<VkCommandBuffer> SegmentRunner::SegmentCommands(SlotState* st, uint32_t segment, const ShapeInstance& shape) {
  const Segment& seg = bundle_->control.segments[segment];
  auto rows_equal = [&](const SegmentRecording& sr) {
    if (sr.segment != segment) return false;
    for (uint32_t i = seg.begin; i < seg.end; ++i)
      if (sr.groups[i - seg.begin] != shape.groups[i] || sr.spec[i - seg.begin] != shape.spec[i]) return false;
    return true;
  };
  auto it = std::find_if(st->recordings.begin(), st->recordings.end(), rows_equal);
  if (it != st->recordings.end()) {
    st->recordings.splice(st->recordings.begin(), st->recordings, it);
    ++replayed_;
    return st->recordings.front().rec.cmd;
  }
  while (st->recordings.size() >= kSegmentCacheSize) {
    recorder_->Free(st->slot, &st->recordings.back().rec);
    st->recordings.pop_back();
  }
  SegmentRecording sr;
  sr.segment = segment;
  sr.groups.assign(shape.groups.begin() + seg.begin, shape.groups.begin() + seg.end);
  sr.spec.assign(shape.spec.begin() + seg.begin, shape.spec.begin() + seg.end);
  OAAXVK_RETURN_IF_ERROR(recorder_->RecordRows(st->slot, shape, seg.begin, seg.end, &sr.rec));
  st->recordings.push_front(std::move(sr));
  ++recorded_;
  return st->recordings.front().rec.cmd;
}

Status SegmentRunner::SubmitAndWait(SlotState* st, VkCommandBuffer cmd, std::chrono::steady_clock::time_point deadline,
                                    const char* what) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  OAAXVK_RETURN_IF_ERROR(submit_(si, st->fence));
  const VkResult r = WaitForFences(dev_, 1, &st->fence, VK_TRUE, RemainingNs(deadline));
  if (r == VK_TIMEOUT) {
    // Still running: the next frame of this slot waits for it before it
    // touches the slot's buffers or this fence (RunFrame).
    st->fence_pending = true;
    return DeadlineExceeded(StrFormat("%s of this frame did not complete within receive_timeout_ms", what));
  }
  OAAXVK_RETURN_IF_ERROR(VkCheck(r, "vkWaitForFences").WithContext(what));
  return VkCheck(vkResetFences(dev_, 1, &st->fence), "vkResetFences");
}

Status SegmentRunner::RunFrame(size_t index, FrameSlot* slot, std::vector<int64_t> symbols,
                               std::chrono::steady_clock::time_point deadline) {
  SlotState& st = slots_[index];
  if (st.fence_pending) {
    const VkResult r = WaitForFences(dev_, 1, &st.fence, VK_TRUE, RemainingNs(deadline));
    if (r == VK_TIMEOUT)
      return DeadlineExceeded("a segment of an earlier frame in this frame slot, whose wait timed out, has not "
                              "completed within receive_timeout_ms; call send_input again");
    OAAXVK_RETURN_IF_ERROR(VkCheck(r, "vkWaitForFences").WithContext("an earlier frame's segment"));
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkResetFences(dev_, 1, &st.fence), "vkResetFences"));
    st.fence_pending = false;
  }
  const ShapeProgram& sp = bundle_->shape;
  for (size_t y = 0; y < sp.symbols.size(); ++y)
    if (sp.symbols[y].decided) symbols[y] = sp.symbols[y].min;
  Host host(this, &st, deadline);
  OAAXVK_RETURN_IF_ERROR(RunControlProgram(bundle_->control, sp, &symbols, &host, nullptr));
  // The outputs' shapes at the symbols the frame ended with, checked
  // against the plan's bytes.
  OAAXVK_ASSIGN_OR_RETURN(ShapeInstance final_shape, recorder_->Instantiate(symbols));
  st.final.shape = std::move(final_shape);
  slot->current = &st.final;
  return Status::Ok();
}

}  // namespace oaaxvk::runtime

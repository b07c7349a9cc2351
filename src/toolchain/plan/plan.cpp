#include "toolchain/plan/plan.h"

#include <algorithm>
#include <cstring>

namespace oaaxvk::toolchain {

namespace {

// A value's size in bytes at the shape the plan is made for (the maximum of a
// dynamic program: every smaller shape fits).
uint64_t Bytes(const Value& v) { return PlannedBytes(v); }

uint64_t AlignUp(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

struct Range {
  BufferKind kind;
  uint64_t begin, end;
  bool Overlaps(const Range& o) const { return kind == o.kind && begin < o.end && o.begin < end; }
};
}  // namespace

std::vector<Lifetime> ComputeLifetimes(const Program& p) {
  std::vector<Lifetime> lt(p.values.size());
  for (size_t d = 0; d < p.dispatches.size(); ++d)
    for (const std::vector<Binding>* bs : {&p.dispatches[d].bindings, &p.dispatches[d].gpu_bindings})
      for (const Binding& b : *bs) {
        Lifetime& l = lt[b.value];
        if (l.first < 0) l.first = static_cast<int>(d);
        l.last = static_cast<int>(d);
      }
  return lt;
}

std::vector<uint8_t> ComputeBarriers(const Program& p) {
  std::vector<uint8_t> barrier(p.dispatches.size(), 0);
  std::vector<Range> pending_writes, pending_reads;
  for (size_t d = 0; d < p.dispatches.size(); ++d) {
    std::vector<Range> reads, writes;
    for (const Binding& b : p.dispatches[d].bindings) {
      const Value& v = p.values[b.value];
      Range r{v.kind, v.offset, v.offset + Bytes(v)};
      (b.written ? writes : reads).push_back(r);
    }
    bool need = false;
    for (const Range& w : pending_writes) {
      for (const Range& r : reads) need |= r.Overlaps(w);
      for (const Range& r : writes) need |= r.Overlaps(w);
    }
    for (const Range& r : pending_reads)
      for (const Range& w : writes) need |= r.Overlaps(w);
    if (need) {
      barrier[d] = 1;
      pending_writes.clear();
      pending_reads.clear();
    }
    pending_writes.insert(pending_writes.end(), writes.begin(), writes.end());
    pending_reads.insert(pending_reads.end(), reads.begin(), reads.end());
  }
  return barrier;
}

uint32_t BarrierLowerBound(const Program& p) {
  const size_t n = p.dispatches.size();
  std::vector<std::vector<Range>> reads(n), writes(n);
  for (size_t d = 0; d < n; ++d)
    for (const Binding& b : p.dispatches[d].bindings) {
      const Value& v = p.values[b.value];
      (b.written ? writes[d] : reads[d]).push_back(Range{v.kind, v.offset, v.offset + Bytes(v)});
    }
  auto any_overlap = [](const std::vector<Range>& a, const std::vector<Range>& b) {
    for (const Range& x : a)
      for (const Range& y : b)
        if (x.Overlaps(y)) return true;
    return false;
  };
  // depth[d]: the longest hazard chain ending at d (1 = depends on nothing).
  std::vector<uint32_t> depth(n, 1);
  uint32_t longest = 0;
  for (size_t d = 0; d < n; ++d) {
    for (size_t e = 0; e < d; ++e)
      if (depth[e] + 1 > depth[d] && (any_overlap(writes[e], reads[d]) || any_overlap(writes[e], writes[d]) ||
                                      any_overlap(reads[e], writes[d])))
        depth[d] = depth[e] + 1;
    longest = std::max(longest, depth[d]);
  }
  return longest == 0 ? 0 : longest - 1;
}

StatusOr<MemoryPlan> PlanMemory(Program& p) {
  MemoryPlan plan;
  std::vector<Lifetime> lt = ComputeLifetimes(p);
  // Inputs / outputs: I/O order, densely packed at aligned offsets.
  for (IoDesc& io : p.inputs) {
    p.values[io.value].offset = plan.inputs_bytes;
    plan.inputs_bytes = AlignUp(plan.inputs_bytes + IoPlannedBytes(io, p.values[io.value]));
  }
  for (IoDesc& io : p.outputs) {
    p.values[io.value].offset = plan.outputs_bytes;
    plan.outputs_bytes = AlignUp(plan.outputs_bytes + IoPlannedBytes(io, p.values[io.value]));
  }
  // Weights (kind 0) and their binary16 copies (kind 4), each in order of
  // first use.
  auto pack = [&](BufferKind kind, uint64_t* bytes, std::vector<uint8_t>* buffer) -> Status {
    std::vector<size_t> order;
    for (size_t i = 0; i < p.values.size(); ++i)
      if (p.values[i].kind == kind) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lt[a].first < lt[b].first; });
    for (size_t i : order) {
      Value& v = p.values[i];
      if (v.data.size() != Bytes(v)) return Internal("constant '" + v.tensor + "' has inconsistent data size");
      v.offset = *bytes;
      *bytes = AlignUp(*bytes + Bytes(v));
    }
    buffer->assign(*bytes, 0);
    for (size_t i : order) {
      const Value& v = p.values[i];
      if (Bytes(v)) std::memcpy(buffer->data() + v.offset, v.data.data(), Bytes(v));
    }
    return Status::Ok();
  };
  OAAXVK_RETURN_IF_ERROR(pack(BufferKind::kWeights, &plan.weights_bytes, &plan.weights));
  OAAXVK_RETURN_IF_ERROR(pack(BufferKind::kWeightsF16, &plan.weights_f16_bytes, &plan.weights_f16));
  // Arena: greedy by size (largest first), lowest aligned offset that does
  // not overlap any placed value whose lifetime intersects.
  std::vector<size_t> arena;
  for (size_t i = 0; i < p.values.size(); ++i)
    if (p.values[i].kind == BufferKind::kArena && lt[i].first >= 0) arena.push_back(i);
  std::stable_sort(arena.begin(), arena.end(), [&](size_t a, size_t b) {
    if (Bytes(p.values[a]) != Bytes(p.values[b])) return Bytes(p.values[a]) > Bytes(p.values[b]);
    return a < b;
  });
  std::vector<size_t> placed;
  for (size_t i : arena) {
    Value& v = p.values[i];
    uint64_t size = AlignUp(Bytes(v));
    plan.arena_unshared_bytes += size;
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed)
      if (!(lt[j].last < lt[i].first || lt[i].last < lt[j].first))
        busy.push_back({p.values[j].offset, p.values[j].offset + AlignUp(Bytes(p.values[j]))});
    std::sort(busy.begin(), busy.end());
    uint64_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + size <= b) break;
      off = std::max(off, e);
    }
    v.offset = off;
    plan.arena_bytes = std::max(plan.arena_bytes, off + size);
    placed.push_back(i);
  }
  plan.barrier = ComputeBarriers(p);
  plan.barrier_lower_bound = BarrierLowerBound(p);
  return plan;
}

}  // namespace oaaxvk::toolchain

#include "toolchain/plan/plan.h"

#include <algorithm>
#include <cstring>

#include "toolchain/ir/limits.h"
#include "toolchain/plan/lifetime_index.h"
#include "toolchain/plan/range_max.h"

namespace oaaxvk::toolchain {

namespace {

// A value's size in bytes at the shape the plan is made for (the maximum of a
// dynamic program: every smaller shape fits).
uint64_t Bytes(const Value& v) { return PlannedBytes(v); }

uint64_t AlignUp(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

// One binding's bytes: [begin, end) of buffer `kind`.
struct Range {
  BufferKind kind;
  uint64_t begin, end;
  bool written;
};

constexpr size_t kKinds = 5;  // BufferKind values

std::vector<std::vector<Range>> DispatchRanges(const Program& p) {
  std::vector<std::vector<Range>> r(p.dispatches.size());
  for (size_t d = 0; d < p.dispatches.size(); ++d)
    for (const Binding& b : p.dispatches[d].bindings) {
      const Value& v = p.values[b.value];
      r[d].push_back(Range{v.kind, v.offset, v.offset + Bytes(v), b.written});
    }
  return r;
}

// One RangeMax per buffer kind over the bounds of every range of that kind.
std::vector<RangeMax> IndexPerKind(const std::vector<std::vector<Range>>& ranges) {
  std::vector<std::vector<uint64_t>> bounds(kKinds);
  for (const std::vector<Range>& rs : ranges)
    for (const Range& r : rs) {
      std::vector<uint64_t>& b = bounds[static_cast<size_t>(r.kind) % kKinds];
      b.push_back(r.begin);
      b.push_back(r.end);
    }
  std::vector<RangeMax> index;
  for (std::vector<uint64_t>& b : bounds) index.emplace_back(std::move(b));
  return index;
}

size_t KindOf(const Range& r) { return static_cast<size_t>(r.kind) % kKinds; }
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
  // Feature segment_program: the host reads a value after the segment the
  // control program ran last, so no later dispatch of that segment may
  // reuse its bytes before the read.
  const ControlProgram& cp = p.control;
  for (size_t k = 0; k < cp.steps.size(); ++k) {
    if (cp.steps[k].op != ControlOp::kRead || cp.steps[k].b < 0 ||
        static_cast<size_t>(cp.steps[k].b) >= cp.reads.size())
      continue;
    const int v = cp.reads[static_cast<size_t>(cp.steps[k].b)].value;
    for (size_t j = k; j-- > 0;)
      if (cp.steps[j].op == ControlOp::kRun) {
        const size_t seg = static_cast<size_t>(cp.steps[j].a);
        if (v >= 0 && static_cast<size_t>(v) < lt.size() && seg < cp.segments.size()) {
          Lifetime& l = lt[static_cast<size_t>(v)];
          if (l.first >= 0) l.last = std::max(l.last, static_cast<int>(cp.segments[seg].second) - 1);
        }
        break;
      }
  }
  // A device loop's body runs again per iteration: a value alive at some
  // of its rows but not born and dead within them (a loop-carried buffer, a
  // scan output, a value from before the loop that the body reads) is
  // alive at all of them, so the next iteration still finds it.
  for (const auto& [b, e] : cp.loop_bodies) {
    if (e <= b) continue;
    const int first = static_cast<int>(b), last = static_cast<int>(e) - 1;
    for (Lifetime& l : lt) {
      if (l.first < 0 || l.last < first || l.first > last || (l.first >= first && l.last <= last)) continue;
      l.first = std::min(l.first, first);
      l.last = std::max(l.last, last);
    }
  }
  return lt;
}

// Each byte remembers the last epoch (stretch between two barriers) that
// wrote it and the last that read it; a dispatch meeting the current epoch
// in a hazardous way starts a new one.
std::vector<uint8_t> ComputeBarriers(const Program& p) {
  std::vector<uint8_t> barrier(p.dispatches.size(), 0);
  const std::vector<std::vector<Range>> ranges = DispatchRanges(p);
  std::vector<RangeMax> written = IndexPerKind(ranges), read = IndexPerKind(ranges);
  uint32_t epoch = 1;
  for (size_t d = 0; d < ranges.size(); ++d) {
    bool need = false;
    for (const Range& r : ranges[d]) {
      need |= written[KindOf(r)].Max(r.begin, r.end) == epoch;               // RAW, WAW
      if (r.written) need |= read[KindOf(r)].Max(r.begin, r.end) == epoch;   // WAR
    }
    if (need) {
      barrier[d] = 1;
      ++epoch;
    }
    for (const Range& r : ranges[d]) (r.written ? written : read)[KindOf(r)].Raise(r.begin, r.end, epoch);
  }
  return barrier;
}

// depth[d] = 1 + the largest depth of an earlier dispatch in hazard with d.
// Taken byte by byte: the deepest earlier writer of a byte d reads or
// writes, and the deepest earlier reader of a byte d writes, which two
// RangeMax (writers; readers and writers) keep.
uint32_t BarrierLowerBound(const Program& p) {
  const std::vector<std::vector<Range>> ranges = DispatchRanges(p);
  std::vector<RangeMax> writers = IndexPerKind(ranges), touchers = IndexPerKind(ranges);
  uint32_t longest = 0;
  for (size_t d = 0; d < ranges.size(); ++d) {
    uint32_t before = 0;
    for (const Range& r : ranges[d])
      before = std::max(before, (r.written ? touchers : writers)[KindOf(r)].Max(r.begin, r.end));
    const uint32_t depth = before + 1;
    for (const Range& r : ranges[d]) {
      touchers[KindOf(r)].Raise(r.begin, r.end, depth);
      if (r.written) writers[KindOf(r)].Raise(r.begin, r.end, depth);
    }
    longest = std::max(longest, depth);
  }
  return longest == 0 ? 0 : longest - 1;
}

// Every binding must fit one device binding (ConversionLimits::
// max_binding_bytes); passes/split_large.h splits the weights it can, so what
// reaches this check has no split strategy.
namespace {
Status CheckBindingSizes(const Program& p) {
  const uint64_t limit = CurrentLimits().max_binding_bytes;
  for (size_t d = 0; d < p.dispatches.size(); ++d)
    for (const std::vector<Binding>* bs : {&p.dispatches[d].bindings, &p.dispatches[d].gpu_bindings})
      for (const Binding& b : *bs) {
        const Value& v = p.values[b.value];
        if (Bytes(v) <= limit) continue;
        const Dispatch& x = p.dispatches[d];
        return ResourceExhausted(
            "tensor '" + v.tensor + "' (bound by node '" + x.node + "' (" + x.op_type + ")) takes " +
            std::to_string(Bytes(v)) + " bytes, over the binding limit max_binding_bytes = " + std::to_string(limit) +
            " (the smallest maxStorageBufferRange of the target devices); only the constant weights of Gemm, "
            "MatMul and group-1 Conv are split to fit. Use a smaller input shape, or raise max_binding_bytes in "
            "config.json \"limits\" when every target device's maxStorageBufferRange allows it");
      }
  return Status::Ok();
}
}  // namespace

StatusOr<MemoryPlan> PlanMemory(Program& p) {
  OAAXVK_RETURN_IF_ERROR(CheckBindingSizes(p));
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
  LifetimeIndex placed(p.dispatches.size());
  std::vector<size_t> live;
  for (size_t i : arena) {
    Value& v = p.values[i];
    uint64_t size = AlignUp(Bytes(v));
    plan.arena_unshared_bytes += size;
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    live.clear();
    placed.Overlapping(lt[i].first, lt[i].last, &live);
    for (size_t j : live) busy.push_back({p.values[j].offset, p.values[j].offset + AlignUp(Bytes(p.values[j]))});
    std::sort(busy.begin(), busy.end());
    uint64_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + size <= b) break;
      off = std::max(off, e);
    }
    v.offset = off;
    plan.arena_bytes = std::max(plan.arena_bytes, off + size);
    placed.Add(lt[i].first, lt[i].last, i);
  }
  plan.barrier = ComputeBarriers(p);
  plan.barrier_lower_bound = BarrierLowerBound(p);
  return plan;
}

}  // namespace oaaxvk::toolchain

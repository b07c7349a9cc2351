#include "runtime/profiling.h"

#include <algorithm>
#include <string>

#include "runtime/log.h"

namespace oaaxvk::runtime {

void DispatchProfiler::SetUp(VkContext* ctx) {
  if (!LogEnabled(LogLevel::kInfo)) {
    Log(LogLevel::kWarn, "profile=1 is ignored: the profile is logged at info level and log_level is above 2");
    return;
  }
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_device(), &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_device(), &n, families.data());
  const uint32_t family = ctx->queue_family();
  const uint32_t bits = family < n ? families[family].timestampValidBits : 0;
  const float period = ctx->properties().limits.timestampPeriod;
  if (bits == 0 || !(period > 0.0f)) {
    Log(LogLevel::kWarn, StrFormat("profile=1: profiling is unavailable on '%s': queue family %u has "
                                   "timestampValidBits = %u (timestampPeriod %g ns); running without it",
                                   ctx->device_name().c_str(), family, bits, static_cast<double>(period)));
    return;
  }
  enabled_ = true;
  timestamp_mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  timestamp_period_ns_ = static_cast<double>(period);
}

void DispatchProfiler::LogFrame(VkDevice dev, const Bundle& bundle, VkQueryPool queries,
                                const std::vector<std::array<uint32_t, 3>>& groups, uint64_t seq) const {
  const size_t nd = bundle.dispatches.size();
  std::vector<uint64_t> ts(2 * nd);
  // The frame's fence has signaled, so every query is available; WAIT is a
  // formality that turns a driver bug into a wait instead of garbage.
  VkResult r = vkGetQueryPoolResults(dev, queries, 0, static_cast<uint32_t>(2 * nd), ts.size() * sizeof(uint64_t),
                                     ts.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) {
    Log(LogLevel::kWarn, StrFormat("profile frame #%llu: %s", static_cast<unsigned long long>(seq),
                                   VkCheck(r, "vkGetQueryPoolResults").message().c_str()));
    return;
  }
  const unsigned long long frame = static_cast<unsigned long long>(seq);
  auto us = [&](uint64_t from, uint64_t to) {
    return static_cast<double>((to - from) & timestamp_mask_) * timestamp_period_ns_ / 1000.0;
  };
  auto describe = [&](size_t i) {
    const Dispatch& d = bundle.dispatches[i];
    const char* op = d.op < bundle.op_names.size() ? bundle.op_names[d.op].c_str() : "";
    return StrFormat("kernel '%s' (#%u) groups (%u, %u, %u) op '%s'", bundle.kernels[d.kernel].name.c_str(),
                     d.kernel, groups[i][0], groups[i][1], groups[i][2], op);
  };
  std::vector<double> t(nd);
  double sum = 0;
  for (size_t i = 0; i < nd; ++i) {
    t[i] = us(ts[2 * i], ts[2 * i + 1]);
    sum += t[i];
    Log(LogLevel::kInfo, StrFormat("profile frame #%llu dispatch %zu: %.1f us %s", frame, i, t[i], describe(i).c_str()));
  }
  const double span = nd ? us(ts[0], ts[2 * nd - 1]) : 0.0;
  Log(LogLevel::kInfo, StrFormat("profile frame #%llu: %zu dispatches, %.1f us in dispatches, %.1f us from the first "
                                 "dispatch's start to the last one's end",
                                 frame, nd, sum, span));
  std::vector<size_t> order(nd);
  for (size_t i = 0; i < nd; ++i) order[i] = i;
  const size_t top = std::min<size_t>(15, nd);
  std::partial_sort(order.begin(), order.begin() + top, order.end(),
                    [&](size_t a, size_t b) { return t[a] > t[b] || (t[a] == t[b] && a < b); });
  for (size_t k = 0; k < top; ++k) {
    const size_t i = order[k];
    Log(LogLevel::kInfo, StrFormat("profile frame #%llu top %zu: dispatch %zu %.1f us (%.1f%%) %s", frame, k + 1, i,
                                   t[i], sum > 0 ? 100.0 * t[i] / sum : 0.0, describe(i).c_str()));
  }
  struct Total { double us = 0; size_t count = 0; };
  std::vector<Total> per_kernel(bundle.kernels.size());
  for (size_t i = 0; i < nd; ++i) {
    per_kernel[bundle.dispatches[i].kernel].us += t[i];
    per_kernel[bundle.dispatches[i].kernel].count++;
  }
  std::vector<size_t> korder;
  for (size_t j = 0; j < per_kernel.size(); ++j)
    if (per_kernel[j].count) korder.push_back(j);
  std::stable_sort(korder.begin(), korder.end(), [&](size_t a, size_t b) { return per_kernel[a].us > per_kernel[b].us; });
  for (size_t j : korder) {
    Log(LogLevel::kInfo, StrFormat("profile frame #%llu kernel '%s' (#%zu): %.1f us (%.1f%%) in %zu dispatch(es)",
                                   frame, bundle.kernels[j].name.c_str(), j, per_kernel[j].us,
                                   sum > 0 ? 100.0 * per_kernel[j].us / sum : 0.0, per_kernel[j].count));
  }
}

}  // namespace oaaxvk::runtime

// The persistent VkPipelineCache file: where it lives, and reading and
// writing it safely. A file holds one driver's cache data for one bundle's
// pipelines on one device and driver version, behind a header of this
// runtime's own that names that key and checksums the data, so a cache from
// another bundle, device or driver, a truncated or corrupt file never
// reaches the driver: it is ignored with a log line and replaced at the next
// save. Writes go to a temporary file of the process's own, renamed over the
// cache, so processes loading at once never write into one file and a reader
// sees an old or a new cache, whole.
#ifndef OAAXVK_RUNTIME_PIPELINE_CACHE_H_
#define OAAXVK_RUNTIME_PIPELINE_CACHE_H_

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace oaaxvk::runtime {

// What a cache file is valid for.
struct PipelineCacheKey {
  uint64_t bundle_hash = 0;  // the bundle's pipeline inputs (Pipelines: SPIR-V, layouts, specialization values)
  uint8_t cache_uuid[VK_UUID_SIZE] = {};  // VkPhysicalDeviceProperties::pipelineCacheUUID
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t driver_version = 0;  // VkPhysicalDeviceProperties::driverVersion
};

// The cache file for the runtime argument pipeline_cache (`setting`) and
// pipeline_cache_dir (`dir`):
// - "" or "auto": <dir>/<bundle hash>-<vendor:device>-<driver version>-<cache UUID>.vkpc, where an empty
//   `dir` is $XDG_CACHE_HOME/oaax-vulkan (when XDG_CACHE_HOME is an absolute path) or $HOME/.cache/oaax-vulkan;
//   *auto_dir is set to the directory (created, with its parents, when the cache is saved);
// - "off" or "0": no cache: returns "" and sets *why_none;
// - anything else: that file (its directory must exist).
// Returns "" with *why_none set when no directory can be found (no HOME).
std::string PipelineCachePath(const std::string& setting, const std::string& dir, const PipelineCacheKey& key,
                              std::string* auto_dir, std::string* why_none);

// The driver data of the cache file at `path` for `key`; empty when the file
// does not exist (nothing logged) or is not a usable cache for `key`
// (logged at warning level with the reason: unreadable, not a cache of this
// runtime, another bundle/device/driver, truncated or corrupt).
std::vector<uint8_t> ReadPipelineCache(const std::string& path, const PipelineCacheKey& key);

// Writes `data` (driver cache data) as the cache file at `path` for `key`
// (creating `mkdir_parents` and its parents first when not empty). Failures
// are logged at warning level with the path and the reason and return false;
// never throws.
bool WritePipelineCache(const std::string& path, const std::string& mkdir_parents, const PipelineCacheKey& key,
                        const std::vector<uint8_t>& data);

// The most bytes of *.vkpc files PrunePipelineCacheDir keeps in a directory.
constexpr uint64_t kPipelineCacheDirBytes = 256ull << 20;

// Keeps the per-user directory `dir` bounded: deletes its least recently
// used *.vkpc files (ReadPipelineCache and WritePipelineCache refresh a
// file's modification time) until they total at most `max_bytes`, never
// `keep` (the file just written), and temporary files (*.tmp) older than an
// hour (left by a process that died while saving). Deletions are logged at
// info level; failures are ignored (another process may prune at once).
void PrunePipelineCacheDir(const std::string& dir, const std::string& keep, uint64_t max_bytes);

// 64-bit FNV-1a of `n` bytes, continuing from `h` (start with kFnvOffset).
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
uint64_t Fnv1a(const void* bytes, size_t n, uint64_t h);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_PIPELINE_CACHE_H_

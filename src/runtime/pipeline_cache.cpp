#include "runtime/pipeline_cache.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oaax_vulkan/status.h"
#include "runtime/log.h"

namespace oaaxvk::runtime {

namespace {

// File layout (little-endian, as every supported host): the header below,
// then `payload_bytes` of driver data (vkGetPipelineCacheData).
constexpr char kMagic[8] = {'O', 'A', 'X', 'V', 'K', 'P', 'C', '1'};
struct Header {
  char magic[8];
  uint32_t header_bytes;  // sizeof(Header): a different layout is another format
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t driver_version;
  uint8_t cache_uuid[VK_UUID_SIZE];
  uint64_t bundle_hash;
  uint64_t payload_bytes;
  uint64_t payload_hash;  // Fnv1a of the payload
};
static_assert(sizeof(Header) == 64, "the cache header is 64 bytes");

std::string Hex(const uint8_t* b, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += StrFormat("%02x", b[i]);
  return s;
}

// mkdir -p with mode 0700 (the cache is per user).
bool MakeDirs(const std::string& dir, std::string* error) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    const std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      *error = StrFormat("cannot create directory '%s': %s", part.c_str(), strerror(errno));
      return false;
    }
  }
  return true;
}

}  // namespace

uint64_t Fnv1a(const void* bytes, size_t n, uint64_t h) {
  const uint8_t* p = static_cast<const uint8_t*>(bytes);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string PipelineCachePath(const std::string& setting, const std::string& dir, const PipelineCacheKey& key,
                              std::string* auto_dir, std::string* why_none) {
  auto_dir->clear();
  if (setting == "off" || setting == "0") {
    *why_none = StrFormat("pipeline_cache=%s", setting.c_str());
    return "";
  }
  if (!setting.empty() && setting != "auto") return setting;
  std::string d = dir;
  if (d.empty()) {
    const char* xdg = getenv("XDG_CACHE_HOME");
    const char* home = getenv("HOME");
    if (xdg && xdg[0] == '/') {
      d = std::string(xdg) + "/oaax-vulkan";
    } else if (home && home[0] != '\0') {
      d = std::string(home) + "/.cache/oaax-vulkan";
    } else {
      *why_none = "neither XDG_CACHE_HOME (absolute) nor HOME is set; pass pipeline_cache_dir or pipeline_cache";
      return "";
    }
  }
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  *auto_dir = d;
  return StrFormat("%s/%016llx-%04x:%04x-%08x-%s.vkpc", d.c_str(), static_cast<unsigned long long>(key.bundle_hash),
                   key.vendor_id, key.device_id, key.driver_version, Hex(key.cache_uuid, VK_UUID_SIZE).c_str());
}

std::vector<uint8_t> ReadPipelineCache(const std::string& path, const PipelineCacheKey& key) {
  std::vector<uint8_t> file;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) {
    if (errno != ENOENT)
      Log(LogLevel::kWarn, StrFormat("pipeline cache '%s' ignored: cannot open it: %s", path.c_str(), strerror(errno)));
    return {};
  }
  uint8_t buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) file.insert(file.end(), buf, buf + got);
  const bool read_error = ferror(f) != 0;
  fclose(f);
  auto ignore = [&](const std::string& why) {
    Log(LogLevel::kWarn, StrFormat("pipeline cache '%s' ignored: %s; pipelines are created without it and the file "
                                   "is replaced when the cache is saved",
                                   path.c_str(), why.c_str()));
    return std::vector<uint8_t>();
  };
  if (read_error) return ignore("reading it failed");
  Header h;
  if (file.size() < sizeof h || memcmp(file.data(), kMagic, sizeof kMagic) != 0)
    return ignore("not a pipeline cache of this runtime (no OAXVKPC1 header)");
  memcpy(&h, file.data(), sizeof h);
  if (h.header_bytes != sizeof h) return ignore(StrFormat("header of %u bytes, expected %zu", h.header_bytes, sizeof h));
  if (h.vendor_id != key.vendor_id || h.device_id != key.device_id || h.driver_version != key.driver_version ||
      memcmp(h.cache_uuid, key.cache_uuid, VK_UUID_SIZE) != 0)
    return ignore(StrFormat("written for device %04x:%04x driver version %08x cache UUID %s, this is %04x:%04x "
                            "driver version %08x cache UUID %s",
                            h.vendor_id, h.device_id, h.driver_version, Hex(h.cache_uuid, VK_UUID_SIZE).c_str(),
                            key.vendor_id, key.device_id, key.driver_version,
                            Hex(key.cache_uuid, VK_UUID_SIZE).c_str()));
  if (h.bundle_hash != key.bundle_hash)
    return ignore(StrFormat("written for other kernels (bundle hash %016llx, this bundle's is %016llx)",
                            static_cast<unsigned long long>(h.bundle_hash),
                            static_cast<unsigned long long>(key.bundle_hash)));
  if (h.payload_bytes != file.size() - sizeof h)
    return ignore(StrFormat("truncated or extended: the header says %llu bytes of data, the file holds %zu",
                            static_cast<unsigned long long>(h.payload_bytes), file.size() - sizeof h));
  if (Fnv1a(file.data() + sizeof h, file.size() - sizeof h, kFnvOffset) != h.payload_hash)
    return ignore("corrupt (its data does not match the header's checksum)");
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now: the last file PrunePipelineCacheDir deletes
  return std::vector<uint8_t>(file.begin() + sizeof h, file.end());
}

bool WritePipelineCache(const std::string& path, const std::string& mkdir_parents, const PipelineCacheKey& key,
                        const std::vector<uint8_t>& data) {
  try {
    std::string error;
    if (!mkdir_parents.empty() && !MakeDirs(mkdir_parents, &error)) {
      Log(LogLevel::kWarn, StrFormat("pipeline cache '%s': %s (the cache is not saved)", path.c_str(), error.c_str()));
      return false;
    }
    Header h;
    memcpy(h.magic, kMagic, sizeof kMagic);
    h.header_bytes = sizeof h;
    h.vendor_id = key.vendor_id;
    h.device_id = key.device_id;
    h.driver_version = key.driver_version;
    memcpy(h.cache_uuid, key.cache_uuid, VK_UUID_SIZE);
    h.bundle_hash = key.bundle_hash;
    h.payload_bytes = data.size();
    h.payload_hash = Fnv1a(data.data(), data.size(), kFnvOffset);
    // A temporary name of this process's own (pid and random bits).
    const std::string tmp = StrFormat("%s.%ld.%08lx.tmp", path.c_str(), static_cast<long>(getpid()),
                                      static_cast<unsigned long>(std::random_device()()));
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f) {
      Log(LogLevel::kWarn, StrFormat("pipeline cache '%s': cannot create '%s': %s (the cache is not saved)",
                                     path.c_str(), tmp.c_str(), strerror(errno)));
      return false;
    }
    if (fwrite(&h, 1, sizeof h, f) != sizeof h || fwrite(data.data(), 1, data.size(), f) != data.size())
      error = StrFormat("writing '%s': %s", tmp.c_str(), strerror(errno));
    if (fclose(f) != 0 && error.empty()) error = StrFormat("closing '%s': %s", tmp.c_str(), strerror(errno));
    if (error.empty() && rename(tmp.c_str(), path.c_str()) != 0)
      error = StrFormat("renaming '%s' to it: %s", tmp.c_str(), strerror(errno));
    if (!error.empty()) {
      Log(LogLevel::kWarn, StrFormat("pipeline cache '%s': %s (the cache is not saved)", path.c_str(), error.c_str()));
      remove(tmp.c_str());
      return false;
    }
    return true;
  } catch (...) {  // host memory ran out building a message or a name
    return false;
  }
}

void PrunePipelineCacheDir(const std::string& dir, const std::string& keep, uint64_t max_bytes) {
  try {
    struct Entry {
      std::string path;
      uint64_t bytes;
      time_t mtime;
    };
    std::vector<Entry> files;
    uint64_t total = 0;
    DIR* d = opendir(dir.c_str());
    if (!d) return;
    const time_t now = time(nullptr);
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      const std::string path = dir + "/" + name;
      struct stat st;
      if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      auto ends_with = [&](const char* suffix) {
        const size_t n = strlen(suffix);
        return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
      };
      if (ends_with(".tmp") && name.find(".vkpc.") != std::string::npos && now - st.st_mtime > 3600) {
        remove(path.c_str());
      } else if (ends_with(".vkpc")) {
        files.push_back({path, static_cast<uint64_t>(st.st_size), st.st_mtime});
        total += static_cast<uint64_t>(st.st_size);
      }
    }
    closedir(d);
    if (total <= max_bytes) return;
    std::sort(files.begin(), files.end(), [](const Entry& a, const Entry& b) { return a.mtime < b.mtime; });
    for (const Entry& f : files) {
      if (total <= max_bytes) break;
      if (f.path == keep || remove(f.path.c_str()) != 0) continue;
      total -= f.bytes;
      Log(LogLevel::kInfo, StrFormat("pipeline cache directory '%s' holds more than %llu MiB: removed its least "
                                     "recently used file '%s'",
                                     dir.c_str(), static_cast<unsigned long long>(max_bytes >> 20), f.path.c_str()));
    }
  } catch (...) {  // host memory ran out: the directory stays as it is
  }
}

}  // namespace oaaxvk::runtime

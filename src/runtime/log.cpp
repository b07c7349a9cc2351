#include "runtime/log.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

namespace oaaxvk::runtime {
namespace {

std::mutex g_mutex;
LogLevel g_level = LogLevel::kWarn;
FILE* g_file = nullptr;  // nullptr: stderr

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kCritical: return "critical";
    case LogLevel::kOff: return "off";
  }
  return "?";
}

}  // namespace

Status ConfigureLog(LogLevel level, const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_file) { fclose(g_file); g_file = nullptr; }
  g_level = level;
  if (!path.empty()) {
    g_file = fopen(path.c_str(), "a");
    if (!g_file) {
      return InvalidArgument(StrFormat("log_file '%s': cannot open for appending: %s", path.c_str(),
                                       strerror(errno)));
    }
  }
  return Status::Ok();
}

void ResetLog() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_file) { fclose(g_file); g_file = nullptr; }
  g_level = LogLevel::kWarn;
}

bool LogEnabled(LogLevel level) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return level != LogLevel::kOff && level >= g_level;
}

void Log(LogLevel level, const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (level == LogLevel::kOff || level < g_level) return;
  FILE* out = g_file ? g_file : stderr;
  char stamp[32];
  time_t now = time(nullptr);
  struct tm tm_buf;
  localtime_r(&now, &tm_buf);
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm_buf);
  fprintf(out, "[%s] [oaax-vulkan] [%s] %s\n", stamp, LevelName(level), message.c_str());
  fflush(out);
}

}  // namespace oaaxvk::runtime

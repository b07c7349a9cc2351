// Minimal leveled logger for the runtime (levels as spdlog: 0 trace … 6 off).
#ifndef OAAXVK_RUNTIME_LOG_H_
#define OAAXVK_RUNTIME_LOG_H_

#include <string>

#include "oaax_vulkan/status.h"

namespace oaaxvk::runtime {

enum class LogLevel { kTrace = 0, kDebug, kInfo, kWarn, kError, kCritical, kOff };

// Configures the process-wide logger. An empty path logs to stderr.
Status ConfigureLog(LogLevel level, const std::string& path);
// Closes a log file (back to stderr, level warn).
void ResetLog();
bool LogEnabled(LogLevel level);
void Log(LogLevel level, const std::string& message);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_LOG_H_

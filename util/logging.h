// Writing to the info LOG from inside the engine: printf-style helpers that take a Logger
// (which may be null: nothing is written), the SHALE_LOG_* macros that prefix the source
// file and line as RocksDB's ROCKS_LOG_* do, a Logger that discards everything, and the
// line format shared by the built-in file loggers.
//
// Thread safety: as Logger (any thread).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <memory>
#include <string>

#include "shale/env.h"
#include "shale/info_log_level.h"

namespace shale {

#if defined(__GNUC__) || defined(__clang__)
#define SHALE_PRINTF_FORMAT(fmt_index, first_arg) \
  __attribute__((__format__(__printf__, fmt_index, first_arg)))
#else
#define SHALE_PRINTF_FORMAT(fmt_index, first_arg)
#endif

// A line at `level` (dropped if below the logger's level). info_log may be null.
void Log(InfoLogLevel level, Logger* info_log, const char* format, ...) SHALE_PRINTF_FORMAT(3, 4);
void Log(InfoLogLevel level, const std::shared_ptr<Logger>& info_log, const char* format, ...)
    SHALE_PRINTF_FORMAT(3, 4);
// An INFO line.
void Log(Logger* info_log, const char* format, ...) SHALE_PRINTF_FORMAT(2, 3);
void Header(Logger* info_log, const char* format, ...) SHALE_PRINTF_FORMAT(2, 3);
void Debug(Logger* info_log, const char* format, ...) SHALE_PRINTF_FORMAT(2, 3);
void Info(Logger* info_log, const char* format, ...) SHALE_PRINTF_FORMAT(2, 3);
void Warn(Logger* info_log, const char* format, ...) SHALE_PRINTF_FORMAT(2, 3);
void Error(Logger* info_log, const char* format, ...) SHALE_PRINTF_FORMAT(2, 3);
void Fatal(Logger* info_log, const char* format, ...) SHALE_PRINTF_FORMAT(2, 3);

// The file name without its directories, for the macros' "[db/flush_job.cc:42] " prefix.
constexpr const char* LogBaseName(const char* path) {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/') base = p + 1;
  }
  return base;
}

// `logger` is a Logger* or a shared_ptr<Logger> (may be null). Lines carry
// "[file.cc:line] " before the message, except HEADER lines.
#define SHALE_LOG_AT(level, logger, fmt, ...)                                               \
  ::shale::Log((level), (logger), "[%s:%d] " fmt, ::shale::LogBaseName(__FILE__), __LINE__, \
               ##__VA_ARGS__)
#define SHALE_LOG_DEBUG(logger, fmt, ...) \
  SHALE_LOG_AT(::shale::DEBUG_LEVEL, logger, fmt, ##__VA_ARGS__)
#define SHALE_LOG_INFO(logger, fmt, ...) \
  SHALE_LOG_AT(::shale::INFO_LEVEL, logger, fmt, ##__VA_ARGS__)
#define SHALE_LOG_WARN(logger, fmt, ...) \
  SHALE_LOG_AT(::shale::WARN_LEVEL, logger, fmt, ##__VA_ARGS__)
#define SHALE_LOG_ERROR(logger, fmt, ...) \
  SHALE_LOG_AT(::shale::ERROR_LEVEL, logger, fmt, ##__VA_ARGS__)
#define SHALE_LOG_FATAL(logger, fmt, ...) \
  SHALE_LOG_AT(::shale::FATAL_LEVEL, logger, fmt, ##__VA_ARGS__)
#define SHALE_LOG_HEADER(logger, fmt, ...) \
  ::shale::Log(::shale::HEADER_LEVEL, (logger), fmt, ##__VA_ARGS__)

// Drops every line. For callers that must hand out a Logger but have nowhere to write.
class NullLogger final : public Logger {
 public:
  using Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
  size_t GetLogFileSize() const override { return 0; }
};

// The name RocksDB prints for a level ("DEBUG", "INFO", "WARN", "ERROR", "FATAL",
// "HEADER"); "UNKNOWN" outside the enum.
const char* InfoLogLevelName(InfoLogLevel level);

// Appends one LOG line to *out: "2026/11/22-03:15:02.123456 7f3a9c0f8700 <message>\n"
// (local time of now_micros since the epoch, the calling thread's id in hex, the
// formatted message, a newline unless the message ends with one).
void AppendLogLine(uint64_t now_micros, const char* format, va_list ap, std::string* out);

// A Logger writing AppendLogLine lines through `file` (taken over), with env's clock.
// Lines are buffered by the file and pushed to it every `flush_every_micros`, by Flush,
// by an ERROR or FATAL line, and by Close (which also closes the file).
std::shared_ptr<Logger> NewFileLogger(Env* env, std::unique_ptr<WritableFile>&& file,
                                      InfoLogLevel level = INFO_LEVEL,
                                      uint64_t flush_every_micros = 5 * 1000 * 1000);

}  // namespace shale

#include "util/logging.h"

#include <pthread.h>

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "util/mutexlock.h"

namespace shale {

namespace {

// Calls the unfiltered Logv with a fresh argument list.
void LogUnfiltered(Logger* logger, const char* format, ...) SHALE_PRINTF_FORMAT(2, 3);
void LogUnfiltered(Logger* logger, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  logger->Logv(format, ap);
  va_end(ap);
}

// vsnprintf into a std::string of the right size.
std::string FormatToString(const char* format, va_list ap) {
  char stack_buf[512];
  va_list copy;
  va_copy(copy, ap);
  const int len = std::vsnprintf(stack_buf, sizeof(stack_buf), format, copy);
  va_end(copy);
  if (len < 0) return std::string();
  if (static_cast<size_t>(len) < sizeof(stack_buf)) return std::string(stack_buf, len);
  std::string out(static_cast<size_t>(len) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), format, ap);
  out.resize(static_cast<size_t>(len));
  return out;
}

}  // namespace

// ---- Logger (declared in include/shale/env.h) ----

void Logger::Logv(const InfoLogLevel log_level, const char* format, va_list ap) {
  if (log_level < GetInfoLogLevel()) return;
  if (log_level == INFO_LEVEL) {
    Logv(format, ap);
    return;
  }
  if (log_level == HEADER_LEVEL) {
    LogHeader(format, ap);
    return;
  }
  // The level prefix cannot be spliced into a va_list: format the message first.
  const std::string message = FormatToString(format, ap);
  LogUnfiltered(this, "[%s] %s", InfoLogLevelName(log_level), message.c_str());
  if (log_level >= ERROR_LEVEL) Flush();
}

Status Logger::Close() {
  std::call_once(close_once_, [this] { close_status_ = CloseImpl(); });
  return close_status_;
}

// ---- Env::NewLogger default: a FileLogger over NewWritableFile ----

Status Env::NewLogger(const std::string& fname, std::shared_ptr<Logger>* result) {
  result->reset();
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.writable_file_max_buffer_size = 64 * 1024;
  Status s = NewWritableFile(fname, &file, options);
  if (!s.ok()) return s;
  *result = NewFileLogger(this, std::move(file));
  return Status::OK();
}

// ---- helpers ----

const char* InfoLogLevelName(InfoLogLevel level) {
  switch (level) {
    case DEBUG_LEVEL: return "DEBUG";
    case INFO_LEVEL: return "INFO";
    case WARN_LEVEL: return "WARN";
    case ERROR_LEVEL: return "ERROR";
    case FATAL_LEVEL: return "FATAL";
    case HEADER_LEVEL: return "HEADER";
    default: return "UNKNOWN";
  }
}

void AppendLogLine(uint64_t now_micros, const char* format, va_list ap, std::string* out) {
  const time_t seconds = static_cast<time_t>(now_micros / 1000000);
  struct tm t;
  localtime_r(&seconds, &t);
  char prefix[96];
  const int n =
      std::snprintf(prefix, sizeof(prefix), "%04d/%02d/%02d-%02d:%02d:%02d.%06d %" PRIx64 " ",
                    t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                    static_cast<int>(now_micros % 1000000), static_cast<uint64_t>(pthread_self()));
  out->append(prefix, static_cast<size_t>(n > 0 ? n : 0));
  out->append(FormatToString(format, ap));
  if (out->empty() || out->back() != '\n') out->push_back('\n');
}

#define SHALE_DEFINE_LOG_FN(name, level)                 \
  void name(Logger* info_log, const char* format, ...) { \
    if (info_log == nullptr) return;                     \
    va_list ap;                                          \
    va_start(ap, format);                                \
    info_log->Logv((level), format, ap);                 \
    va_end(ap);                                          \
  }

SHALE_DEFINE_LOG_FN(Log, INFO_LEVEL)
SHALE_DEFINE_LOG_FN(Header, HEADER_LEVEL)
SHALE_DEFINE_LOG_FN(Debug, DEBUG_LEVEL)
SHALE_DEFINE_LOG_FN(Info, INFO_LEVEL)
SHALE_DEFINE_LOG_FN(Warn, WARN_LEVEL)
SHALE_DEFINE_LOG_FN(Error, ERROR_LEVEL)
SHALE_DEFINE_LOG_FN(Fatal, FATAL_LEVEL)
#undef SHALE_DEFINE_LOG_FN

void Log(InfoLogLevel level, Logger* info_log, const char* format, ...) {
  if (info_log == nullptr) return;
  va_list ap;
  va_start(ap, format);
  info_log->Logv(level, format, ap);
  va_end(ap);
}

void Log(InfoLogLevel level, const std::shared_ptr<Logger>& info_log, const char* format, ...) {
  if (info_log == nullptr) return;
  va_list ap;
  va_start(ap, format);
  info_log->Logv(level, format, ap);
  va_end(ap);
}

// ---- FileLogger ----

namespace {

// Formats lines into a small buffer of its own and appends whole lines to the file, so a
// file that is read while the logger runs never shows half a line.
class FileLogger final : public Logger {
 public:
  FileLogger(Env* env, std::unique_ptr<WritableFile>&& file, InfoLogLevel level,
             uint64_t flush_every_micros)
      : Logger(level),
        env_(env),
        flush_every_micros_(flush_every_micros),
        file_(std::move(file)),
        last_flush_micros_(env->NowMicros()) {}

  ~FileLogger() override { Close().PermitUncheckedError(); }

  using Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    const uint64_t now = env_->NowMicros();
    std::string line;
    AppendLogLine(now, format, ap, &line);
    MutexLock lock(&mu_);
    if (file_ == nullptr) return;
    // A LOG write error must not disturb the DB; the line is lost.
    file_->Append(line).PermitUncheckedError();
    size_ += line.size();
    if (now >= last_flush_micros_ + flush_every_micros_ || now < last_flush_micros_) {
      FlushLocked(now);
    }
  }

  size_t GetLogFileSize() const override {
    MutexLock lock(&mu_);
    return size_;
  }

  void Flush() override {
    MutexLock lock(&mu_);
    if (file_ != nullptr) FlushLocked(env_->NowMicros());
  }

 protected:
  Status CloseImpl() override {
    MutexLock lock(&mu_);
    if (file_ == nullptr) return Status::OK();
    Status s = file_->Close();
    file_.reset();
    return s;
  }

 private:
  void FlushLocked(uint64_t now) REQUIRES(mu_) {
    file_->Flush().PermitUncheckedError();
    last_flush_micros_ = now;
  }

  Env* const env_;
  const uint64_t flush_every_micros_;
  mutable Mutex mu_;
  std::unique_ptr<WritableFile> file_ GUARDED_BY(mu_);  // null once closed
  size_t size_ GUARDED_BY(mu_) = 0;
  uint64_t last_flush_micros_ GUARDED_BY(mu_);
};

}  // namespace

std::shared_ptr<Logger> NewFileLogger(Env* env, std::unique_ptr<WritableFile>&& file,
                                      InfoLogLevel level, uint64_t flush_every_micros) {
  return std::make_shared<FileLogger>(env, std::move(file), level, flush_every_micros);
}

}  // namespace shale

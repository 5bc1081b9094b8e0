// Logger: LOG files made by Env::NewLogger on the POSIX and in-memory Envs, line format,
// level filtering, flushing, Close, many threads; the Log helpers and SHALE_LOG_* macros.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shale/env.h"
#include "tests/testutil/test_util.h"
#include "util/logging.h"

namespace shale {
namespace {

// "2026/11/22-03:15:02.123456 7f3a9c0f8700 message"
const std::regex kLineRe(R"(^\d{4}/\d{2}/\d{2}-\d{2}:\d{2}:\d{2}\.\d{6} [0-9a-f]+ (.*)$)");

// The messages of the file's lines; a line not in the LOG format fails the test.
std::vector<std::string> ReadMessages(Env* env, const std::string& fname) {
  std::string data;
  EXPECT_OK(ReadFileToString(env, fname, &data));
  if (!data.empty()) {
    EXPECT_EQ(data.back(), '\n');
  }
  std::vector<std::string> out;
  std::istringstream in(data);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kLineRe)) {
      out.push_back(m[1]);
    } else {
      ADD_FAILURE() << "not a LOG line: " << line;
    }
  }
  return out;
}

struct EnvCase {
  const char* name;
  bool mem;
};

class LoggerEnvTest : public ::testing::TestWithParam<EnvCase> {
 protected:
  void SetUp() override {
    if (GetParam().mem) {
      mem_env_.reset(NewMemEnv(Env::Default()));
      env_ = mem_env_.get();
      dir_ = "/logger_test";
      ASSERT_OK(env_->CreateDirIfMissing(dir_));
    } else {
      env_ = Env::Default();
      tmp_ = std::make_unique<TempDirectory>("logger_test");
      dir_ = tmp_->path();
    }
  }

  std::string LogName() const { return dir_ + "/LOG"; }

  std::unique_ptr<Env> mem_env_;
  std::unique_ptr<TempDirectory> tmp_;
  Env* env_ = nullptr;
  std::string dir_;
};

TEST_P(LoggerEnvTest, WritesTimestampedLinesFilteredByLevel) {
  std::shared_ptr<Logger> log;
  ASSERT_OK(env_->NewLogger(LogName(), &log));
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->GetInfoLogLevel(), INFO_LEVEL);
  Header(log.get(), "header %d", 1);
  Debug(log.get(), "debug hidden");
  Info(log.get(), "info %s", "shown");
  Warn(log.get(), "warn %d", 2);
  Error(log.get(), "error %d", 3);
  Log(log.get(), "plain log\n");  // a trailing newline is not doubled
  Log(WARN_LEVEL, log, "via shared_ptr");
  log->SetInfoLogLevel(DEBUG_LEVEL);
  Debug(log.get(), "debug now shown");
  log->SetInfoLogLevel(ERROR_LEVEL);
  Warn(log.get(), "warn hidden");
  Info(log.get(), "info hidden");
  Fatal(log.get(), "fatal");
  Header(log.get(), "header at any level");
  log->Flush();

  const std::vector<std::string> want = {"header 1",
                                         "info shown",
                                         "[WARN] warn 2",
                                         "[ERROR] error 3",
                                         "plain log",
                                         "[WARN] via shared_ptr",
                                         "[DEBUG] debug now shown",
                                         "[FATAL] fatal",
                                         "header at any level"};
  EXPECT_EQ(ReadMessages(env_, LogName()), want);

  uint64_t size = 0;
  ASSERT_OK(env_->GetFileSize(LogName(), &size));
  EXPECT_EQ(log->GetLogFileSize(), size);
  ASSERT_OK(log->Close());
}

TEST_P(LoggerEnvTest, CloseFlushesAndLaterLinesAreDropped) {
  std::shared_ptr<Logger> log;
  ASSERT_OK(env_->NewLogger(LogName(), &log));
  Info(log.get(), "before close");
  ASSERT_OK(log->Close());
  ASSERT_OK(log->Close());  // idempotent
  Info(log.get(), "after close");
  log->Flush();
  EXPECT_EQ(ReadMessages(env_, LogName()), std::vector<std::string>{"before close"});
}

TEST_P(LoggerEnvTest, DestructionFlushes) {
  {
    std::shared_ptr<Logger> log;
    ASSERT_OK(env_->NewLogger(LogName(), &log));
    Info(log.get(), "kept");
  }
  EXPECT_EQ(ReadMessages(env_, LogName()), std::vector<std::string>{"kept"});
}

TEST_P(LoggerEnvTest, NewLoggerTruncatesAnOldLog) {
  ASSERT_OK(WriteStringToFile(env_, "old junk that is not a log line\n", LogName()));
  std::shared_ptr<Logger> log;
  ASSERT_OK(env_->NewLogger(LogName(), &log));
  Info(log.get(), "fresh");
  ASSERT_OK(log->Close());
  EXPECT_EQ(ReadMessages(env_, LogName()), std::vector<std::string>{"fresh"});
}

TEST_P(LoggerEnvTest, MissingDirectoryFails) {
  std::shared_ptr<Logger> log;
  EXPECT_NOK(env_->NewLogger(dir_ + "/no/such/dir/LOG", &log));
  EXPECT_EQ(log, nullptr);
}

TEST_P(LoggerEnvTest, ManyThreadsNeverInterleaveWithinALine) {
  std::shared_ptr<Logger> log;
  ASSERT_OK(env_->NewLogger(LogName(), &log));
  constexpr int kThreads = 8;
  constexpr int kLines = 300;
  const std::string pad(300, 'x');  // longer than the formatter's stack buffer
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLines; ++i) Info(log.get(), "t%d i%d %s end", t, i, pad.c_str());
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_OK(log->Close());
  const auto messages = ReadMessages(env_, LogName());
  ASSERT_EQ(messages.size(), static_cast<size_t>(kThreads * kLines));
  std::vector<int> next(kThreads, 0);
  const std::regex msg_re("^t(\\d+) i(\\d+) x{300} end$");
  for (const auto& m : messages) {
    std::smatch g;
    ASSERT_TRUE(std::regex_match(m, g, msg_re)) << m.substr(0, 80);
    const int t = std::stoi(g[1]);
    // Each thread's lines appear in the order it wrote them.
    EXPECT_EQ(std::stoi(g[2]), next[t]++);
  }
}

TEST_P(LoggerEnvTest, EnvWrapperForwardsNewLogger) {
  EnvWrapper wrapper(env_);
  std::shared_ptr<Logger> log;
  ASSERT_OK(wrapper.NewLogger(LogName(), &log));
  Warn(log.get(), "through the wrapper");
  ASSERT_OK(log->Close());
  EXPECT_EQ(ReadMessages(env_, LogName()), std::vector<std::string>{"[WARN] through the wrapper"});
}

INSTANTIATE_TEST_SUITE_P(Envs, LoggerEnvTest,
                         ::testing::Values(EnvCase{"posix", false}, EnvCase{"mem", true}),
                         [](const auto& info) { return std::string(info.param.name); });

// A clock the test moves by hand.
class ManualClockEnv : public EnvWrapper {
 public:
  ManualClockEnv() : EnvWrapper(Env::Default()) {}
  uint64_t NowMicros() override { return now_.load(); }
  void Advance(uint64_t micros) { now_ += micros; }

 private:
  std::atomic<uint64_t> now_{1700000000ull * 1000000 + 123456};
};

TEST(FileLogger, FlushesPeriodicallyAndOnErrors) {
  TempDirectory dir("logger_flush");
  ManualClockEnv clock;
  const std::string fname = dir.File("LOG");
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.writable_file_max_buffer_size = 64 * 1024;
  ASSERT_OK(Env::Default()->NewWritableFile(fname, &file, options));
  auto log = NewFileLogger(&clock, std::move(file), INFO_LEVEL, 1000000);

  Info(log.get(), "buffered");
  // The POSIX file buffers it: nothing on disk yet.
  EXPECT_TRUE(ReadMessages(Env::Default(), fname).empty());
  clock.Advance(1000000);
  Info(log.get(), "a second later");
  EXPECT_EQ(ReadMessages(Env::Default(), fname),
            (std::vector<std::string>{"buffered", "a second later"}));

  Info(log.get(), "buffered again");
  Error(log.get(), "error goes out at once");
  EXPECT_EQ(ReadMessages(Env::Default(), fname).size(), 4u);

  Info(log.get(), "last");
  log->Flush();
  const auto messages = ReadMessages(Env::Default(), fname);
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages.back(), "last");
}

TEST(FileLogger, TimestampIsLocalTimeOfTheEnvClock) {
  auto line_for = [](uint64_t micros) {
    std::string out;
    auto append = [&](const char* fmt, ...) {
      va_list ap;
      va_start(ap, fmt);
      AppendLogLine(micros, fmt, ap, &out);
      va_end(ap);
    };
    append("value %d", 42);
    return out;
  };
  const uint64_t micros = 1700000000ull * 1000000 + 7;
  const std::string line = line_for(micros);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(line, m, std::regex(R"(^(\S+) ([0-9a-f]+) value 42\n$)")));
  time_t secs = 1700000000;
  struct tm t;
  localtime_r(&secs, &t);
  char want[64];
  std::snprintf(want, sizeof(want), "%04d/%02d/%02d-%02d:%02d:%02d.000007", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
  EXPECT_EQ(m[1].str(), want);
}

// A Logger that keeps its lines, to see what the helpers and macros hand it.
class CapturingLogger : public Logger {
 public:
  using Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char buf[1024];
    std::vsnprintf(buf, sizeof(buf), format, ap);
    lines.emplace_back(buf);
  }
  std::vector<std::string> lines;
};

TEST(LogMacros, PrefixFileAndLineAndFilterByLevel) {
  auto log = std::make_shared<CapturingLogger>();
  SHALE_LOG_INFO(log, "opened %s", "db");
  const int info_line = __LINE__ - 1;
  SHALE_LOG_DEBUG(log.get(), "not at INFO");
  SHALE_LOG_WARN(log.get(), "slow %d", 5);
  SHALE_LOG_ERROR(log, "bad");
  SHALE_LOG_HEADER(log, "Options.x: %d", 7);
  ASSERT_EQ(log->lines.size(), 4u);
  EXPECT_EQ(log->lines[0], "[logger_test.cc:" + std::to_string(info_line) + "] opened db");
  EXPECT_EQ(log->lines[1].rfind("[WARN] [logger_test.cc:", 0), 0u) << log->lines[1];
  EXPECT_NE(log->lines[1].find("] slow 5"), std::string::npos);
  EXPECT_EQ(log->lines[2].rfind("[ERROR] [logger_test.cc:", 0), 0u);
  EXPECT_EQ(log->lines[3], "Options.x: 7");
  EXPECT_EQ(log->GetLogFileSize(), Logger::kDoNotSupportGetLogFileSize);
}

TEST(LogMacros, NullLoggersAreSafe) {
  Logger* none = nullptr;
  std::shared_ptr<Logger> empty;
  SHALE_LOG_INFO(none, "nothing %d", 1);
  SHALE_LOG_ERROR(empty, "nothing");
  Info(none, "nothing");
  NullLogger null_logger;
  SHALE_LOG_WARN(&null_logger, "dropped %s", "quietly");
  EXPECT_EQ(null_logger.GetLogFileSize(), 0u);
  EXPECT_OK(null_logger.Close());
  EXPECT_STREQ(InfoLogLevelName(WARN_LEVEL), "WARN");
  EXPECT_STREQ(InfoLogLevelName(static_cast<InfoLogLevel>(99)), "UNKNOWN");
}

}  // namespace
}  // namespace shale

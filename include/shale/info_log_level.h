// Severity of info LOG lines (RocksDB's names); lines below Options::info_log_level are not
// written.
#pragma once

namespace shale {

enum InfoLogLevel : unsigned char {
  DEBUG_LEVEL = 0,
  INFO_LEVEL,
  WARN_LEVEL,
  ERROR_LEVEL,
  FATAL_LEVEL,
  HEADER_LEVEL,
  NUM_INFO_LOG_LEVELS,
};

}  // namespace shale

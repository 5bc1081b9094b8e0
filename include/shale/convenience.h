// ConfigOptions: how options given as text (an OPTIONS file) are read.
//
// RocksDB's ConfigOptions has many more fields (sanity levels, escaping, delimiters,
// object registries); shale keeps the two it honours, with RocksDB's names and defaults,
// so a RocksDB program that sets only these ports by renaming.
//
// Thread safety: a plain struct.
#pragma once

#include "shale/env.h"

namespace shale {

struct ConfigOptions {
  // Skip option names this build does not know instead of failing with InvalidArgument.
  // Needed to read an OPTIONS file that RocksDB wrote (it has options shale lacks).
  // Default: false.
  bool ignore_unknown_options = false;
  // Reads the files. Default: Env::Default().
  Env* env = Env::Default();

  ConfigOptions() = default;
};

}  // namespace shale

// Checking options by the tables: at Open (sanitize, then validate), at SetOptions (parse,
// refuse, validate, all or nothing), and writing them to the info LOG.
//
// Open follows RocksDB: a value out of an option's bounds is clamped when the table marks
// it kOptionClampAtOpen (each clamp is reported, for the LOG), and refused with
// InvalidArgument naming the option otherwise; then the rules that tie options together
// are applied (the L0 triggers are raised to stop >= slowdown >= compaction trigger, the
// write modes RocksDB refuses together are refused, a compression this build lacks is
// refused). SetOptions applies the same rules but clamps nothing: a value Open would have
// clamped is refused.
//
// Thread safety: pure functions over the caller's structs; LogOptions writes to a Logger.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "options/option_table.h"
#include "shale/env.h"
#include "shale/options.h"
#include "shale/status.h"

namespace shale {

// Clamps and validates *options for Open. *warnings gets one line per value changed.
Status SanitizeAndValidateAtOpen(Options* options, std::vector<std::string>* warnings);

// Applies `changes` (option name -> value in OPTIONS-file spelling) to *options, whose
// part of kind `which` (kDB or kCF) is changed. Unknown names, options that cannot change
// at run time, malformed or out-of-bounds values, and results the cross-option rules
// refuse give InvalidArgument naming the option, and leave *options unchanged. An empty
// map is InvalidArgument too, as in RocksDB.
Status ApplyOptionChanges(OptionStruct which,
                          const std::unordered_map<std::string, std::string>& changes,
                          Options* options);

// The options, one "Options.<name>: <value>" HEADER line each (table options as
// "  table_options.<name>: <value>"), spelled as RocksDB's LOG spells them (bools as 0/1,
// compression by its short name).
void LogOptions(Logger* log, const Options& options);

}  // namespace shale

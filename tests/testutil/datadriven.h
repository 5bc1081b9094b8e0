// Data-driven tests, in the manner of Pebble's datadriven package: the cases of a test are
// data in a text file under tests/testdata/, not code.
//
// File format. A case is a command line, optional input lines, a "----" line and the
// expected output, which ends at the first blank line (or the end of the file):
//
//   # a comment line; blank lines and comments between cases are kept on rewrite
//   build restart-interval=2 keys=(a,b)
//   apple:red
//   banana:yellow
//   ----
//   <what the test printed>
//
// The command line is a name and space-separated arguments: `flag`, `key=value` or
// `key=(v1,v2,...)`. An output that itself holds blank lines cannot be expressed; print
// something instead (Pebble's double "----" form is not supported).
//
// Running. RunDataDriven hands each case to the test's function, compares what it returns
// with the expected output, and on a mismatch fails the test at the case's file and line,
// printing both. With SHALE_REWRITE_TESTDATA=1 in the environment it instead writes the
// file back with every expected output replaced by the actual one, so a maintainer who
// changed a format regenerates the files and reviews the diff.
//
// Thread safety: one test thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "shale/slice.h"
#include "util/dbformat.h"

namespace shale {

struct DataDrivenCase {
  std::string file;  // as given to RunDataDriven
  int line = 0;      // 1-based line of the command
  std::string command;
  std::vector<std::pair<std::string, std::vector<std::string>>> args;  // in order
  std::vector<std::string> input;                                      // the input lines
  std::string expected;  // ends in '\n' unless empty

  bool HasArg(const std::string& key) const;
  // The first value of `key`, or default_value when absent. A flag has no value ("").
  std::string Arg(const std::string& key, const std::string& default_value = "") const;
  // Arg as an integer; fails the test (and returns default_value) if it is not one.
  int64_t IntArg(const std::string& key, int64_t default_value = 0) const;
  // Every value of `key` (empty when absent).
  std::vector<std::string> Args(const std::string& key) const;
  // "file:line: command line" for messages.
  std::string Where() const;
};

// The directory holding the data files (tests/testdata in the source tree), set by CMake.
std::string TestDataDir();

// Runs every case in TestDataDir()/relative_path through run (see the file comment).
void RunDataDriven(const std::string& relative_path,
                   const std::function<std::string(const DataDrivenCase&)>& run);

// ---- Helpers for writing and reading the usual kinds of values in test data.

// Bytes as lowercase hex pairs, split into lines of `per_line` bytes (0: one line).
std::string HexDump(const Slice& bytes, size_t per_line = 16);
// Hex pairs (spaces and newlines ignored) back to bytes; false on any other character.
bool ParseHex(const std::string& text, std::string* bytes);
// Bytes printable as they are, others (and the backslash) escaped as \xNN.
std::string Printable(const Slice& bytes);
// The inverse of Printable: \xNN escapes back to bytes; false on a malformed escape.
bool Unescape(const std::string& text, std::string* bytes);

// Internal keys written "user_key#seq,TYPE" with TYPE one of SET, DEL, SINGLEDEL, MERGE,
// RANGEDEL (Pebble's spelling). The user key may not contain '#'.
bool ParseInternalKeyText(const std::string& text, std::string* internal_key);
std::string InternalKeyText(const Slice& internal_key);
const char* ValueTypeName(ValueType type);  // "SET", ...; "?" for others

}  // namespace shale

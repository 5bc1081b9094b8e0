// Compaction picks from described trees, from tests/testdata/compaction_picker.txt (see
// testutil/datadriven.h). The picker only reads file metadata, so no file is written.
//
//   define [num-levels=N] [l0-trigger=N] [base=N] [multiplier=N] [target-file=N]
//          [max-compaction-bytes=N] [dynamic]
//                 A fresh VersionSet and picker under these options (defaults: 5 levels,
//                 trigger 4, base 1000, multiplier 10, target file 100, max compaction
//                 bytes 100000). input: files, one a line, "L<level> <number> <smallest>
//                 <largest> <size> [seq=N]" (user keys; every entry a Put at seq, default
//                 1). output: the scores, as `scores` prints them.
//   add           input: more files, as for define, applied in one edit. output: scores.
//   scores        The picker's view: base level, pending bytes, and per level the files,
//                 bytes, target and score.
//   pick          The next automatic compaction (kept running until `release`), or "none".
//   compact-range level=N output=N [begin=KEY] [end=KEY]
//                 A manual compaction (kept running until `release`): the compaction and
//                 where its chunk ends, or "conflict" / "nothing to compact".
//   release       Releases every compaction still running.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "db/compaction_picker.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "tests/testutil/datadriven.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class CompactionPickerDataTest : public ::testing::Test {
 protected:
  CompactionPickerDataTest() : icmp_(BytewiseComparator()) {}

  ~CompactionPickerDataTest() override { Reset(); }

  // Drops the running compactions, the picker and the VersionSet, in that order.
  void Reset() {
    MutexLock l(&mu_);
    running_.clear();
    picker_.reset();
    vset_.reset();
    table_cache_.reset();
  }

  std::string Define(const DataDrivenCase& c) {
    Reset();
    options_ = Options();
    options_.num_levels = static_cast<int>(c.IntArg("num-levels", 5));
    options_.level0_file_num_compaction_trigger = static_cast<int>(c.IntArg("l0-trigger", 4));
    options_.max_bytes_for_level_base = c.IntArg("base", 1000);
    options_.max_bytes_for_level_multiplier = static_cast<double>(c.IntArg("multiplier", 10));
    options_.target_file_size_base = c.IntArg("target-file", 100);
    options_.max_compaction_bytes = c.IntArg("max-compaction-bytes", 100000);
    options_.level_compaction_dynamic_level_bytes = c.HasArg("dynamic");
    dir_ = std::make_unique<TempDirectory>("compaction_picker_data");
    table_cache_ = std::make_unique<TableCache>(dir_->path(), options_, &icmp_, -1);
    vset_ = std::make_unique<VersionSet>(dir_->path(), &options_, table_cache_.get(), &icmp_, &mu_);
    picker_ = std::make_unique<CompactionPicker>(options_, &icmp_);
    return Add(c);
  }

  std::string Add(const DataDrivenCase& c) {
    VersionEdit edit;
    for (const std::string& line : c.input) {
      std::istringstream in(line);
      std::string level, smallest, largest, seq_arg;
      FileMetaData f;
      in >> level >> f.number >> smallest >> largest >> f.file_size;
      if (in.fail() || level.size() < 2 || level[0] != 'L') return "bad file line: " + line;
      SequenceNumber seq = 1;
      if (in >> seq_arg) {
        if (seq_arg.rfind("seq=", 0) != 0) return "bad file line: " + line;
        seq = std::stoull(seq_arg.substr(4));
      }
      f.smallest = InternalKey(smallest, seq, kTypeValue);
      f.largest = InternalKey(largest, seq, kTypeValue);
      f.smallest_seqno = f.largest_seqno = seq;
      edit.AddFile(std::stoi(level.substr(1)), f);
    }
    MutexLock l(vset_->db_mutex());
    Status s = vset_->LogAndApply(&edit);
    if (!s.ok()) return s.ToString();
    return ScoresLocked();
  }

  std::string Scores() {
    MutexLock l(vset_->db_mutex());
    return ScoresLocked();
  }

  std::string ScoresLocked() REQUIRES(vset_->db_mutex()) {
    Version* v = vset_->current();
    const LevelScores& scores = picker_->ScoresOf(v);
    std::string out = "base-level=" + std::to_string(scores.base_level) +
                      " pending-bytes=" + std::to_string(scores.estimated_compaction_needed_bytes) +
                      "\n";
    char buf[160];
    for (int level = 0; level < v->NumLevels(); level++) {
      const uint64_t target = scores.level_max_bytes[level];
      snprintf(buf, sizeof(buf), "L%d: files=%d bytes=%llu target=%s score=%.2f\n", level,
               v->NumFiles(level), static_cast<unsigned long long>(v->NumLevelBytes(level)),
               target == UINT64_MAX ? "-" : std::to_string(target).c_str(), scores.score[level]);
      out += buf;
    }
    return out;
  }

  static std::string Numbers(const std::vector<FileMetaPtr>& files) {
    std::string r;
    for (const FileMetaPtr& f : files) r += " " + std::to_string(f->number);
    return r;
  }

  static std::string Describe(const Compaction& c) {
    char buf[160];
    snprintf(buf, sizeof(buf), "L%d -> L%d score=%.2f\n", c.start_level(), c.output_level(),
             c.score());
    std::string out = buf;
    for (size_t i = 0; i < c.num_input_levels(); i++) {
      out += "  L" + std::to_string(c.level(i)) + ":" + Numbers(c.inputs(i)) + "\n";
    }
    if (!c.grandparents().empty()) out += "  grandparents:" + Numbers(c.grandparents()) + "\n";
    out += "  bytes=" + std::to_string(c.TotalInputBytes()) +
           " max-output=" + std::to_string(c.max_output_file_size());
    if (c.IsTrivialMove()) out += " trivial-move";
    if (c.bottommost_level()) out += " bottommost";
    if (c.is_manual()) out += " manual";
    return out + "\n";
  }

  std::string Pick() {
    MutexLock l(vset_->db_mutex());
    std::unique_ptr<Compaction> c = picker_->PickCompaction(vset_->current());
    if (c == nullptr) return "none\n";
    const std::string out = Describe(*c);
    running_.push_back(std::move(c));
    return out;
  }

  std::string CompactRange(const DataDrivenCase& c) {
    InternalKey begin(c.Arg("begin"), kMaxSequenceNumber, kValueTypeForSeek);
    InternalKey end(c.Arg("end"), 0, static_cast<ValueType>(0));
    InternalKey chunk_end_storage;
    InternalKey* chunk_end = &chunk_end_storage;
    bool conflict = false;
    MutexLock l(vset_->db_mutex());
    std::unique_ptr<Compaction> compaction = picker_->CompactRange(
        vset_->current(), static_cast<int>(c.IntArg("level")), static_cast<int>(c.IntArg("output")),
        c.HasArg("begin") ? &begin : nullptr, c.HasArg("end") ? &end : nullptr, &chunk_end,
        &conflict);
    if (compaction == nullptr) return conflict ? "conflict\n" : "nothing to compact\n";
    std::string out = Describe(*compaction);
    out += chunk_end == nullptr ? "  covers the rest of the range\n"
                                : "  chunk ends at " + InternalKeyText(chunk_end->Encode()) + "\n";
    running_.push_back(std::move(compaction));
    return out;
  }

  std::string Release() {
    MutexLock l(vset_->db_mutex());
    const size_t n = running_.size();
    for (auto& c : running_) picker_->ReleaseCompaction(c.get());
    running_.clear();
    return "released " + std::to_string(n) + "\n";
  }

  InternalKeyComparator icmp_;
  Options options_;
  Mutex mu_;
  std::unique_ptr<TempDirectory> dir_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<VersionSet> vset_;
  std::unique_ptr<CompactionPicker> picker_;
  std::vector<std::unique_ptr<Compaction>> running_;
};

TEST_F(CompactionPickerDataTest, Picks) {
  RunDataDriven("compaction_picker.txt", [this](const DataDrivenCase& c) -> std::string {
    if (c.command == "define") return Define(c);
    if (c.command != "define" && vset_ == nullptr) return "define a tree first";
    if (c.command == "add") return Add(c);
    if (c.command == "scores") return Scores();
    if (c.command == "pick") return Pick();
    if (c.command == "compact-range") return CompactRange(c);
    if (c.command == "release") return Release();
    return "unknown command " + c.command;
  });
}

}  // namespace
}  // namespace shale

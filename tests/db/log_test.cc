// Tests for the WAL format: log::Writer and log::Reader, over in-memory files (so bytes can
// be damaged precisely) and over real files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "db/log_format.h"
#include "db/log_reader.h"
#include "db/log_writer.h"
#include "shale/env.h"
#include "shale/options.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/random.h"

namespace shale::log {
namespace {

constexpr WALRecoveryMode kAllModes[] = {
    WALRecoveryMode::kTolerateCorruptedTailRecords, WALRecoveryMode::kAbsoluteConsistency,
    WALRecoveryMode::kPointInTimeRecovery, WALRecoveryMode::kSkipAnyCorruptedRecords};

const char* ModeName(WALRecoveryMode m) {
  switch (m) {
    case WALRecoveryMode::kTolerateCorruptedTailRecords: return "kTolerateCorruptedTailRecords";
    case WALRecoveryMode::kAbsoluteConsistency: return "kAbsoluteConsistency";
    case WALRecoveryMode::kPointInTimeRecovery: return "kPointInTimeRecovery";
    case WALRecoveryMode::kSkipAnyCorruptedRecords: return "kSkipAnyCorruptedRecords";
  }
  return "?";
}

// Appends to a string the test owns; can be told to fail after some appends.
class LogSink final : public WritableFile {
 public:
  explicit LogSink(std::string* contents) : contents_(contents) {}
  Status Append(const Slice& data) override {
    if (appends_until_failure_ == 0) return Status::IOError("injected append failure");
    if (appends_until_failure_ > 0) appends_until_failure_--;
    contents_->append(data.data(), data.size());
    return Status::OK();
  }
  Status Flush() override {
    flushes_++;
    return Status::OK();
  }
  Status Sync() override {
    syncs_++;
    return Status::OK();
  }
  Status Fsync() override {
    fsyncs_++;
    return Status::OK();
  }
  Status Close() override { return Status::OK(); }
  uint64_t GetFileSize() override { return contents_->size(); }

  int appends_until_failure_ = -1;  // negative: never fail
  int flushes_ = 0;
  int syncs_ = 0;
  int fsyncs_ = 0;

 private:
  std::string* contents_;
};

// Reads a copy of a string, in whatever chunk sizes the reader asks for.
class LogSource final : public SequentialFile {
 public:
  explicit LogSource(std::string contents, bool fail = false)
      : contents_(std::move(contents)), fail_(fail) {}
  Status Read(size_t n, Slice* result, char* scratch) override {
    if (fail_) return Status::IOError("injected read failure");
    n = std::min(n, contents_.size() - pos_);
    memcpy(scratch, contents_.data() + pos_, n);
    pos_ += n;
    *result = Slice(scratch, n);
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    pos_ += std::min<uint64_t>(n, contents_.size() - pos_);
    return Status::OK();
  }

 private:
  const std::string contents_;
  size_t pos_ = 0;
  const bool fail_;
};

struct Collector : public Reporter {
  size_t dropped = 0;
  std::vector<Status> reports;
  void Corruption(size_t bytes, const Status& status) override {
    dropped += bytes;
    reports.push_back(status);
  }
};

struct ReadResult {
  std::vector<std::string> records;
  std::vector<uint64_t> offsets;  // LastRecordOffset after each record
  std::vector<Status> reports;
  size_t dropped = 0;
};

ReadResult ReadAll(const std::string& contents, WALRecoveryMode mode, bool checksum = true,
                   bool fail_reads = false) {
  ReadResult out;
  Collector collector;
  Reader reader(std::make_unique<LogSource>(contents, fail_reads), &collector, checksum, 9,
                "000009.log");
  Slice record;
  std::string scratch;
  // Every record, even an empty one, takes a 7-byte header.
  const size_t max_records = contents.size() / kHeaderSize + 1;
  while (reader.ReadRecord(&record, &scratch, mode)) {
    out.records.push_back(record.ToString());
    out.offsets.push_back(reader.LastRecordOffset());
    if (out.records.size() > max_records) {
      ADD_FAILURE() << "reader returned more records than the file can hold";
      break;
    }
  }
  // Once done, it stays done.
  EXPECT_FALSE(reader.ReadRecord(&record, &scratch, mode));
  out.reports = collector.reports;
  out.dropped = collector.dropped;
  return out;
}

std::string WriteLog(const std::vector<std::string>& records, std::string initial = "") {
  std::string contents = std::move(initial);
  Writer writer(std::make_unique<LogSink>(&contents), 9);
  for (const std::string& r : records) EXPECT_OK(writer.AddRecord(r));
  EXPECT_OK(writer.Close());
  return contents;
}

// A recognizable string of n bytes for record i.
std::string Payload(int i, size_t n) {
  std::string s;
  s.reserve(n);
  for (size_t j = 0; j < n; j++) s.push_back(static_cast<char>('a' + (i * 7 + j) % 26));
  return s;
}

bool IsSubsequence(const std::vector<std::string>& sub, const std::vector<std::string>& all) {
  size_t j = 0;
  for (const std::string& s : sub) {
    while (j < all.size() && all[j] != s) j++;
    if (j == all.size()) return false;
    j++;
  }
  return true;
}

// Rewrites the header of the physical record at offset with a fresh checksum, so a test can
// change its length or type without the change being caught as a checksum mismatch.
void Reseal(std::string* contents, size_t offset) {
  const uint32_t length = DecodeFixed16(contents->data() + offset + 4);
  const size_t n = std::min<size_t>(1 + length, contents->size() - offset - 6);
  const uint32_t crc = crc32c::Value(contents->data() + offset + 6, n);
  EncodeFixed32(contents->data() + offset, crc32c::Mask(crc));
}

TEST(LogTest, EmptyFile) {
  for (WALRecoveryMode mode : kAllModes) {
    ReadResult r = ReadAll("", mode);
    EXPECT_TRUE(r.records.empty());
    EXPECT_TRUE(r.reports.empty()) << ModeName(mode);
  }
}

TEST(LogTest, RoundTripManySizes) {
  std::vector<std::string> records;
  const size_t sizes[] = {0,
                          1,
                          2,
                          100,
                          kBlockSize - 2 * kHeaderSize,
                          kBlockSize - kHeaderSize - 1,
                          kBlockSize - kHeaderSize,
                          kBlockSize - kHeaderSize + 1,
                          kBlockSize,
                          kBlockSize + 1,
                          0,
                          3 * kBlockSize + 17,
                          10000,
                          0,
                          0,
                          5};
  int i = 0;
  for (size_t n : sizes) records.push_back(Payload(i++, n));
  Random rnd(TestSeed());
  for (int k = 0; k < 200; k++) records.push_back(Payload(i++, rnd.Skewed(17)));

  const std::string contents = WriteLog(records);
  for (WALRecoveryMode mode : kAllModes) {
    ReadResult r = ReadAll(contents, mode);
    EXPECT_TRUE(r.reports.empty()) << ModeName(mode);
    ASSERT_EQ(r.records.size(), records.size());
    for (size_t k = 0; k < records.size(); k++) {
      ASSERT_EQ(r.records[k], records[k]) << "record " << k;
    }
    // Offsets increase, and each one is where a header starts (not in a block's padding).
    for (size_t k = 1; k < r.offsets.size(); k++) ASSERT_LT(r.offsets[k - 1], r.offsets[k]);
    for (uint64_t off : r.offsets) ASSERT_LE(off % kBlockSize, kBlockSize - kHeaderSize);
  }
}

TEST(LogTest, ExactBlockBoundaries) {
  // A record that fills its block exactly: the next starts the next block with no padding.
  std::string contents = WriteLog({Payload(0, kBlockSize - kHeaderSize), "next"});
  EXPECT_EQ(contents.size(), kBlockSize + kHeaderSize + 4);
  ReadResult r = ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.offsets[1], kBlockSize);

  // Six bytes left: zero padding, then the next record in the next block.
  contents = WriteLog({Payload(0, kBlockSize - kHeaderSize - 6), "next"});
  EXPECT_EQ(contents.size(), kBlockSize + kHeaderSize + 4);
  EXPECT_EQ(contents.substr(kBlockSize - 6, 6), std::string(6, '\0'));
  r = ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1], "next");
  EXPECT_TRUE(r.reports.empty());

  // Exactly a header left: an empty first fragment, the data in the next block.
  contents = WriteLog({Payload(0, kBlockSize - 2 * kHeaderSize), "next"});
  EXPECT_EQ(contents.size(), kBlockSize + kHeaderSize + 4);
  EXPECT_EQ(static_cast<RecordType>(contents[kBlockSize - 1]), kFirstType);
  EXPECT_EQ(static_cast<RecordType>(contents[kBlockSize + 6]), kLastType);
  r = ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1], "next");
  EXPECT_EQ(r.offsets[1], kBlockSize - kHeaderSize);

  // Empty records are real records, also when they land on a block end.
  contents = WriteLog({Payload(0, kBlockSize - 2 * kHeaderSize), "", "", "x"});
  r = ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency);
  ASSERT_EQ(r.records,
            (std::vector<std::string>{Payload(0, kBlockSize - 2 * kHeaderSize), "", "", "x"}));
  EXPECT_TRUE(r.reports.empty());
}

TEST(LogTest, FragmentTypes) {
  const std::string contents = WriteLog({Payload(0, 2 * kBlockSize + 100)});
  EXPECT_EQ(static_cast<RecordType>(contents[6]), kFirstType);
  EXPECT_EQ(static_cast<RecordType>(contents[kBlockSize + 6]), kMiddleType);
  EXPECT_EQ(static_cast<RecordType>(contents[2 * kBlockSize + 6]), kLastType);
  EXPECT_EQ(static_cast<RecordType>(WriteLog({"abc"})[6]), kFullType);
}

TEST(LogTest, AppendToExistingFile) {
  // Start a second writer at several positions in a block, including inside the padding.
  for (size_t first : {size_t{0}, size_t{10}, kBlockSize - kHeaderSize - 3,
                       kBlockSize - kHeaderSize, 3 * kBlockSize}) {
    std::string contents = WriteLog({Payload(1, first)});
    contents = WriteLog({"second", Payload(2, kBlockSize)}, contents);
    ReadResult r = ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency);
    EXPECT_TRUE(r.reports.empty()) << first;
    EXPECT_EQ(r.records,
              (std::vector<std::string>{Payload(1, first), "second", Payload(2, kBlockSize)}))
        << first;
  }
}

// Records added without a flush reach the file as they are framed, and the OS (Flush)
// only when asked: a group's records are pushed together.
TEST(LogTest, RecordsAddedWithoutFlushArePushedByFlush) {
  std::string contents;
  auto sink = std::make_unique<LogSink>(&contents);
  LogSink* raw = sink.get();
  Writer writer(std::move(sink), 3);
  ASSERT_OK(writer.AddRecord("one", /*flush=*/false));
  ASSERT_OK(writer.AddRecord(Payload(2, 3 * kBlockSize), /*flush=*/false));
  EXPECT_EQ(raw->flushes_, 0);
  ASSERT_OK(writer.Flush());
  EXPECT_EQ(raw->flushes_, 1);
  ASSERT_OK(writer.AddRecord("three"));
  EXPECT_EQ(raw->flushes_, 2);
  ASSERT_OK(writer.Close());
  EXPECT_NOK(writer.Flush());
  EXPECT_EQ(ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency).records,
            (std::vector<std::string>{"one", Payload(2, 3 * kBlockSize), "three"}));
}

TEST(LogTest, WriterSyncAndSticky) {
  std::string contents;
  auto sink = std::make_unique<LogSink>(&contents);
  LogSink* raw = sink.get();
  Writer writer(std::move(sink), 4);
  EXPECT_EQ(writer.log_number(), 4u);
  EXPECT_EQ(writer.file(), raw);
  ASSERT_OK(writer.AddRecord("a"));
  ASSERT_OK(writer.Sync(false));
  ASSERT_OK(writer.Sync(true));
  EXPECT_EQ(raw->syncs_, 1);
  EXPECT_EQ(raw->fsyncs_, 1);

  raw->appends_until_failure_ = 1;  // the header gets out, the payload does not
  Status s = writer.AddRecord("bbbb");
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  raw->appends_until_failure_ = -1;
  // The file's tail is unknown now: refuse to go on.
  EXPECT_TRUE(writer.AddRecord("c").IsIOError());
  EXPECT_TRUE(writer.Sync(true).IsIOError());
  ASSERT_OK(writer.Close());
  EXPECT_EQ(writer.file(), nullptr);
  EXPECT_NOK(writer.AddRecord("d"));
}

TEST(LogTest, FlippedBytesInEveryModeAreReported) {
  // Ten 10000-byte records span four blocks; damage one field of record 1 in turn.
  std::vector<std::string> records;
  for (int i = 0; i < 10; i++) records.push_back(Payload(i, 10000));
  const std::string clean = WriteLog(records);
  const std::vector<uint64_t> starts =
      ReadAll(clean, WALRecoveryMode::kAbsoluteConsistency).offsets;
  ASSERT_EQ(starts.size(), records.size());

  struct Damage {
    const char* name;
    size_t at;  // offset within record 1's header
  };
  for (const Damage& d : {Damage{"checksum", 0}, Damage{"length-low", 4}, Damage{"length-high", 5},
                          Damage{"type", 6}, Damage{"payload", kHeaderSize + 500}}) {
    std::string contents = clean;
    const size_t bad = starts[1] + d.at;
    contents[bad] ^= 0x40;
    const uint64_t bad_block_end = (starts[1] / kBlockSize + 1) * kBlockSize;
    for (WALRecoveryMode mode : kAllModes) {
      SCOPED_TRACE(std::string(d.name) + " " + ModeName(mode));
      ReadResult r = ReadAll(contents, mode);
      ASSERT_FALSE(r.reports.empty());
      EXPECT_TRUE(r.reports[0].IsCorruption());
      EXPECT_NE(r.reports[0].ToString().find("000009.log"), std::string::npos)
          << r.reports[0].ToString();
      EXPECT_NE(r.reports[0].ToString().find("offset " + std::to_string(starts[1])),
                std::string::npos)
          << r.reports[0].ToString();
      if (mode != WALRecoveryMode::kSkipAnyCorruptedRecords) {
        EXPECT_EQ(r.reports.size(), 1u);
        EXPECT_EQ(r.records, std::vector<std::string>(records.begin(), records.begin() + 1));
        continue;
      }
      // Skipping drops the rest of the damaged block and keeps every record starting later.
      std::vector<std::string> expected = {records[0]};
      for (size_t i = 2; i < records.size(); i++) {
        if (starts[i] >= bad_block_end) expected.push_back(records[i]);
      }
      EXPECT_EQ(r.records, expected);
      EXPECT_GE(r.dropped, records[1].size());
    }
  }
}

TEST(LogTest, ChecksumOffSkipsVerification) {
  std::string contents = WriteLog({"hello", "world"});
  contents[kHeaderSize + 1] = 'E';
  ReadResult r = ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency, false);
  EXPECT_EQ(r.records, (std::vector<std::string>{"hEllo", "world"}));
  EXPECT_TRUE(r.reports.empty());
  r = ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency, true);
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(r.reports.size(), 1u);
}

// Cuts the file at every offset inside its last record and checks each mode's outcome.
void CheckEveryTruncation(const std::vector<std::string>& records) {
  const std::string contents = WriteLog(records);
  const ReadResult clean = ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency);
  ASSERT_EQ(clean.records.size(), records.size());
  const uint64_t last_start = clean.offsets.back();
  const std::vector<std::string> prefix(records.begin(), records.end() - 1);
  for (size_t cut = last_start; cut < contents.size(); cut++) {
    const std::string truncated = contents.substr(0, cut);
    for (WALRecoveryMode mode : kAllModes) {
      SCOPED_TRACE("cut at " + std::to_string(cut) + " " + ModeName(mode));
      ReadResult r = ReadAll(truncated, mode);
      ASSERT_EQ(r.records, prefix);
      if (mode == WALRecoveryMode::kAbsoluteConsistency && cut > last_start) {
        ASSERT_EQ(r.reports.size(), 1u);
        EXPECT_TRUE(r.reports[0].IsCorruption());
        EXPECT_NE(r.reports[0].ToString().find("truncated record at end of file"),
                  std::string::npos);
        EXPECT_NE(r.reports[0].ToString().find("offset " + std::to_string(last_start)),
                  std::string::npos)
            << r.reports[0].ToString();
        EXPECT_EQ(r.dropped, cut - last_start);
      } else {
        ASSERT_TRUE(r.reports.empty()) << r.reports[0].ToString();
      }
    }
  }
}

TEST(LogTest, TruncatedTailAtEveryOffset) {
  // The last record inside one block.
  CheckEveryTruncation({Payload(0, 1000), Payload(1, 300)});
  // An empty last record: only its header can be cut.
  CheckEveryTruncation({Payload(0, 1000), ""});
  // The last record starting 100 bytes before a block end: first and last fragments.
  CheckEveryTruncation({Payload(0, kBlockSize - 2 * kHeaderSize - 100), Payload(1, 300)});
  // ... with a middle fragment too (cut positions over a whole block: sample the big one).
  CheckEveryTruncation({Payload(0, kBlockSize - 2 * kHeaderSize - 10), Payload(1, 20)});
}

TEST(LogTest, TruncatedInsideBlockPaddingIsClean) {
  // The first record leaves 3 bytes of padding; cutting inside them loses no record.
  const std::string contents = WriteLog({Payload(0, kBlockSize - kHeaderSize - 3), "next"});
  for (size_t cut = kBlockSize - 3; cut <= kBlockSize; cut++) {
    for (WALRecoveryMode mode : kAllModes) {
      ReadResult r = ReadAll(contents.substr(0, cut), mode);
      EXPECT_EQ(r.records.size(), 1u);
      EXPECT_TRUE(r.reports.empty()) << cut << " " << ModeName(mode);
    }
  }
}

TEST(LogTest, ZeroFilledTailIsCleanEnd) {
  const std::vector<std::string> records = {Payload(0, 500), Payload(1, kBlockSize), "x"};
  const std::string contents = WriteLog(records);
  for (size_t zeros :
       {size_t{1}, size_t{6}, size_t{7}, size_t{100}, kBlockSize, 2 * kBlockSize + 5}) {
    for (WALRecoveryMode mode : kAllModes) {
      ReadResult r = ReadAll(contents + std::string(zeros, '\0'), mode);
      EXPECT_EQ(r.records, records) << zeros << " " << ModeName(mode);
      EXPECT_TRUE(r.reports.empty()) << zeros << " " << ModeName(mode);
    }
  }
}

TEST(LogTest, ZerosCuttingAFragmentedRecordAreATornTail) {
  const std::vector<std::string> records = {"a", Payload(1, 2 * kBlockSize)};
  std::string contents = WriteLog(records);
  // Zero everything after the first fragment, as if the tail never reached the disk.
  std::fill(contents.begin() + kBlockSize, contents.end(), '\0');
  for (WALRecoveryMode mode : kAllModes) {
    ReadResult r = ReadAll(contents, mode);
    EXPECT_EQ(r.records, std::vector<std::string>{"a"});
    const size_t expected = mode == WALRecoveryMode::kAbsoluteConsistency ? 1 : 0;
    EXPECT_EQ(r.reports.size(), expected) << ModeName(mode);
  }
}

// A WAL written through a mapping and cut off by a crash while its last record was being
// copied: that record holds any prefix of its bytes and zeros after it (the mapped window's
// rest). Whatever the prefix, that is a torn tail, not damage; with a record after the
// zeros it is damage again.
TEST(LogTest, RecordCutOffMidCopyBeforeZerosIsATornTail) {
  const std::vector<std::string> records = {Payload(0, 300), Payload(1, 2 * kBlockSize),
                                            Payload(2, 1000)};
  const std::string full = WriteLog(records);
  const std::vector<uint64_t> starts = ReadAll(full, WALRecoveryMode::kAbsoluteConsistency).offsets;
  const uint64_t last = starts[2];
  // Cuts inside the last record's header and payload, and inside each fragment of the
  // fragmented one (whose fragments' headers start at block boundaries).
  std::vector<uint64_t> cuts;
  for (uint64_t c : {1, 4, 5, 6, 7, 8, 500, 1006}) cuts.push_back(last + c);
  for (uint64_t c :
       {uint64_t{1}, kHeaderSize + 10, uint64_t{kBlockSize} + 3, uint64_t{2 * kBlockSize} + 9}) {
    cuts.push_back(starts[1] + c);
  }
  for (uint64_t cut : cuts) {
    std::string contents = full;
    std::fill(contents.begin() + cut, contents.end(), '\0');
    contents.append(70000, '\0');  // the rest of the window
    const size_t complete = cut > last ? 2 : 1;
    const std::vector<std::string> expected(records.begin(), records.begin() + complete);
    for (WALRecoveryMode mode : kAllModes) {
      SCOPED_TRACE("cut at " + std::to_string(cut) + " " + ModeName(mode));
      ReadResult r = ReadAll(contents, mode);
      EXPECT_EQ(r.records, expected);
      if (mode == WALRecoveryMode::kAbsoluteConsistency) {
        ASSERT_EQ(r.reports.size(), 1u);
        EXPECT_NE(r.reports[0].ToString().find("truncated record"), std::string::npos)
            << r.reports[0].ToString();
      } else {
        EXPECT_TRUE(r.reports.empty()) << r.reports[0].ToString();
      }
    }
    // The same cut with a record after the zeros: damage, reported in every mode.
    std::string more = contents.substr(0, (cut / kBlockSize + 2) * kBlockSize);
    more += WriteLog({"after"}, more).substr(more.size());
    for (WALRecoveryMode mode : kAllModes) {
      SCOPED_TRACE("cut at " + std::to_string(cut) + " then a record, " + ModeName(mode));
      ReadResult r = ReadAll(more, mode);
      ASSERT_FALSE(r.reports.empty());
      EXPECT_EQ(r.reports[0].ToString().find("truncated record"), std::string::npos)
          << r.reports[0].ToString();
      std::vector<std::string> want = expected;
      if (mode == WALRecoveryMode::kSkipAnyCorruptedRecords) want.push_back("after");
      EXPECT_EQ(r.records, want);
    }
  }
}

TEST(LogTest, ZeroHoleBeforeMoreRecordsIsCorruption) {
  std::vector<std::string> records;
  for (int i = 0; i < 12; i++) records.push_back(Payload(i, 9000));
  std::string contents = WriteLog(records);
  const std::vector<uint64_t> starts =
      ReadAll(contents, WALRecoveryMode::kAbsoluteConsistency).offsets;
  // Block 1 never reached the disk, but block 2 did.
  std::fill(contents.begin() + kBlockSize, contents.begin() + 2 * kBlockSize, '\0');
  for (WALRecoveryMode mode : kAllModes) {
    SCOPED_TRACE(ModeName(mode));
    ReadResult r = ReadAll(contents, mode);
    ASSERT_FALSE(r.reports.empty());
    EXPECT_NE(r.reports[0].ToString().find("hole"), std::string::npos);
    std::vector<std::string> expected;
    for (size_t i = 0; i < records.size(); i++) {
      const bool damaged =
          starts[i] + kHeaderSize + 9000 > kBlockSize && starts[i] < 2 * kBlockSize;
      if (!damaged) {
        expected.push_back(records[i]);
      } else if (mode != WALRecoveryMode::kSkipAnyCorruptedRecords) {
        break;
      }
    }
    EXPECT_EQ(r.records, expected);
  }
}

TEST(LogTest, BadLengths) {
  // Mid-file, a length running past the block is damage in every mode, even with a valid
  // checksum over what it claims.
  std::vector<std::string> records = {"first", Payload(1, 100), "third"};
  std::string contents = WriteLog(records);
  const size_t second = kHeaderSize + 5;
  contents += std::string(kBlockSize, 'z');  // so the bad record is not at EOF
  EncodeFixed16(contents.data() + second + 4, 0xffff);
  for (WALRecoveryMode mode : kAllModes) {
    ReadResult r = ReadAll(contents, mode);
    EXPECT_EQ(r.records, std::vector<std::string>{"first"});
    ASSERT_FALSE(r.reports.empty()) << ModeName(mode);
    EXPECT_NE(r.reports[0].ToString().find("bad record length"), std::string::npos);
  }

  // In the last block, a length that could never fit its block is damage too, not a tear.
  contents = WriteLog(records);
  EncodeFixed16(contents.data() + second + 4, 0xffff);
  for (WALRecoveryMode mode : kAllModes) {
    ReadResult r = ReadAll(contents, mode);
    EXPECT_EQ(r.records, std::vector<std::string>{"first"});
    ASSERT_EQ(r.reports.size(), 1u) << ModeName(mode);
    EXPECT_NE(r.reports[0].ToString().find("bad record length"), std::string::npos);
  }

  // ... while one that would fit is a torn write.
  contents = WriteLog(records);
  EncodeFixed16(contents.data() + second + 4, 5000);
  for (WALRecoveryMode mode : kAllModes) {
    ReadResult r = ReadAll(contents, mode);
    EXPECT_EQ(r.records, std::vector<std::string>{"first"});
    const size_t expected = mode == WALRecoveryMode::kAbsoluteConsistency ? 1 : 0;
    EXPECT_EQ(r.reports.size(), expected) << ModeName(mode);
  }
}

TEST(LogTest, UnknownTypeAndFragmentsOutOfOrder) {
  const std::vector<std::string> records = {"one", "two", "three"};
  const size_t second = kHeaderSize + 3;
  struct Case {
    unsigned char type;
    const char* message;
  };
  for (const Case& c : {Case{9, "unknown record type"}, Case{kZeroType, "unknown record type"},
                        Case{kMiddleType, "missing start"}, Case{kLastType, "missing start"},
                        Case{kFirstType, "partial record without end"}}) {
    std::string contents = WriteLog(records);
    contents[second + 6] = static_cast<char>(c.type);
    Reseal(&contents, second);
    for (WALRecoveryMode mode : kAllModes) {
      SCOPED_TRACE(std::to_string(c.type) + " " + ModeName(mode));
      ReadResult r = ReadAll(contents, mode);
      ASSERT_EQ(r.reports.size(), 1u);
      EXPECT_NE(r.reports[0].ToString().find(c.message), std::string::npos)
          << r.reports[0].ToString();
      if (mode == WALRecoveryMode::kSkipAnyCorruptedRecords) {
        EXPECT_EQ(r.records, (std::vector<std::string>{"one", "three"}));
      } else {
        EXPECT_EQ(r.records, std::vector<std::string>{"one"});
      }
    }
  }
}

// A predecessor record (kPredecessorType) is read, not returned: the records after it come
// back as written, predecessor() gives its fields and LastRecordEnd() where the last record
// read ends. Only an empty log takes one; one of the wrong size is damage.
TEST(LogTest, PredecessorRecordIsReadNotReturned) {
  std::string contents;
  {
    Writer writer(std::make_unique<LogSink>(&contents), 9);
    ASSERT_OK(writer.AddPredecessor(8, 123456));
    ASSERT_OK(writer.AddRecord("one"));
    ASSERT_OK(writer.AddRecord(Payload(2, 50000)));  // fragmented across blocks
    ASSERT_TRUE(writer.AddPredecessor(7, 1).IsInvalidArgument());
    ASSERT_OK(writer.Close());
  }
  for (WALRecoveryMode mode : kAllModes) {
    SCOPED_TRACE(ModeName(mode));
    Collector collector;
    Reader reader(std::make_unique<LogSource>(contents), &collector, true, 9, "000009.log");
    Slice record;
    std::string scratch;
    ASSERT_TRUE(reader.ReadRecord(&record, &scratch, mode));
    EXPECT_EQ("one", record.ToString());
    ASSERT_NE(nullptr, reader.predecessor());
    EXPECT_EQ(8u, reader.predecessor()->log_number);
    EXPECT_EQ(123456u, reader.predecessor()->size);
    EXPECT_EQ(2 * kHeaderSize + kPredecessorSize + 3, reader.LastRecordEnd());
    ASSERT_TRUE(reader.ReadRecord(&record, &scratch, mode));
    EXPECT_EQ(Payload(2, 50000), record.ToString());
    EXPECT_EQ(contents.size(), reader.LastRecordEnd());
    EXPECT_FALSE(reader.ReadRecord(&record, &scratch, mode));
    EXPECT_TRUE(collector.reports.empty());
  }
  {
    Reader reader(std::make_unique<LogSource>(WriteLog({"a"})), nullptr, true, 9, "000009.log");
    Slice record;
    std::string scratch;
    ASSERT_TRUE(reader.ReadRecord(&record, &scratch));
    EXPECT_EQ(nullptr, reader.predecessor());
  }
  // "one" retyped as a predecessor record: three bytes, not sixteen.
  const size_t one = kHeaderSize + kPredecessorSize;
  contents[one + 6] = static_cast<char>(kPredecessorType);
  Reseal(&contents, one);
  for (WALRecoveryMode mode : kAllModes) {
    SCOPED_TRACE(ModeName(mode));
    ReadResult r = ReadAll(contents, mode);
    ASSERT_EQ(r.reports.size(), 1u);
    EXPECT_NE(r.reports[0].ToString().find("bad predecessor record"), std::string::npos)
        << r.reports[0].ToString();
    if (mode == WALRecoveryMode::kSkipAnyCorruptedRecords) {
      EXPECT_EQ(r.records, std::vector<std::string>{Payload(2, 50000)});
    } else {
      EXPECT_TRUE(r.records.empty());
    }
  }
}

TEST(LogTest, ReadErrorIsReported) {
  const std::string contents = WriteLog({"a", "b"});
  for (WALRecoveryMode mode : kAllModes) {
    ReadResult r = ReadAll(contents, mode, true, /*fail_reads=*/true);
    EXPECT_TRUE(r.records.empty());
    ASSERT_EQ(r.reports.size(), 1u);
    EXPECT_TRUE(r.reports[0].IsIOError());
  }
}

TEST(LogTest, NullReporter) {
  std::string contents = WriteLog({"a", "b"});
  contents[kHeaderSize] ^= 1;
  Reader reader(std::make_unique<LogSource>(contents), nullptr, true, 1, "x.log");
  Slice record;
  std::string scratch;
  EXPECT_FALSE(reader.ReadRecord(&record, &scratch, WALRecoveryMode::kAbsoluteConsistency));
}

TEST(LogTest, RandomBytesNeverCrash) {
  Random rnd(TestSeed());
  for (int iter = 0; iter < 300; iter++) {
    std::string contents;
    const int kind = static_cast<int>(rnd.Uniform(3));
    if (kind == 0) {
      contents = RandomBinaryString(&rnd, rnd.Skewed(17));
    } else {
      // Headers that look plausible: small lengths and valid-looking types.
      while (contents.size() < rnd.Uniform(3 * kBlockSize)) {
        char header[kHeaderSize];
        EncodeFixed32(header, rnd.Next());
        EncodeFixed16(header + 4, static_cast<uint16_t>(rnd.Skewed(15)));
        header[6] = static_cast<char>(rnd.Uniform(6));
        contents.append(header, kHeaderSize);
        contents += RandomBinaryString(&rnd, rnd.Skewed(10));
        if (kind == 2 && rnd.OneIn(3)) contents.append(rnd.Uniform(50), '\0');
      }
    }
    for (WALRecoveryMode mode : kAllModes) {
      ReadAll(contents, mode, rnd.OneIn(4) == 0);
      if (HasFatalFailure() || HasNonfatalFailure()) return;
    }
  }
}

TEST(LogTest, MutatedLogsGiveOnlyWrittenRecords) {
  Random rnd(TestSeed());
  for (int iter = 0; iter < 100; iter++) {
    std::vector<std::string> records;
    const int n = 1 + static_cast<int>(rnd.Uniform(40));
    for (int i = 0; i < n; i++) records.push_back(Payload(iter * 100 + i, rnd.Skewed(16)));
    std::string contents = WriteLog(records);
    // Damage: flip bytes, cut the file, drop or zero a span.
    const int damages = 1 + static_cast<int>(rnd.Uniform(3));
    for (int d = 0; d < damages && !contents.empty(); d++) {
      const size_t at = rnd.Uniform(static_cast<uint32_t>(contents.size()));
      const size_t span = std::min<size_t>(contents.size() - at, 1 + rnd.Skewed(12));
      switch (rnd.Uniform(4)) {
        case 0: contents[at] ^= static_cast<char>(1 + rnd.Uniform(255)); break;
        case 1: contents.resize(at); break;
        case 2: contents.erase(at, span); break;
        default: std::fill(contents.begin() + at, contents.begin() + at + span, '\0'); break;
      }
    }
    for (WALRecoveryMode mode : kAllModes) {
      SCOPED_TRACE("iteration " + std::to_string(iter) + " " + ModeName(mode));
      ReadResult r = ReadAll(contents, mode);
      if (mode == WALRecoveryMode::kSkipAnyCorruptedRecords) {
        ASSERT_TRUE(IsSubsequence(r.records, records));
      } else {
        ASSERT_LE(r.records.size(), records.size());
        ASSERT_TRUE(std::equal(r.records.begin(), r.records.end(), records.begin()));
      }
    }
  }
}

TEST(LogTest, RealFileRoundTrip) {
  Env* env = Env::Default();
  TempDirectory dir("log_test");
  const std::string fname = dir.File("000005.log");
  std::vector<std::string> records;
  for (int i = 0; i < 50; i++) records.push_back(Payload(i, 1 + i * 997));
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(env->NewWritableFile(fname, &file, EnvOptions()));
    Writer writer(std::move(file), 5);
    for (int i = 0; i < 25; i++) ASSERT_OK(writer.AddRecord(records[i]));
    ASSERT_OK(writer.Sync(true));
    ASSERT_OK(writer.Close());
  }
  uint64_t size = 0;
  ASSERT_OK(env->GetFileSize(fname, &size));
  {
    // Reopen for append: the writer picks the block position up from the file size.
    std::string existing;
    ASSERT_OK(ReadFileToString(env, fname, &existing));
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(env->NewWritableFile(fname, &file, EnvOptions()));
    ASSERT_OK(file->Append(existing));
    Writer writer(std::move(file), 5);
    for (int i = 25; i < 50; i++) ASSERT_OK(writer.AddRecord(records[i]));
    ASSERT_OK(writer.Close());
  }
  // Chop the last record in half, as a crash would.
  ASSERT_OK(env->GetFileSize(fname, &size));
  ASSERT_OK(TruncateFileTo(fname, size - records.back().size() / 2));

  for (WALRecoveryMode mode : kAllModes) {
    std::unique_ptr<SequentialFile> file;
    ASSERT_OK(env->NewSequentialFile(fname, &file, EnvOptions()));
    Collector collector;
    Reader reader(std::move(file), &collector, true, 5, fname);
    Slice record;
    std::string scratch;
    size_t n = 0;
    while (reader.ReadRecord(&record, &scratch, mode)) {
      ASSERT_LT(n, records.size());
      ASSERT_EQ(record.ToString(), records[n]);
      n++;
    }
    EXPECT_EQ(n, records.size() - 1);
    EXPECT_TRUE(reader.IsEOF());
    if (mode == WALRecoveryMode::kAbsoluteConsistency) {
      ASSERT_EQ(collector.reports.size(), 1u);
      EXPECT_NE(collector.reports[0].ToString().find(fname), std::string::npos);
    } else {
      EXPECT_TRUE(collector.reports.empty());
    }
  }
}

// The WAL as the DB writes it (through a mapping), left by a process killed without Close:
// the file ends in the window's zeros, and every mode reads every record and reports
// nothing.
TEST(LogTest, MappedWalOfAKilledProcessReadsToItsLastRecord) {
  TempDirectory dir("log_kill");
  const std::string fname = dir.File("000006.log");
  std::vector<std::string> records;
  for (int i = 0; i < 400; i++) records.push_back(Payload(i, 1 + (i * 7919) % 70000));
  pid_t pid = fork();
  if (pid == 0) {
    std::unique_ptr<WritableFile> file;
    if (!Env::Default()->NewWritableFile(fname, &file, WalFileOptions(DBOptions())).ok()) {
      _exit(2);
    }
    Writer writer(std::move(file), 6);
    for (const std::string& r : records) {
      if (!writer.AddRecord(r).ok()) _exit(3);
    }
    raise(SIGKILL);
    _exit(4);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  std::string contents;
  ASSERT_OK(ReadFileToString(Env::Default(), fname, &contents));
  ASSERT_EQ(0, contents.back()) << "no zeroed tail: the WAL was not written through a mapping";
  for (WALRecoveryMode mode : kAllModes) {
    ReadResult r = ReadAll(contents, mode);
    EXPECT_EQ(records, r.records) << ModeName(mode);
    EXPECT_TRUE(r.reports.empty()) << ModeName(mode) << ": " << r.reports[0].ToString();
  }
}

}  // namespace
}  // namespace shale::log

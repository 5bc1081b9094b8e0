// Tables whose blocks contradict each other while every checksum holds (a forger, or a
// writer bug, makes one; table_fuzzer forges checksums by watching the comparisons). A
// lookup may then fail with Corruption, but one that succeeds agrees with a scan of the
// table: it returns the entry the scan shows at or after its key. So does an iterator's
// Seek, and SeekForPrev the entry at or before.
//
// The tables are written without checksums, so that any byte can be changed in place.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/comparator.h"
#include "shale/env.h"
#include "shale/options.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "table/table_reader.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"

namespace shale {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

struct First {
  std::string key, value;
  bool hit = false;
  static bool Save(void* arg, const Slice& k, const Slice& v) {
    auto* f = static_cast<First*>(arg);
    f->hit = true;
    f->key = k.ToString();
    f->value = v.ToString();
    return false;
  }
};

// The parameter: data blocks carry a hash index (Get asks it first).
class TableForgedTest : public testing::TestWithParam<bool> {
 protected:
  TableForgedTest() : icmp_(BytewiseComparator()) {
    if (GetParam()) topts_.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
    topts_.checksum = kNoChecksum;
    topts_.block_size = 256;
    topts_.block_restart_interval = 4;
    topts_.no_block_cache = true;
    topts_.block_cache.reset();
  }

  // Writes entries (sorted) to a real file without compression and returns its bytes.
  std::string Build(const Entries& entries) {
    const std::string path = dir_.File("000007.sst");
    std::unique_ptr<WritableFile> file;
    EXPECT_OK(Env::Default()->NewWritableFile(path, &file, EnvOptions()));
    TableBuilderOptions bopts;
    bopts.icmp = &icmp_;
    bopts.table_options = topts_;
    bopts.compression = kNoCompression;
    bopts.file_name = path;
    TableBuilder builder(bopts, file.get());
    for (const auto& [k, v] : entries) builder.Add(k, v);
    EXPECT_OK(builder.Finish());
    EXPECT_OK(file->Close());
    std::string bytes;
    EXPECT_OK(ReadFileToString(Env::Default(), path, &bytes));
    return bytes;
  }

  Status Open(const std::string& bytes, std::unique_ptr<TableReader>* reader) {
    TableReaderOptions options;
    options.icmp = &icmp_;
    options.file_name = "forged.sst";
    options.table_options = topts_;
    return TableReader::Open(options, std::make_unique<StringSource>(bytes), bytes.size(), reader);
  }

  // The scan, or false when it fails or is out of order (no order to agree with).
  bool Scan(TableReader* reader, Entries* out) {
    std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (!out->empty() && icmp_.Compare(out->back().first, it->key()) >= 0) return false;
      out->emplace_back(it->key().ToString(), it->value().ToString());
    }
    return it->status().ok();
  }

  // Every Get, MultiGet and seek to a scanned key either fails or finds that key's entry.
  void ExpectLookupsAgree(TableReader* reader, const Entries& scan, const std::string& what) {
    std::vector<First> found(scan.size());
    std::vector<TableReader::BatchKey> batch(scan.size());
    for (size_t i = 0; i < scan.size(); i++) {
      First f;
      Status s = reader->Get(ReadOptions(), scan[i].first, &f, &First::Save);
      if (s.ok()) {
        ASSERT_TRUE(f.hit) << what << ": Get missed " << Slice(scan[i].first).ToString(true);
        ASSERT_EQ(Slice(f.key).ToString(true), Slice(scan[i].first).ToString(true)) << what;
        ASSERT_EQ(f.value, scan[i].second) << what;
      } else {
        ASSERT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
      }
      batch[i].ikey = scan[i].first;
      batch[i].arg = &found[i];
    }
    // An iterator's seeks, each from a fresh iterator (so from no block) and from one
    // that has moved on: at the key, or stopped with Corruption.
    std::unique_ptr<InternalIterator> moved(reader->NewIterator(ReadOptions()));
    for (size_t i = 0; i < scan.size(); i++) {
      std::unique_ptr<InternalIterator> fresh(reader->NewIterator(ReadOptions()));
      for (InternalIterator* it : {fresh.get(), moved.get()}) {
        for (bool forward : {true, false}) {
          forward ? it->Seek(scan[i].first) : it->SeekForPrev(scan[i].first);
          if (!it->Valid()) {
            ASSERT_TRUE(it->status().IsCorruption())
                << what << ": seek to " << Slice(scan[i].first).ToString(true) << " "
                << it->status().ToString();
            continue;
          }
          ASSERT_EQ(it->key().ToString(true), Slice(scan[i].first).ToString(true))
              << what << (forward ? ", Seek" : ", SeekForPrev")
              << (it == fresh.get() ? " from a fresh iterator" : "");
          ASSERT_EQ(it->value().ToString(), scan[i].second) << what;
        }
      }
    }
    reader->MultiGet(ReadOptions(), batch.data(), batch.size(), &First::Save);
    for (size_t i = 0; i < scan.size(); i++) {
      if (!batch[i].status.ok()) {
        ASSERT_TRUE(batch[i].status.IsCorruption()) << what << ": " << batch[i].status.ToString();
        continue;
      }
      ASSERT_TRUE(found[i].hit) << what << ": MultiGet missed "
                                << Slice(scan[i].first).ToString(true);
      ASSERT_EQ(Slice(found[i].key).ToString(true), Slice(scan[i].first).ToString(true)) << what;
    }
  }

  TempDirectory dir_;
  InternalKeyComparator icmp_;
  BlockBasedTableOptions topts_;
};

Entries SampleEntries() {
  Entries entries;
  for (int i = 0; i < 120; i++) {
    char key[32];
    snprintf(key, sizeof(key), "key%06d", i * 10);
    // Every fourth key has an older version too, so that versions straddle blocks.
    entries.emplace_back(IKey(key, 1000 + i), "v" + std::to_string(i));
    if (i % 4 == 0) entries.emplace_back(IKey(key, 10 + i), "old" + std::to_string(i));
  }
  return entries;
}

// Each byte before the footer changed by a few amounts, one at a time. Among them: the
// last key of a block raised past its index separator (but below the next block's first
// key), or a separator lowered below it. The scan stays in order, and a lookup of that
// key is sent by the index to the next block, where it must not answer with that block's
// first entry; past the last separator, it must not answer "not here".
TEST_P(TableForgedTest, EveryByteChanged) {
  const std::string good = Build(SampleEntries());
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(good, &reader));
  Entries scan;
  ASSERT_TRUE(Scan(reader.get(), &scan));
  ASSERT_EQ(scan.size(), SampleEntries().size());
  ASSERT_NO_FATAL_FAILURE(ExpectLookupsAgree(reader.get(), scan, "intact"));
  ASSERT_GT(reader->GetTableProperties().num_data_blocks, 4u);
  int consistent_scans = 0;
  for (size_t pos = 0; pos + Footer::kEncodedLength < good.size(); pos++) {
    for (int delta : {1, 5, -1}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] + delta);
      std::unique_ptr<TableReader> r;
      if (!Open(bad, &r).ok()) continue;
      Entries s;
      if (!Scan(r.get(), &s)) continue;
      consistent_scans++;
      ASSERT_NO_FATAL_FAILURE(ExpectLookupsAgree(
          r.get(), s, "byte " + std::to_string(pos) + " + " + std::to_string(delta)));
    }
  }
  EXPECT_GT(consistent_scans, 100);
}

// Seek binary-searches an index's restart points, which must be where entries start;
// one that points elsewhere would show a lookup entries that open never checked.
TEST_P(TableForgedTest, IndexRestartPointsAreEntries) {
  std::string bytes = Build(SampleEntries());
  Footer footer;
  ASSERT_OK(footer.DecodeFrom(
      Slice(bytes.data() + bytes.size() - Footer::kEncodedLength, Footer::kEncodedLength)));
  const uint64_t end = footer.index_handle().offset() + footer.index_handle().size();
  const uint32_t restarts = DecodeFixed32(&bytes[end - 4]);
  ASSERT_GT(restarts, 2u);
  const uint64_t array = end - 4 - 4 * uint64_t{restarts};
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(bytes, &reader));
  // The second restart point moved back onto the first entry.
  EncodeFixed32(&bytes[array + 4], DecodeFixed32(&bytes[array]));
  Status s = Open(bytes, &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("index restart point"), std::string::npos) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(HashIndex, TableForgedTest, testing::Bool());

}  // namespace
}  // namespace shale

// Random damage to a DB at rest: a random file of a flushed DB (SST, MANIFEST, CURRENT,
// WAL), a random offset, a random byte XORed in. Then Open and a full read: every answer
// must be an error or the right data. Open may fail; a scan may end with a non-OK status;
// a Get may fail; but a Get or a scan may never give a wrong value, miss a key or invent
// one while saying OK.
//
// SHALE_CORRUPTION_ROUNDS=N runs N damaged copies (default 60); the seed is printed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/filename.h"
#include "shale/db.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

using Model = std::map<std::string, std::string>;

int Rounds() { return TestKnob("SHALE_CORRUPTION_ROUNDS", 60); }

// A DB over several levels, all flushed, and what it holds.
Model BuildDB(const std::string& dbname, Random* rnd) {
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 32 << 10;
  options.target_file_size_base = 32 << 10;
  options.max_bytes_for_level_base = 128 << 10;
  Model model;
  std::unique_ptr<DB> db;
  EXPECT_OK(DB::Open(options, dbname, &db));
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 600; i++) {
      const std::string k = "key" + std::to_string(rnd->Uniform(1500));
      if (rnd->OneIn(8)) {
        EXPECT_OK(db->Delete(WriteOptions(), k));
        model.erase(k);
      } else {
        const std::string v = RandomString(rnd, 20 + rnd->Uniform(100));
        EXPECT_OK(db->Put(WriteOptions(), k, v));
        model[k] = v;
      }
    }
    EXPECT_OK(db->Flush(FlushOptions()));
    if (round == 1) EXPECT_OK(db->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  }
  EXPECT_OK(db->Close());
  return model;
}

// Copies every file of `from` (a flat directory) into `to`, which must not exist.
void CopyDir(const std::string& from, const std::string& to) {
  Env* env = Env::Default();
  ASSERT_OK(env->CreateDir(to));
  std::vector<std::string> children;
  ASSERT_OK(env->GetChildren(from, &children));
  for (const std::string& c : children) {
    if (c == "." || c == "..") continue;
    std::string data;
    ASSERT_OK(ReadFileToString(env, from + "/" + c, &data));
    ASSERT_OK(WriteStringToFile(env, data, to + "/" + c, false));
  }
}

// The files worth damaging: those the DB reads back (not LOG or LOCK).
std::vector<std::string> DamageableFiles(const std::string& dbname) {
  std::vector<std::string> children, out;
  EXPECT_OK(Env::Default()->GetChildren(dbname, &children));
  for (const std::string& c : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(c, &number, &type)) continue;
    if (type == kTableFile || type == kDescriptorFile || type == kCurrentFile || type == kWalFile) {
      uint64_t size = 0;
      if (Env::Default()->GetFileSize(dbname + "/" + c, &size).ok() && size > 0) {
        out.push_back(c);
      }
    }
  }
  return out;
}

TEST(DBRandomCorruptionTest, ErrorOrTheRightDataNeverAWrongOK) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  TempDirectory dir("random_corruption");
  const std::string pristine = dir.path() + "/pristine";
  const Model model = BuildDB(pristine, &rnd);
  const std::vector<std::string> files = DamageableFiles(pristine);
  ASSERT_GE(files.size(), 4u);
  int open_failed = 0, read_errors = 0, all_correct = 0;
  const int rounds = Rounds();
  for (int round = 0; round < rounds; round++) {
    const std::string work = dir.path() + "/r" + std::to_string(round);
    CopyDir(pristine, work);
    const std::string victim = files[rnd.Uniform(static_cast<uint32_t>(files.size()))];
    uint64_t size = 0;
    ASSERT_OK(Env::Default()->GetFileSize(work + "/" + victim, &size));
    const uint64_t offset = rnd.Uniform(static_cast<uint32_t>(size));
    std::string data;
    ASSERT_OK(ReadFileToString(Env::Default(), work + "/" + victim, &data));
    data[offset] = static_cast<char>(data[offset] ^ (1 + rnd.Uniform(255)));
    ASSERT_OK(WriteStringToFile(Env::Default(), data, work + "/" + victim, false));
    const std::string where = "round " + std::to_string(round) + ": " + victim + " offset " +
                              std::to_string(offset) + " (seed " + std::to_string(seed) + ")";

    std::unique_ptr<DB> db;
    if (!DB::Open(Options(), work, &db).ok()) {
      open_failed++;
      ASSERT_OK(DestroyDir(work));
      continue;
    }
    bool error = false;
    std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_TRUE(m != model.end()) << where << ": invented " << it->key().ToString();
      ASSERT_EQ(it->key().ToString(), m->first) << where;
      ASSERT_EQ(it->value().ToString(), m->second) << where;
    }
    if (it->status().ok()) {
      ASSERT_TRUE(m == model.end()) << where << ": scan missed " << m->first;
    } else {
      error = true;
    }
    it.reset();
    for (const auto& [k, v] : model) {
      std::string got;
      Status s = db->Get(ReadOptions(), k, &got);
      ASSERT_FALSE(s.IsNotFound()) << where << ": lost " << k;
      if (s.ok()) {
        ASSERT_EQ(got, v) << where << ": " << k;
      } else {
        error = true;
      }
    }
    for (int i = 0; i < 20; i++) {
      const std::string k = "absent" + std::to_string(i);
      std::string got;
      Status s = db->Get(ReadOptions(), k, &got);
      ASSERT_FALSE(s.ok()) << where << ": invented " << k;
    }
    (error ? read_errors : all_correct)++;
    db.reset();
    ASSERT_OK(DestroyDir(work));
  }
  fprintf(stderr, "%d damaged copies: %d refused at Open, %d gave read errors, %d read right\n",
          rounds, open_failed, read_errors, all_correct);
}

}  // namespace
}  // namespace shale

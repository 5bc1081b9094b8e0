// The option tables against the structs they describe, and the OPTIONS file written from
// them: defaults, coverage of every field, value spelling, round trips, RocksDB's own files,
// refusals, and the writer's keep-two policy.
#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "options/option_table.h"
#include "options/options_file.h"
#include "shale/cache.h"
#include "shale/env.h"
#include "table/table_factory.h"

namespace shale {
namespace {

const char* StructName(OptionStruct which) {
  switch (which) {
    case OptionStruct::kDB: return "DBOptions";
    case OptionStruct::kCF: return "ColumnFamilyOptions";
    case OptionStruct::kBlockBasedTable: return "BlockBasedTableOptions";
  }
  return "?";
}

// Every entry spells the default-constructed struct's member as its default_value says.
template <typename S>
void CheckDefaults(OptionStruct which) {
  S defaults;
  for (const OptionInfo& info : OptionsTable(which)) {
    std::string value = FormatOption(info, &defaults);
    if (std::string(info.name) == "compression" && !CompressionTypeSupported(kSnappyCompression)) {
      continue;  // the default follows the build
    }
    EXPECT_EQ(value, info.default_value) << StructName(which) << "::" << info.name;
  }
}

TEST(OptionsTableTest, DefaultsMatchTheStructs) {
  CheckDefaults<DBOptions>(OptionStruct::kDB);
  CheckDefaults<ColumnFamilyOptions>(OptionStruct::kCF);
  CheckDefaults<BlockBasedTableOptions>(OptionStruct::kBlockBasedTable);
}

// A field missing from its table: the struct is default-constructed twice over storage
// filled first with 0xAA and then with 0x55. Bytes the constructor writes come out equal
// both times; untouched padding keeps the fill and differs. So a byte that comes out equal
// and that no entry covers belongs to a field the table lacks. This catches any field with
// a default member initializer or a constructor (every field of these structs has one, as
// RocksDB's do); a field left uninitialized would escape it.
template <typename S>
void CheckCoverage(OptionStruct which) {
  alignas(S) unsigned char storage[sizeof(S)];
  unsigned char written[2][sizeof(S)];
  const unsigned char fills[2] = {0xAA, 0x55};
  for (int run = 0; run < 2; ++run) {
    std::memset(storage, fills[run], sizeof(S));
    S* s = new (storage) S;
    std::memcpy(written[run], storage, sizeof(S));
    s->~S();
  }
  std::vector<const char*> owner(sizeof(S), nullptr);
  S probe;
  const auto* base = reinterpret_cast<const unsigned char*>(&probe);
  std::set<std::string> names;
  for (const OptionInfo& info : OptionsTable(which)) {
    EXPECT_TRUE(names.insert(info.name).second) << "listed twice: " << info.name;
    const auto* member = static_cast<const unsigned char*>(OptionField(info, &probe));
    const size_t offset = static_cast<size_t>(member - base);
    ASSERT_LE(offset + info.size, sizeof(S)) << info.name;
    for (size_t i = offset; i < offset + info.size; ++i) {
      EXPECT_EQ(owner[i], nullptr) << info.name << " overlaps " << owner[i];
      owner[i] = info.name;
    }
  }
  for (size_t i = 0; i < sizeof(S); ++i) {
    if (owner[i] != nullptr) continue;
    EXPECT_NE(written[0][i], written[1][i])
        << StructName(which) << ": byte " << i << " is initialized but in no table entry "
        << "(a field missing from options/option_tables.cc?)";
  }
}

TEST(OptionsTableTest, EveryFieldIsInItsTable) {
  CheckCoverage<DBOptions>(OptionStruct::kDB);
  CheckCoverage<ColumnFamilyOptions>(OptionStruct::kCF);
  CheckCoverage<BlockBasedTableOptions>(OptionStruct::kBlockBasedTable);
}

TEST(OptionsTableTest, ValuesAreSpelledAsRocksDBSpellsThem) {
  Options o;
  o.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  o.compression = kZSTD;
  o.max_bytes_for_level_multiplier = 8.5;
  o.info_log_level = WARN_LEVEL;
  auto fmt = [&](OptionStruct w, const char* name, const void* s) {
    const OptionInfo* info = FindOption(w, name);
    return info == nullptr ? std::string("(missing)") : FormatOption(*info, s);
  };
  const DBOptions* db = &o;
  const ColumnFamilyOptions* cf = &o;
  EXPECT_EQ(fmt(OptionStruct::kDB, "wal_recovery_mode", db), "kAbsoluteConsistency");
  EXPECT_EQ(fmt(OptionStruct::kDB, "info_log_level", db), "WARN_LEVEL");
  EXPECT_EQ(fmt(OptionStruct::kCF, "compression", cf), "kZSTD");
  EXPECT_EQ(fmt(OptionStruct::kCF, "max_bytes_for_level_multiplier", cf), "8.500000");
  EXPECT_EQ(fmt(OptionStruct::kCF, "write_buffer_size", cf), "67108864");
  BlockBasedTableOptions t;
  t.filter_policy.reset(NewBloomFilterPolicy(10));
  EXPECT_EQ(fmt(OptionStruct::kBlockBasedTable, "filter_policy", &t), "bloomfilter:10:false");
  t.filter_policy.reset(NewRibbonFilterPolicy(9.5, -1));
  EXPECT_EQ(fmt(OptionStruct::kBlockBasedTable, "filter_policy", &t), "ribbonfilter:9.500000:-1");
}

TEST(OptionsTableTest, ParseRefusesBadValuesAndChangesNothing) {
  ColumnFamilyOptions cf;
  const OptionInfo* wbs = FindOption(OptionStruct::kCF, "write_buffer_size");
  ASSERT_NE(wbs, nullptr);
  EXPECT_TRUE(ParseOption(*wbs, "8M", &cf).ok());
  EXPECT_EQ(cf.write_buffer_size, size_t{8} << 20);
  for (const char* bad : {"", "x", "12q", "-1", "1000T", "100"}) {  // 100: below 4 KiB
    Status s = ParseOption(*wbs, bad, &cf);
    EXPECT_TRUE(s.IsInvalidArgument()) << bad;
    EXPECT_NE(s.ToString().find("write_buffer_size"), std::string::npos) << s.ToString();
    EXPECT_EQ(cf.write_buffer_size, size_t{8} << 20) << bad;
  }
  const OptionInfo* mode = FindOption(OptionStruct::kDB, "wal_recovery_mode");
  DBOptions db;
  EXPECT_TRUE(ParseOption(*mode, "PointInTime", &db).IsInvalidArgument());
  EXPECT_TRUE(ParseOption(*mode, "kSkipAnyCorruptedRecords", &db).ok());
  EXPECT_EQ(db.wal_recovery_mode, WALRecoveryMode::kSkipAnyCorruptedRecords);
  const OptionInfo* cmp = FindOption(OptionStruct::kCF, "comparator");
  EXPECT_TRUE(ParseOption(*cmp, "leveldb.BytewiseComparator", &cf).IsInvalidArgument());
}

// Sets every parseable option to a value other than its default (its minimum, or the
// other bool, or another enum), so a round trip that dropped one would show.
template <typename S>
void Perturb(OptionStruct which, S* s) {
  for (const OptionInfo& info : OptionsTable(which)) {
    if (info.parse == nullptr) continue;
    const std::string before = FormatOption(info, s);
    for (const char* v :
         {"true", "false", "kZSTD", "kNoCompression", "kCRC32c", "kSkipAnyCorruptedRecords",
          "ERROR_LEVEL", "3", "5", "7", "4096", "1", "2.5"}) {
      if (ParseOption(info, v, s).ok() && FormatOption(info, s) != before) break;
    }
  }
}

TEST(OptionsFileTest, RoundTrip) {
  DBOptions db;
  Perturb(OptionStruct::kDB, &db);
  ColumnFamilyOptions cf;
  Perturb(OptionStruct::kCF, &cf);
  cf.comparator = ReverseBytewiseComparator();
  BlockBasedTableOptions t;
  Perturb(OptionStruct::kBlockBasedTable, &t);
  t.filter_policy.reset(NewRibbonFilterPolicy(12, 2));
  cf.table_factory.reset(NewBlockBasedTableFactory(t));
  const std::string text = SerializeOptions(db, {"default"}, {cf});

  ParsedOptions parsed;
  ASSERT_TRUE(ParseOptions(text, "OPTIONS-x", ParseOptionsConfig(), &parsed).ok()) << text;
  ASSERT_EQ(parsed.cf_names.size(), 1u);
  EXPECT_EQ(SerializeOptions(parsed.db_options, parsed.cf_names, parsed.cf_options), text);
  EXPECT_EQ(parsed.cf_options[0].comparator, ReverseBytewiseComparator());
  // The perturbation reached most options (a check on the test itself).
  EXPECT_NE(text, SerializeOptions(DBOptions(), {"default"}, {ColumnFamilyOptions()}));
}

// Every family gets its two sections, in the order given; names are escaped as RocksDB
// escapes them and read back as they were.
TEST(OptionsFileTest, SeveralFamiliesRoundTrip) {
  const std::vector<std::string> names = {"default", "a:b#c\\d", "two\nlines\r", "q\"uote ]"};
  std::vector<ColumnFamilyOptions> families(names.size());
  for (size_t i = 0; i < families.size(); ++i) {
    families[i].write_buffer_size = (i + 1) << 20;
    BlockBasedTableOptions t;
    t.block_size = (i + 1) << 12;
    families[i].table_factory.reset(NewBlockBasedTableFactory(t));
  }
  families[1].comparator = ReverseBytewiseComparator();
  const std::string text = SerializeOptions(DBOptions(), names, families);
  for (const char* header : {"[CFOptions \"default\"]", "[CFOptions \"a\\:b\\#c\\\\d\"]",
                             "[TableOptions/BlockBasedTable \"a\\:b\\#c\\\\d\"]",
                             "[CFOptions \"two\\nlines\\r\"]", "[CFOptions \"q\"uote ]\"]"}) {
    EXPECT_NE(text.find(header), std::string::npos) << header << " not in\n" << text;
  }
  ParsedOptions parsed;
  ASSERT_TRUE(ParseOptions(text, "f", ParseOptionsConfig(), &parsed).ok()) << text;
  EXPECT_EQ(parsed.cf_names, names);
  ASSERT_EQ(parsed.cf_options.size(), names.size());
  EXPECT_EQ(SerializeOptions(parsed.db_options, parsed.cf_names, parsed.cf_options), text);
  EXPECT_EQ(parsed.cf_options[1].comparator, ReverseBytewiseComparator());
  EXPECT_EQ(parsed.cf_options[3].write_buffer_size, 4u << 20);
}

// RocksDB's reader: a comment may follow a section header, and an escaped '#' is no comment.
TEST(OptionsFileTest, SectionHeadersTakeCommentsAndEscapes) {
  std::string text = SerializeOptions(DBOptions(), {"default", "x#y"},
                                      {ColumnFamilyOptions(), ColumnFamilyOptions()});
  const std::string header = "[CFOptions \"x\\#y\"]";
  const size_t p = text.find(header);
  ASSERT_NE(p, std::string::npos) << text;
  text.insert(p + header.size(), "  # the second family");
  ParsedOptions parsed;
  ASSERT_TRUE(ParseOptions(text, "f", ParseOptionsConfig(), &parsed).ok()) << text;
  EXPECT_EQ(parsed.cf_names, (std::vector<std::string>{"default", "x#y"}));
}

TEST(OptionsFileTest, RefusesFamiliesOutOfOrderOrTwice) {
  const ColumnFamilyOptions cf;
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{"a", "default"}, {"default", "a", "a"}, {"default", "default"}}) {
    const std::string text =
        SerializeOptions(DBOptions(), names, std::vector<ColumnFamilyOptions>(names.size(), cf));
    ParsedOptions parsed;
    EXPECT_TRUE(ParseOptions(text, "f", ParseOptionsConfig(), &parsed).IsInvalidArgument()) << text;
  }
}

std::string TestDataFile(const std::string& name) {
  std::string dir = __FILE__;
  dir = dir.substr(0, dir.rfind('/'));
  std::string text;
  EXPECT_TRUE(ReadFileToString(Env::Default(), dir + "/../testdata/options/" + name, &text).ok())
      << name;
  return text;
}

// A file RocksDB 7.8.3's ldb wrote (comment lines dropped).
TEST(OptionsFileTest, ReadsAFileRocksDBWrote) {
  const std::string text = TestDataFile("rocksdb-7.8.3-ldb.ini");
  ParsedOptions parsed;
  Status s = ParseOptions(text, "rocksdb", ParseOptionsConfig(), &parsed);
  EXPECT_TRUE(s.IsInvalidArgument()) << "RocksDB's extra options must be refused by default";
  EXPECT_NE(s.ToString().find("unknown option"), std::string::npos) << s.ToString();
  ParseOptionsConfig ignore;
  ignore.ignore_unknown_options = true;
  ASSERT_TRUE(ParseOptions(text, "rocksdb", ignore, &parsed).ok());
  EXPECT_TRUE(parsed.db_options.create_if_missing);
  EXPECT_EQ(parsed.db_options.info_log_level, DEBUG_LEVEL);
  EXPECT_EQ(parsed.cf_options[0].max_compaction_bytes, 1677721600u);
  EXPECT_EQ(parsed.cf_options[0].arena_block_size, 1048576u);
  EXPECT_EQ(parsed.merge_operator_names[0], "{id=StringAppendOperator;delimiter=:;}");
}

// Every option shale writes has RocksDB's name, in the section RocksDB expects it in, so
// RocksDB's parser (which refuses unknown names) reads shale's files.
TEST(OptionsFileTest, EveryPersistedNameIsRocksDBs) {
  const std::string text = TestDataFile("rocksdb-7.8.3-ldb.ini");
  std::map<std::string, std::set<std::string>> rocksdb;  // section -> names
  std::string section;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    line.erase(0, line.find_first_not_of(' '));
    if (line.empty()) continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find_first_of(" ]") - 1);
    } else {
      rocksdb[section].insert(line.substr(0, line.find('=')));
    }
  }
  const std::pair<OptionStruct, const char*> sections[] = {
      {OptionStruct::kDB, "DBOptions"},
      {OptionStruct::kCF, "CFOptions"},
      {OptionStruct::kBlockBasedTable, "TableOptions/BlockBasedTable"}};
  for (const auto& [which, name] : sections) {
    ASSERT_FALSE(rocksdb[name].empty()) << name;
    for (const OptionInfo& info : OptionsTable(which)) {
      if (!info.persisted()) continue;
      EXPECT_EQ(rocksdb[name].count(info.name), 1u) << name << " has no " << info.name;
    }
  }
}

TEST(OptionsFileTest, RefusesMalformedFiles) {
  const std::string good = SerializeOptions(DBOptions(), {"default"}, {ColumnFamilyOptions()});
  ParsedOptions parsed;
  ASSERT_TRUE(ParseOptions(good, "f", ParseOptionsConfig(), &parsed).ok());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t p = t.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    return t.replace(p, from.size(), to);
  };
  const std::string bad[] = {
      replaced("[Version]", "[Versio]"),
      replaced("  options_file_version=1.1\n", ""),
      replaced("[DBOptions]", "[Nothing]"),
      replaced("[CFOptions \"default\"]", "[CFOptions \"other\"]"),
      replaced("  create_if_missing=false", "  create_if_missing=maybe"),
      replaced("  create_if_missing=false", "  create_if_missing"),
      replaced("  num_levels=7", "  num_levelz=7"),
      replaced("comparator=leveldb.BytewiseComparator", "comparator=my.Comparator"),
      replaced("table_factory=BlockBasedTable", "table_factory=PlainTable"),
      replaced("filter_policy=nullptr", "filter_policy=cuckoo:3"),
      replaced("[TableOptions/BlockBasedTable \"default\"]",
               "[TableOptions/BlockBasedTable \"nope\"]"),
      good.substr(0, good.find("[CFOptions")),
  };
  for (const std::string& text : bad) {
    Status s = ParseOptions(text, "f", ParseOptionsConfig(), &parsed);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString() << "\n" << text;
  }
}

TEST(OptionsFileTest, WriterKeepsTheNewestTwo) {
  std::unique_ptr<Env> env(NewMemEnv(Env::Default()));
  const std::string dir = "/optdb";
  ASSERT_TRUE(env->CreateDirIfMissing(dir).ok());
  ASSERT_TRUE(WriteStringToFile(env.get(), "junk", TempOptionsFilePath(dir, 3)).ok());
  for (uint64_t n : {5, 9, 12}) {
    ASSERT_TRUE(
        WriteOptionsFile(env.get(), dir, n, DBOptions(), ColumnFamilyOptions(), nullptr).ok());
  }
  std::vector<std::string> children;
  ASSERT_TRUE(env->GetChildren(dir, &children).ok());
  std::set<std::string> names(children.begin(), children.end());
  names.erase(".");
  names.erase("..");
  EXPECT_EQ(names, (std::set<std::string>{"OPTIONS-000009", "OPTIONS-000012"}));
  uint64_t number = 0;
  EXPECT_TRUE(ParseOptionsFileName("OPTIONS-000012", &number));
  EXPECT_EQ(number, 12u);
  EXPECT_FALSE(ParseOptionsFileName("OPTIONS-000012.dbtmp", &number));
  EXPECT_FALSE(ParseOptionsFileName("OPTIONS-", &number));
}

}  // namespace
}  // namespace shale

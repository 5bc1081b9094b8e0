#include "table/table_properties.h"

#include <map>
#include <memory>

#include "shale/comparator.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "util/coding.h"

namespace shale {
namespace {

// RocksDB's property names, so its tools would read ours the same way.
constexpr char kDataSize[] = "rocksdb.data.size";
constexpr char kIndexSize[] = "rocksdb.index.size";
constexpr char kFilterSize[] = "rocksdb.filter.size";
constexpr char kRawKeySize[] = "rocksdb.raw.key.size";
constexpr char kRawValueSize[] = "rocksdb.raw.value.size";
constexpr char kNumDataBlocks[] = "rocksdb.num.data.blocks";
constexpr char kNumEntries[] = "rocksdb.num.entries";
constexpr char kNumDeletions[] = "rocksdb.deleted.keys";
constexpr char kNumMergeOperands[] = "rocksdb.merge.operands";
constexpr char kNumRangeDeletions[] = "rocksdb.num.range-deletions";
constexpr char kComparator[] = "rocksdb.comparator";
constexpr char kFilterPolicy[] = "rocksdb.filter.policy";
constexpr char kCompression[] = "rocksdb.compression";
constexpr char kExternalSstFileVersion[] = "rocksdb.external_sst_file.version";

}  // namespace

std::string TableProperties::ToString() const {
  std::string r;
  auto num = [&r](const char* name, uint64_t v) {
    r.append(name).append("=").append(std::to_string(v)).append("; ");
  };
  num("data_size", data_size);
  num("index_size", index_size);
  num("filter_size", filter_size);
  num("raw_key_size", raw_key_size);
  num("raw_value_size", raw_value_size);
  num("num_data_blocks", num_data_blocks);
  num("num_entries", num_entries);
  num("num_deletions", num_deletions);
  num("num_merge_operands", num_merge_operands);
  if (num_range_deletions != 0) num("num_range_deletions", num_range_deletions);
  r.append("comparator=").append(comparator_name).append("; ");
  r.append("filter_policy=").append(filter_policy_name).append("; ");
  r.append("compression=").append(compression_name);
  if (external_sst_file_version != 0) {
    r.append("; external_sst_file_version=").append(std::to_string(external_sst_file_version));
  }
  return r;
}

std::string EncodeTableProperties(const TableProperties& props) {
  std::map<std::string, std::string> sorted;  // the block needs its keys in order
  auto num = [&sorted](const char* name, uint64_t v) { PutVarint64(&sorted[name], v); };
  num(kDataSize, props.data_size);
  num(kIndexSize, props.index_size);
  num(kFilterSize, props.filter_size);
  num(kRawKeySize, props.raw_key_size);
  num(kRawValueSize, props.raw_value_size);
  num(kNumDataBlocks, props.num_data_blocks);
  num(kNumEntries, props.num_entries);
  num(kNumDeletions, props.num_deletions);
  num(kNumMergeOperands, props.num_merge_operands);
  sorted[kComparator] = props.comparator_name;
  sorted[kFilterPolicy] = props.filter_policy_name;
  sorted[kCompression] = props.compression_name;
  // Written only when there are some, so that files without keep their old bytes.
  if (props.num_range_deletions != 0) num(kNumRangeDeletions, props.num_range_deletions);
  if (props.external_sst_file_version != 0) {
    num(kExternalSstFileVersion, props.external_sst_file_version);
  }

  BlockBuilder builder(1);
  for (const auto& [name, value] : sorted) builder.Add(name, value);
  return builder.Finish().ToString();
}

Status DecodeTableProperties(const Slice& contents, const std::string* file_name,
                             uint64_t block_offset, TableProperties* props) {
  const std::map<std::string, uint64_t*, std::less<>> numbers = {
      {kDataSize, &props->data_size},
      {kIndexSize, &props->index_size},
      {kFilterSize, &props->filter_size},
      {kRawKeySize, &props->raw_key_size},
      {kRawValueSize, &props->raw_value_size},
      {kNumDataBlocks, &props->num_data_blocks},
      {kNumEntries, &props->num_entries},
      {kNumDeletions, &props->num_deletions},
      {kNumMergeOperands, &props->num_merge_operands},
      {kNumRangeDeletions, &props->num_range_deletions},
      {kExternalSstFileVersion, &props->external_sst_file_version},
  };
  const std::map<std::string, std::string*, std::less<>> names = {
      {kComparator, &props->comparator_name},
      {kFilterPolicy, &props->filter_policy_name},
      {kCompression, &props->compression_name},
  };

  Block block(BlockContents(contents), file_name, block_offset);
  std::unique_ptr<InternalIterator> iter(block.NewIterator(BytewiseComparator()));
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
    const std::string_view name = iter->key().ToStringView();
    if (auto it = numbers.find(name); it != numbers.end()) {
      Slice v = iter->value();
      if (!GetVarint64(&v, it->second) || !v.empty()) {
        return CorruptionAt(file_name, block_offset, "bad number in properties block", iter->key());
      }
    } else if (auto it2 = names.find(name); it2 != names.end()) {
      *it2->second = iter->value().ToString();
    }
  }
  return iter->status();
}

}  // namespace shale

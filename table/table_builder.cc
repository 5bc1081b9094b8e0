#include "table/table_builder.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "table/compression.h"
#include "table/filter.h"

namespace shale {

TableBuilder::TableBuilder(const TableBuilderOptions& options, WritableFile* file)
    : options_(options),
      file_(file),
      data_block_(options.table_options.block_restart_interval,
                  options.table_options.data_block_index_type ==
                      BlockBasedTableOptions::kDataBlockBinaryAndHash,
                  options.table_options.data_block_hash_table_util_ratio),
      index_block_(options.table_options.index_block_restart_interval),
      compressor_(options.compression) {
  const BlockBasedTableOptions& topts = options_.table_options;
  if (options_.compression != kDisableCompressionOption &&
      !CompressionTypeSupported(options_.compression)) {
    status_ = Status::NotSupported("compression type not supported by this build",
                                   CompressionTypeToString(options_.compression));
  } else if (!ChecksumTypeSupported(topts.checksum)) {
    status_ = Status::NotSupported("unknown checksum type",
                                   std::to_string(static_cast<int>(topts.checksum)));
  }
  // Without whole-key filtering no key would go in (there are no prefix extractors), so no
  // filter block is written and readers never consult one.
  if (topts.filter_policy != nullptr && topts.whole_key_filtering && !options_.skip_filters) {
    FilterBuildingContext context;
    context.level_at_creation = options_.level_at_creation;
    context.is_flush = options_.is_flush;
    filter_builder_ = NewFilterBitsBuilder(*topts.filter_policy, context);
  }
  props_.comparator_name = options_.icmp->user_comparator()->Name();
  props_.external_sst_file_version = options_.external_file_version;
  if (filter_builder_ != nullptr) props_.filter_policy_name = topts.filter_policy->Name();
  props_.compression_name = CompressionTypeToString(
      options_.compression == kDisableCompressionOption ? kNoCompression : options_.compression);
}

TableBuilder::~TableBuilder() { assert(closed_); }

void TableBuilder::Add(const Slice& key, const Slice& value) {
  assert(!closed_);
  if (!status_.ok()) return;
  if (key.size() < 8) {
    status_ = Status::InvalidArgument(options_.file_name + ": internal key shorter than 8 bytes");
    return;
  }
  if (props_.num_entries > 0 && options_.icmp->Compare(key, last_key_) <= 0) {
    status_ = Status::InvalidArgument(options_.file_name + ": keys added out of order",
                                      key.ToString(true));
    return;
  }
  if (DataBlockAlmostFull(key, value)) FlushDataBlock();
  if (pending_index_entry_) AddPendingIndexEntry(&key);
  if (filter_builder_ != nullptr) filter_builder_->AddKey(ExtractUserKey(key));

  last_key_.assign(key.data(), key.size());
  props_.num_entries++;
  props_.raw_key_size += key.size();
  props_.raw_value_size += value.size();
  switch (ExtractValueType(key)) {
    case kTypeDeletion:
    case kTypeSingleDeletion: props_.num_deletions++; break;
    case kTypeMerge: props_.num_merge_operands++; break;
    default: break;
  }
  data_block_.Add(key, value);
  if (data_block_.CurrentSizeEstimate() >= options_.table_options.block_size) FlushDataBlock();
}

bool TableBuilder::DataBlockAlmostFull(const Slice& key, const Slice& value) const {
  // RocksDB's default cut (its block_size_deviation of 10): a block past 90% of block_size
  // that this entry would take over it ends before the entry. Cutting only once a block
  // reached block_size, as LevelDB does, made blocks about half an entry larger than asked
  // for, and every cache miss reads, checks and decompresses the whole block.
  if (data_block_.empty()) return false;
  const size_t block_size = options_.table_options.block_size;
  const size_t limit = block_size - block_size / 10;
  return data_block_.CurrentSizeEstimate() > limit &&
         data_block_.SizeEstimateAfter(key, value) > block_size;
}

void TableBuilder::AddPendingIndexEntry(const Slice* next_key) {
  // Any key in [last_key_, next_key) separates the blocks; a short one keeps the index small.
  separator_.assign(last_key_);
  if (next_key != nullptr) {
    options_.icmp->FindShortestSeparator(&separator_, *next_key);
  } else {
    options_.icmp->FindShortSuccessor(&separator_);
  }
  std::string handle;
  pending_handle_.EncodeTo(&handle);
  index_block_.Add(separator_, handle);
  pending_index_entry_ = false;
}

void TableBuilder::FlushDataBlock() {
  if (!status_.ok() || data_block_.empty()) return;
  assert(!pending_index_entry_);
  WriteBlock(&data_block_, true, &pending_handle_);
  if (!status_.ok()) return;
  pending_index_entry_ = true;
  props_.num_data_blocks++;
  props_.data_size = offset_;
}

void TableBuilder::WriteBlock(BlockBuilder* block, bool may_compress, BlockHandle* handle) {
  const Slice raw = block->Finish();
  Slice contents = raw;
  CompressionType type = kNoCompression;
  const CompressionType wanted = options_.compression;
  Slice compressed;
  if (may_compress && wanted != kNoCompression && wanted != kDisableCompressionOption &&
      compressor_.Compress(raw, &compressed) &&
      GoodCompressionRatio(compressed.size(), raw.size())) {
    if (options_.table_options.verify_compression) {
      std::unique_ptr<char[]> check;
      size_t check_size = 0;
      Status s = DecompressBlock(wanted, compressed, &check, &check_size);
      if (!s.ok() || Slice(check.get(), check_size) != raw) {
        status_ = Status::Corruption(options_.file_name + ": compression verification failed",
                                     s.ok() ? Slice("contents differ") : Slice(s.ToString()));
        block->Reset();
        return;
      }
    }
    contents = compressed;
    type = wanted;
  }
  WriteRawBlock(contents, type, handle);
  block->Reset();
}

void TableBuilder::WriteRawBlock(const Slice& contents, CompressionType type, BlockHandle* handle) {
  handle->set_offset(offset_);
  handle->set_size(contents.size());
  status_ = file_->Append(contents);
  if (!status_.ok()) return;
  char trailer[kBlockTrailerSize];
  trailer[0] = static_cast<char>(type);
  EncodeFixed32(trailer + 1, ComputeBlockChecksum(options_.table_options.checksum, contents.data(),
                                                  contents.size(), trailer[0]));
  status_ = file_->Append(Slice(trailer, kBlockTrailerSize));
  if (status_.ok()) offset_ += contents.size() + kBlockTrailerSize;
}

Status TableBuilder::Finish() {
  assert(!closed_);
  FlushDataBlock();
  closed_ = true;
  if (!status_.ok()) return status_;
  props_.data_size = offset_;

  BlockHandle filter_handle;
  if (filter_builder_ != nullptr) {
    const std::string filter = filter_builder_->Finish();
    WriteRawBlock(filter, kNoCompression, &filter_handle);
    props_.filter_size = filter.size();
  }

  BlockHandle index_handle;
  if (status_.ok()) {
    if (pending_index_entry_) AddPendingIndexEntry(nullptr);
    const uint64_t start = offset_;
    WriteBlock(&index_block_, true, &index_handle);
    props_.index_size = offset_ - start;
  }

  BlockHandle properties_handle;
  if (status_.ok()) {
    WriteRawBlock(EncodeTableProperties(props_), kNoCompression, &properties_handle);
  }

  BlockHandle range_del_handle;
  if (status_.ok() && !range_tombstones_.empty()) {
    const InternalKeyComparator& icmp = *options_.icmp;
    std::vector<std::pair<std::string, Slice>> entries;  // internal key, end
    entries.reserve(range_tombstones_.size());
    for (const RangeTombstone& t : range_tombstones_) {
      InternalKey k(t.begin, t.seq, kTypeRangeDeletion);
      entries.emplace_back(k.Encode().ToString(), Slice(t.end));
    }
    std::sort(entries.begin(), entries.end(),
              [&icmp](const auto& a, const auto& b) { return icmp.Compare(a.first, b.first) < 0; });
    BlockBuilder block(1);
    for (const auto& [key, end] : entries) block.Add(key, end);
    WriteBlock(&block, false, &range_del_handle);
  }

  BlockHandle metaindex_handle;
  if (status_.ok()) {
    // Names in bytewise order: "filter.*", "properties", "rocksdb.range_del".
    BlockBuilder metaindex(1);
    std::string handle;
    if (filter_builder_ != nullptr) {
      filter_handle.EncodeTo(&handle);
      metaindex.Add(
          std::string("filter.") + options_.table_options.filter_policy->CompatibilityName(),
          handle);
    }
    handle.clear();
    properties_handle.EncodeTo(&handle);
    metaindex.Add("properties", handle);
    if (!range_tombstones_.empty()) {
      handle.clear();
      range_del_handle.EncodeTo(&handle);
      metaindex.Add(kRangeDelBlockName, handle);
    }
    WriteBlock(&metaindex, false, &metaindex_handle);
  }

  if (status_.ok()) {
    Footer footer;
    footer.set_checksum_type(options_.table_options.checksum);
    footer.set_metaindex_handle(metaindex_handle);
    footer.set_index_handle(index_handle);
    std::string encoded;
    footer.EncodeTo(&encoded);
    status_ = file_->Append(encoded);
    if (status_.ok()) offset_ += encoded.size();
  }
  return status_;
}

void TableBuilder::AddRangeTombstone(const Slice& begin, const Slice& end, SequenceNumber seq) {
  if (options_.icmp->user_comparator()->Compare(begin, end) >= 0) return;
  range_tombstones_.push_back(RangeTombstone{begin.ToString(), end.ToString(), seq});
  props_.num_range_deletions++;
}

void TableBuilder::Abandon() {
  assert(!closed_);
  closed_ = true;
}

}  // namespace shale

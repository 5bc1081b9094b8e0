#include "table/table_reader.h"

#include "table/filter.h"
#include "table/two_level_iterator.h"

namespace shale {

// Keys in data and index blocks are internal keys; shorter ones mean a damaged block.
constexpr size_t kInternalKeyMin = 8;

// Reads the data blocks an index iterator names.
class TableReader::BlockIterState final : public TwoLevelIteratorState {
 public:
  BlockIterState(const TableReader* table, const ReadOptions& read_options)
      : table_(table), read_options_(read_options) {}
  InternalIterator* NewSecondLevelIterator(const Slice& index_value) override {
    return table_->NewDataBlockIterator(read_options_, index_value);
  }

 private:
  const TableReader* const table_;
  const ReadOptions read_options_;
};

TableReader::TableReader(const TableReaderOptions& options,
                         std::unique_ptr<RandomAccessFile>&& file, uint64_t file_size)
    : options_(options), file_(std::move(file)), file_size_(file_size) {}

TableReader::~TableReader() = default;

Status TableReader::Open(const TableReaderOptions& options,
                         std::unique_ptr<RandomAccessFile>&& file, uint64_t file_size,
                         std::unique_ptr<TableReader>* reader) {
  reader->reset();
  const std::string* name = &options.file_name;
  if (file_size < Footer::kEncodedLength) {
    return CorruptionAt(name, 0, "file is too short to be an sstable",
                        std::to_string(file_size) + " bytes");
  }
  const uint64_t footer_offset = file_size - Footer::kEncodedLength;
  char scratch[Footer::kEncodedLength];
  Slice input;
  Status s = file->Read(footer_offset, Footer::kEncodedLength, &input, scratch);
  if (!s.ok()) return s;
  if (input.size() != Footer::kEncodedLength) {
    return CorruptionAt(name, footer_offset, "truncated footer read");
  }
  std::unique_ptr<TableReader> table(new TableReader(options, std::move(file), file_size));
  s = table->footer_.DecodeFrom(input);
  if (s.IsCorruption()) return CorruptionAt(name, footer_offset, "bad table footer", s.ToString());
  if (!s.ok()) return Status::NotSupported(options.file_name, s.ToString());
  s = table->ReadMetaBlocks();
  if (s.ok()) *reader = std::move(table);
  return s;
}

Status TableReader::ReadBlockAt(const BlockHandle& handle, bool verify,
                                BlockContents* contents) const {
  BlockReadSource source;
  source.file = file_.get();
  source.file_size = file_size_;
  source.file_name = &options_.file_name;
  source.checksum_type = footer_.checksum_type();
  return ReadBlock(source, handle, verify, contents);
}

Status TableReader::ReadMetaBlocks() {
  const bool verify = options_.verify_checksums_on_open;
  const std::string* name = &options_.file_name;
  const BlockHandle& meta_handle = footer_.metaindex_handle();

  BlockContents contents;
  Status s = ReadBlockAt(meta_handle, verify, &contents);
  if (!s.ok()) return s;
  Block metaindex(std::move(contents), name, meta_handle.offset());

  const std::shared_ptr<const FilterPolicy>& policy = options_.table_options.filter_policy;
  const std::string filter_name =
      policy != nullptr ? std::string("filter.") + policy->Name() : std::string();
  bool have_properties = false;
  BlockHandle properties_handle;
  bool have_filter = false;
  BlockHandle filter_handle;
  {
    std::unique_ptr<InternalIterator> iter(metaindex.NewIterator(BytewiseComparator()));
    for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
      BlockHandle* target = nullptr;
      if (iter->key() == Slice("properties")) {
        target = &properties_handle;
        have_properties = true;
      } else if (!filter_name.empty() && iter->key() == Slice(filter_name)) {
        target = &filter_handle;
        have_filter = true;
      } else {
        continue;
      }
      Slice v = iter->value();
      if (!target->DecodeFrom(&v).ok()) {
        return CorruptionAt(name, meta_handle.offset(), "bad block handle in metaindex",
                            iter->key());
      }
    }
    if (!iter->status().ok()) return iter->status();
  }

  if (!have_properties) {
    return CorruptionAt(name, meta_handle.offset(), "metaindex lacks the properties block");
  }
  s = ReadBlockAt(properties_handle, verify, &contents);
  if (!s.ok()) return s;
  s = DecodeTableProperties(contents.data, name, properties_handle.offset(), &props_);
  if (!s.ok()) return s;
  const char* cmp_name = options_.icmp->user_comparator()->Name();
  if (props_.comparator_name != cmp_name) {
    return Status::InvalidArgument(
        options_.file_name + ": written with comparator " + props_.comparator_name,
        std::string("opened with ") + cmp_name);
  }

  const BlockHandle& index_handle = footer_.index_handle();
  s = ReadBlockAt(index_handle, verify, &contents);
  if (!s.ok()) return s;
  index_block_ = std::make_unique<Block>(std::move(contents), name, index_handle.offset());
  s = index_block_->status();
  if (!s.ok()) return s;

  if (have_filter && options_.table_options.whole_key_filtering) {
    s = ReadBlockAt(filter_handle, verify, &filter_contents_);
    if (!s.ok()) return s;
    filter_ = NewFilterBitsReader(filter_contents_.data);
  }
  return Status::OK();
}

namespace {

void DeleteBlock(void* block, void*) { delete static_cast<Block*>(block); }

}  // namespace

InternalIterator* TableReader::NewDataBlockIterator(const ReadOptions& read_options,
                                                    const Slice& index_value) const {
  BlockHandle handle;
  Slice input = index_value;
  Status s = handle.DecodeFrom(&input);
  if (!s.ok()) {
    return NewEmptyInternalIterator(CorruptionAt(
        &options_.file_name, footer_.index_handle().offset(), "bad block handle in index block"));
  }
  BlockContents contents;
  s = ReadBlockAt(handle, read_options.verify_checksums, &contents);
  if (!s.ok()) return NewEmptyInternalIterator(s);
  auto* block = new Block(std::move(contents), &options_.file_name, handle.offset());
  InternalIterator* iter = block->NewIterator(options_.icmp, kInternalKeyMin);
  iter->RegisterCleanup(&DeleteBlock, block, nullptr);
  return iter;
}

InternalIterator* TableReader::NewIterator(const ReadOptions& read_options) {
  return NewTwoLevelIterator(std::make_unique<BlockIterState>(this, read_options),
                             index_block_->NewIterator(options_.icmp, kInternalKeyMin));
}

bool TableReader::KeyMayMatch(const Slice& ikey) const {
  if (filter_ == nullptr || ikey.size() < 8) return true;
  return filter_->MayMatch(ExtractUserKey(ikey));
}

Status TableReader::Get(const ReadOptions& read_options, const Slice& ikey, void* arg,
                        GetHandler handle) {
  if (ikey.size() < 8) {
    return Status::InvalidArgument(options_.file_name + ": lookup key shorter than 8 bytes");
  }
  if (!KeyMayMatch(ikey)) return Status::OK();
  std::unique_ptr<InternalIterator> iter(NewIterator(read_options));
  for (iter->Seek(ikey); iter->Valid(); iter->Next()) {
    if (!handle(arg, iter->key(), iter->value())) break;
  }
  return iter->status();
}

uint64_t TableReader::ApproximateOffsetOf(const Slice& ikey) const {
  std::unique_ptr<InternalIterator> index(
      index_block_->NewIterator(options_.icmp, kInternalKeyMin));
  index->Seek(ikey);
  if (index->Valid()) {
    BlockHandle handle;
    Slice v = index->value();
    if (handle.DecodeFrom(&v).ok()) return handle.offset();
  }
  // Past the last key, or an unreadable index: the end of the data blocks.
  return props_.data_size;
}

}  // namespace shale

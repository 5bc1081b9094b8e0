// SstFileWriter (include/shale/sst_file_writer.h): the user's keys, each as an internal key
// with sequence number 0, through a TableBuilder into a file of its own.
#include "shale/sst_file_writer.h"

#include <utility>

#include "table/table_builder.h"
#include "table/table_factory.h"
#include "util/dbformat.h"

namespace shale {

struct SstFileWriter::Rep {
  Rep(const EnvOptions& eo, const Options& o) : env_options(eo), options(o), icmp(o.comparator) {}

  // Checks the key's place, then adds it. A key out of place fails the writer.
  Status Add(const Slice& user_key, const Slice& value, ValueType type);
  // Drops the file being written (abandoning the builder if it is not finished).
  void Discard();

  const EnvOptions env_options;
  const Options options;
  const InternalKeyComparator icmp;

  std::string file_path;
  std::unique_ptr<WritableFile> file;
  std::unique_ptr<TableBuilder> builder;  // set from Open to Finish
  bool builder_finished = false;
  Status failed;  // the first bad key or write error: the file will not be kept
  bool has_key = false;
  std::string smallest_key;  // user keys
  std::string last_key;
  std::string ikey;  // scratch
  uint64_t finished_size = 0;
};

Status SstFileWriter::Rep::Add(const Slice& user_key, const Slice& value, ValueType type) {
  if (builder == nullptr) return Status::InvalidArgument("File is not opened");
  if (!failed.ok()) return failed;
  if (has_key && icmp.user_comparator()->Compare(user_key, last_key) <= 0) {
    failed = Status::InvalidArgument("Keys must be added in strict ascending order.");
    return failed;
  }
  ikey.clear();
  AppendInternalKey(&ikey, user_key, /*seq=*/0, type);
  builder->Add(ikey, value);
  if (!builder->status().ok()) {
    failed = builder->status();
    return failed;
  }
  if (!has_key) smallest_key.assign(user_key.data(), user_key.size());
  last_key.assign(user_key.data(), user_key.size());
  has_key = true;
  return Status::OK();
}

void SstFileWriter::Rep::Discard() {
  if (builder != nullptr && !builder_finished) builder->Abandon();
  builder.reset();
  if (file != nullptr) file->Close().PermitUncheckedError();
  file.reset();
  options.env->DeleteFile(file_path).PermitUncheckedError();
}

SstFileWriter::SstFileWriter(const EnvOptions& env_options, const Options& options)
    : rep_(std::make_unique<Rep>(env_options, options)) {}

SstFileWriter::~SstFileWriter() {
  if (rep_->builder != nullptr) rep_->Discard();  // never finished: leave no file
}

Status SstFileWriter::Open(const std::string& file_path) {
  Rep* r = rep_.get();
  if (r->builder != nullptr) return Status::InvalidArgument("File is already opened");
  const TableFactory* factory = r->options.table_factory.get();
  if (factory == nullptr || std::string(factory->Name()) != BlockBasedTableFactory::kClassName) {
    return Status::NotSupported("SstFileWriter writes block-based tables only");
  }
  TableBuilderOptions tbo;
  tbo.icmp = &r->icmp;
  tbo.table_options = static_cast<const BlockBasedTableFactory*>(factory)->table_options();
  tbo.compression = r->options.compression;
  tbo.file_name = file_path;
  tbo.external_file_version = kVersion;
  Status s = r->options.env->NewWritableFile(file_path, &r->file, r->env_options);
  if (!s.ok()) return s;
  r->file_path = file_path;
  r->builder = std::make_unique<TableBuilder>(tbo, r->file.get());
  r->builder_finished = false;
  r->failed = r->builder->status();  // a compression this build lacks
  r->has_key = false;
  r->smallest_key.clear();
  r->last_key.clear();
  r->finished_size = 0;
  if (!r->failed.ok()) {
    s = r->failed;
    r->Discard();
  }
  return s;
}

Status SstFileWriter::Put(const Slice& user_key, const Slice& value) {
  return rep_->Add(user_key, value, kTypeValue);
}

Status SstFileWriter::Merge(const Slice& user_key, const Slice& value) {
  return rep_->Add(user_key, value, kTypeMerge);
}

Status SstFileWriter::Delete(const Slice& user_key) {
  return rep_->Add(user_key, Slice(), kTypeDeletion);
}

Status SstFileWriter::Finish(ExternalSstFileInfo* file_info) {
  Rep* r = rep_.get();
  if (r->builder == nullptr) return Status::InvalidArgument("File is not opened");
  Status s = r->failed;
  if (s.ok() && !r->has_key) s = Status::InvalidArgument("Cannot create sst file with no entries");
  if (s.ok()) {
    s = r->builder->Finish();
    r->builder_finished = true;
  }
  if (s.ok()) s = r->options.use_fsync ? r->file->Fsync() : r->file->Sync();
  if (s.ok()) s = r->file->Close();
  if (!s.ok()) {
    r->Discard();
    return s;
  }
  r->finished_size = r->builder->FileSize();
  if (file_info != nullptr) {
    *file_info = ExternalSstFileInfo(r->file_path, r->smallest_key, r->last_key,
                                     /*sequence_number=*/0, r->finished_size,
                                     r->builder->NumEntries(), kVersion);
  }
  r->builder.reset();
  r->file.reset();
  return Status::OK();
}

uint64_t SstFileWriter::FileSize() {
  return rep_->builder != nullptr ? rep_->builder->FileSize() : rep_->finished_size;
}

}  // namespace shale

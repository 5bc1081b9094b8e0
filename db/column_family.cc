#include "db/column_family.h"

#include <utility>

#include "db/version_set.h"

namespace shale {

SuperVersion::~SuperVersion() {
  if (current != nullptr) current->Unref();
  if (mem != nullptr) mem->Unref();
  for (MemTable* m : imm) m->Unref();
  for (MemTable* m : history) m->Unref();
}

const std::string& ColumnFamilyHandleImpl::GetName() const { return cfd_->name(); }
uint32_t ColumnFamilyHandleImpl::GetID() const { return cfd_->id(); }
const Comparator* ColumnFamilyHandleImpl::GetComparator() const { return cfd_->user_comparator(); }

ColumnFamilyData::ColumnFamilyData(uint32_t id, std::string name, const Options& options,
                                   Mutex* db_mutex)
    : id_(id),
      name_(std::move(name)),
      options_(options),
      icmp_(options.comparator),
      db_mutex_(db_mutex) {}

ColumnFamilyData::~ColumnFamilyData() {
  super_version_.reset();
  if (mem_ != nullptr) mem_->Unref();
  for (MemTable* m : imm_) m->Unref();
  for (MemTable* m : history_) m->Unref();
}

void ColumnFamilyData::SwitchMemtable(MemTable* new_mem) {
  new_mem->Ref();
  if (mem_ != nullptr) imm_.push_back(mem_);
  mem_ = new_mem;
}

void ColumnFamilyData::RemoveOldestImmutable(size_t write_buffer_size) {
  MemTable* m = imm_.front();
  imm_.erase(imm_.begin());
  history_.insert(history_.begin(), m);  // keeps the reference
  TrimHistory(write_buffer_size);
}

void ColumnFamilyData::TrimHistory(size_t write_buffer_size) {
  int64_t limit = options_.max_write_buffer_size_to_maintain;
  if (limit < 0) {
    limit = static_cast<int64_t>(write_buffer_size) * options_.max_write_buffer_number;
  }
  size_t total = mem_->ApproximateMemoryUsage();
  for (MemTable* m : imm_) total += m->ApproximateMemoryUsage();
  for (MemTable* m : history_) total += m->ApproximateMemoryUsage();
  while (!history_.empty() && total > static_cast<uint64_t>(limit)) {
    total -= history_.back()->ApproximateMemoryUsage();
    history_.back()->Unref();
    history_.pop_back();
  }
}

uint64_t ColumnFamilyData::MinLogNumberToKeep() const {
  return imm_.empty() ? mem_->GetLogNumber() : imm_.front()->GetLogNumber();
}

std::shared_ptr<SuperVersion> ColumnFamilyData::GetSuperVersion() const {
  MutexLock lock(&sv_mu_);
  return super_version_;
}

std::shared_ptr<SuperVersion> ColumnFamilyData::InstallSuperVersion(
    std::shared_ptr<SuperVersion> sv) {
  MutexLock lock(&sv_mu_);
  std::swap(super_version_, sv);
  return sv;
}

}  // namespace shale

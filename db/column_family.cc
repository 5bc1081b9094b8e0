#include "db/column_family.h"

#include <utility>

#include "db/version_set.h"

namespace shale {

SuperVersion::~SuperVersion() {
  if (current != nullptr) current->Unref();
  if (mem != nullptr) mem->Unref();
  for (MemTable* m : imm) m->Unref();
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
}

void ColumnFamilyData::SwitchMemtable(MemTable* new_mem) {
  new_mem->Ref();
  if (mem_ != nullptr) imm_.push_back(mem_);
  mem_ = new_mem;
}

void ColumnFamilyData::RemoveOldestImmutable() {
  MemTable* m = imm_.front();
  imm_.erase(imm_.begin());
  m->Unref();
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

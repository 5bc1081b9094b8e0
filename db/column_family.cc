#include "db/column_family.h"

#include <utility>

#include "db/version_set.h"

namespace shale {

namespace {

// The value a thread's slot holds while that thread reads through the reference it took
// from it. Any other non-null value is a cached reference to a SuperVersion.
char in_use_marker;
void* const kSVInUse = &in_use_marker;

// Drops a reference found in a slot (by a sweep, or when the slot's thread exits).
void DropCached(void* value) {
  if (value != kSVInUse) UnrefSuperVersion(static_cast<SuperVersion*>(value));
}

void DropCachedFromSweep(void* /*arg*/, void* value) { DropCached(value); }

}  // namespace

bool UnrefSuperVersion(SuperVersion* sv) {
  if (!sv->Unref()) return false;
  delete sv;
  return true;
}

SuperVersionPin& SuperVersionPin::operator=(SuperVersionPin&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(sv_, o.sv_);
    std::swap(slot_, o.slot_);
  }
  return *this;
}

void SuperVersionPin::Reset() {
  if (slot_ != nullptr) {
    // Still the in-use marker: no install happened since the pin, so sv_ is current and
    // goes back to the cache. Otherwise a sweep emptied the slot and sv_ may be outdated.
    void* expected = kSVInUse;
    if (!slot_->compare_exchange_strong(expected, sv_, std::memory_order_acq_rel) &&
        sv_ != nullptr) {
      UnrefSuperVersion(sv_);
    }
  } else if (sv_ != nullptr) {
    UnrefSuperVersion(sv_);
  }
  sv_ = nullptr;
  slot_ = nullptr;
}

SuperVersion::~SuperVersion() {
  if (current != nullptr) current->Unref();
  if (mem != nullptr) mem->Unref();
  for (MemTable* m : imm) m->Unref();
  for (MemTable* m : history) m->Unref();
}

const std::string& ColumnFamilyHandleImpl::GetName() const { return cfd_->name(); }
uint32_t ColumnFamilyHandleImpl::GetID() const { return cfd_->id(); }
const Comparator* ColumnFamilyHandleImpl::GetComparator() const { return cfd_->user_comparator(); }

Status ColumnFamilyHandleImpl::GetDescriptor(ColumnFamilyDescriptor* desc) {
  std::shared_ptr<const Options> o;
  {
    MutexLock l(cfd_->db_mutex());
    o = cfd_->current_options();
  }
  *desc = ColumnFamilyDescriptor(cfd_->name(), *o);
  return Status::OK();
}

ColumnFamilyData::ColumnFamilyData(uint32_t id, std::string name, const Options& options,
                                   const std::string& dbname, Mutex* db_mutex)
    : id_(id),
      name_(std::move(name)),
      options_(options),
      icmp_(options.comparator),
      db_mutex_(db_mutex),
      table_cache_(std::make_unique<TableCache>(dbname, options_, &icmp_, options.max_open_files)),
      current_options_(std::make_shared<const Options>(options_)),
      picker_(std::make_unique<CompactionPicker>(current_options_, &icmp_)),
      sv_slots_(&DropCached),
      max_successive_merges_(options_.max_successive_merges) {}

void ColumnFamilyData::SetCurrentOptions(std::shared_ptr<const Options> next) {
  current_options_ = std::move(next);
  picker_->SetOptions(current_options_);
  max_successive_merges_.store(current_options_->max_successive_merges, std::memory_order_relaxed);
}

ColumnFamilyData::~ColumnFamilyData() {
  SwapCurrent(nullptr);
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

SuperVersionPin ColumnFamilyData::PinSuperVersion() const {
  SuperVersionPin pin;
  std::atomic<void*>* slot = sv_slots_.Mine();
  void* cached = slot->exchange(kSVInUse, std::memory_order_acq_rel);
  if (cached == kSVInUse) {
    // A read nested in another on this thread (a merge operator or a callback reading the
    // DB): the outer one owns the slot, so this one takes a reference of its own.
    pin.sv_ = CurrentReferenced();
    return pin;
  }
  pin.slot_ = slot;
  pin.sv_ = cached != nullptr ? static_cast<SuperVersion*>(cached) : CurrentReferenced();
  return pin;
}

SuperVersion* ColumnFamilyData::GetReferencedSuperVersion() const {
  SuperVersionPin pin = PinSuperVersion();
  SuperVersion* sv = pin.get();
  if (sv != nullptr) sv->Ref();  // the pin's own reference goes back to the slot
  return sv;
}

std::shared_ptr<SuperVersion> ColumnFamilyData::GetSuperVersion() const {
  SuperVersion* sv = GetReferencedSuperVersion();
  if (sv == nullptr) return nullptr;
  return std::shared_ptr<SuperVersion>(sv, [](SuperVersion* v) { UnrefSuperVersion(v); });
}

SuperVersion* ColumnFamilyData::CurrentReferenced() const {
  MutexLock lock(&sv_mu_);
  if (super_version_ != nullptr) super_version_->Ref();
  return super_version_;
}

void ColumnFamilyData::InstallSuperVersion(SuperVersion* sv) { SwapCurrent(sv); }

void ColumnFamilyData::SwapCurrent(SuperVersion* sv) {
  if (sv != nullptr) sv->Ref();
  SuperVersion* old;
  {
    MutexLock lock(&sv_mu_);
    old = super_version_;
    super_version_ = sv;
  }
  // After the swap, so that a reader refilling its slot concurrently either set its
  // in-use marker first (the sweep removes it, and the reader drops what it took) or reads
  // the new view.
  sv_slots_.Sweep(nullptr, &DropCachedFromSweep, nullptr);
  if (old != nullptr) UnrefSuperVersion(old);
}

}  // namespace shale

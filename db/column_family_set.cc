#include "db/column_family_set.h"

namespace shale {

ColumnFamilySet::ColumnFamilySet(const std::string& dbname, Mutex* db_mutex)
    : dbname_(dbname), db_mutex_(db_mutex) {
  views_.push_back(std::make_unique<const Snapshot>());
  writers_view_.store(views_.back().get(), std::memory_order_release);
}

ColumnFamilySet::~ColumnFamilySet() = default;

ColumnFamilyData* ColumnFamilySet::Create(uint32_t id, const std::string& name,
                                          const Options& options) {
  all_.push_back(std::make_unique<ColumnFamilyData>(id, name, options, dbname_, db_mutex_));
  ColumnFamilyData* cfd = all_.back().get();
  if (id == 0) default_cf_ = cfd;
  return cfd;
}

void ColumnFamilySet::MakeLive(ColumnFamilyData* cfd) { live_[cfd->id()] = cfd; }

void ColumnFamilySet::Drop(ColumnFamilyData* cfd) {
  cfd->SetDropped();
  live_.erase(cfd->id());
  Publish();
}

ColumnFamilyData* ColumnFamilySet::Find(uint32_t id) const {
  auto it = live_.find(id);
  return it == live_.end() ? nullptr : it->second;
}

ColumnFamilyData* ColumnFamilySet::FindByName(const std::string& name) const {
  for (const auto& [id, cfd] : live_) {
    if (cfd->name() == name) return cfd;
  }
  return nullptr;
}

void ColumnFamilySet::Publish() {
  auto view = std::make_unique<Snapshot>();
  for (const auto& [id, cfd] : live_) {
    if (id != 0) (*view)[id] = cfd;
  }
  writers_view_.store(view.get(), std::memory_order_release);
  views_.push_back(std::move(view));
}

bool ColumnFamilySet::IsLive(uint32_t id) const {
  if (id == 0) return true;
  const Snapshot* view = writers_view_.load(std::memory_order_acquire);
  auto it = view->find(id);
  return it != view->end() && !it->second->dropped();
}

bool ColumnFamilySet::AnyOtherShouldFlush() const {
  const Snapshot* view = writers_view_.load(std::memory_order_acquire);
  for (const auto& [id, cfd] : *view) {
    if (!cfd->dropped() && cfd->mem_for_wal_leader()->ShouldFlush()) return true;
  }
  return false;
}

void ColumnFamilySet::UpdateCharges() {
  const Snapshot* view = writers_view_.load(std::memory_order_acquire);
  for (const auto& [id, cfd] : *view) {
    if (!cfd->dropped()) cfd->mem_for_wal_leader()->UpdateCharge();
  }
}

MemTable* ColumnFamilySet::MemFor(uint32_t id) {
  ColumnFamilyData* cfd = LiveFamilyFor(id);
  return cfd == nullptr ? nullptr : cfd->mem_for_wal_leader();
}

const Comparator* ColumnFamilySet::UserComparatorFor(uint32_t id) const {
  const ColumnFamilyData* cfd = id == 0 ? default_cf_ : LiveFamilyFor(id);
  return cfd == nullptr ? nullptr : cfd->user_comparator();
}

ColumnFamilyData* ColumnFamilySet::LiveFamilyFor(uint32_t id) const {
  const Snapshot* view = writers_view_.load(std::memory_order_acquire);
  auto it = view->find(id);
  if (it == view->end() || it->second->dropped()) return nullptr;
  return it->second;
}

}  // namespace shale

#include "tools/db_stress_filter.h"

#include <string>

DEFINE_bool(enable_compaction_filter, false,
            "A compaction filter removes the keys the oracle holds deleted (RocksDB's flag); "
            "no snapshots are taken and the WAL is kept");

namespace shale::stress {

// One family's filter; keys are db_stress's fixed-width decimal keys (KeyString).
class StressFilter : public CompactionFilter {
 public:
  StressFilter(StressFilterFactory* factory, uint64_t first_key)
      : factory_(factory), first_key_(first_key) {}

  Decision FilterV2(int /*level*/, const Slice& key, ValueType /*value_type*/,
                    const Slice& /*existing_value*/, std::string* /*new_value*/,
                    std::string* /*skip_until*/) const override {
    const stress::Context* ctx = factory_->ctx_;
    uint64_t k = 0;
    if (key.empty()) return Decision::kKeep;
    for (size_t i = 0; i < key.size(); i++) {
      const char c = key[i];
      if (c < '0' || c > '9') return Decision::kKeep;  // not a key this tool wrote
      k = k * 10 + static_cast<uint64_t>(c - '0');
      if (k >= ctx->keys_per_family) return Decision::kKeep;
    }
    const uint64_t oracle = first_key_ + k;
    Mutex* mu = ctx->locks->For(oracle);
    if (!mu->TryLock()) {
      factory_->busy_.fetch_add(1, std::memory_order_relaxed);
      return Decision::kKeep;
    }
    const bool absent = ctx->state->committed(oracle) == 0 && ctx->state->pending(oracle) == 0;
    mu->Unlock();
    if (!absent) return Decision::kKeep;
    factory_->removed_.fetch_add(1, std::memory_order_relaxed);
    return IsSingleDeleteKey(oracle) ? Decision::kPurge : Decision::kRemove;
  }
  const char* Name() const override { return "DbStressCompactionFilter"; }

 private:
  StressFilterFactory* const factory_;
  const uint64_t first_key_;
};

void StressFilterFactory::SetFamily(uint32_t id, size_t index) {
  MutexLock l(&mu_);
  for (auto it = index_of_.begin(); it != index_of_.end();) {
    it = it->second == index ? index_of_.erase(it) : std::next(it);
  }
  index_of_[id] = index;
}

std::unique_ptr<CompactionFilter> StressFilterFactory::CreateCompactionFilter(
    const CompactionFilter::Context& context) {
  MutexLock l(&mu_);
  auto it = index_of_.find(context.column_family_id);
  if (it == index_of_.end()) return nullptr;
  return std::make_unique<StressFilter>(this, it->second * ctx_->keys_per_family);
}

}  // namespace shale::stress

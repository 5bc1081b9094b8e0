// What the DB writes to its info LOG outside flushes and compactions: the options at open,
// and the periodic stats dump (shale.stats, then the Statistics dump when configured).
#include <cinttypes>

#include "db/db_impl.h"
#include "shale/table.h"
#include "table/table_factory.h"
#include "util/logging.h"

namespace shale {

void DBImpl::LogOptionsAtOpen() {
  Logger* log = info_log_;
  if (log == nullptr) return;
  Header(log, "shale version: %s", "0.1.0");
  Header(log, "DB path: %s", dbname_.c_str());
  const Options& o = options_;
  Header(log, "Options.error_if_exists: %d", o.error_if_exists);
  Header(log, "Options.create_if_missing: %d", o.create_if_missing);
  Header(log, "Options.paranoid_checks: %d", o.paranoid_checks);
  Header(log, "Options.max_open_files: %d", o.max_open_files);
  Header(log, "Options.use_fsync: %d", o.use_fsync);
  Header(log, "Options.use_direct_reads: %d", o.use_direct_reads);
  Header(log, "Options.use_direct_io_for_flush_and_compaction: %d",
         o.use_direct_io_for_flush_and_compaction);
  Header(log, "Options.wal_recovery_mode: %d", static_cast<int>(o.wal_recovery_mode));
  Header(log, "Options.max_background_jobs: %d", o.max_background_jobs);
  Header(log, "Options.max_background_compactions: %d", o.max_background_compactions);
  Header(log, "Options.max_background_flushes: %d", o.max_background_flushes);
  Header(log, "Options.max_subcompactions: %" PRIu32, o.max_subcompactions);
  Header(log, "Options.delayed_write_rate: %" PRIu64, o.delayed_write_rate);
  Header(log, "Options.allow_concurrent_memtable_write: %d", o.allow_concurrent_memtable_write);
  Header(log, "Options.enable_pipelined_write: %d", o.enable_pipelined_write);
  Header(log, "Options.unordered_write: %d", o.unordered_write);
  Header(log, "Options.two_write_queues: %d", o.two_write_queues);
  Header(log, "Options.enable_write_thread_adaptive_yield: %d",
         o.enable_write_thread_adaptive_yield);
  Header(log, "Options.write_thread_max_yield_usec: %" PRIu64, o.write_thread_max_yield_usec);
  Header(log, "Options.write_thread_slow_yield_usec: %" PRIu64, o.write_thread_slow_yield_usec);
  Header(log, "Options.stats_dump_period_sec: %u", o.stats_dump_period_sec);
  Header(log, "Options.statistics: %p", static_cast<void*>(o.statistics.get()));
  Header(log, "Options.comparator: %s", o.comparator->Name());
  Header(log, "Options.table_factory: %s", o.table_factory->Name());
  Header(log, "Options.write_buffer_size: %zu", o.write_buffer_size);
  Header(log, "Options.arena_block_size: %zu", o.arena_block_size);
  Header(log, "Options.memtable_huge_page_size: %zu", o.memtable_huge_page_size);
  Header(log, "Options.max_write_buffer_number: %d", o.max_write_buffer_number);
  Header(log, "Options.compression: %s", CompressionTypeToString(o.compression));
  Header(log, "Options.num_levels: %d", o.num_levels);
  Header(log, "Options.level0_file_num_compaction_trigger: %d",
         o.level0_file_num_compaction_trigger);
  Header(log, "Options.level0_slowdown_writes_trigger: %d", o.level0_slowdown_writes_trigger);
  Header(log, "Options.level0_stop_writes_trigger: %d", o.level0_stop_writes_trigger);
  Header(log, "Options.target_file_size_base: %" PRIu64, o.target_file_size_base);
  Header(log, "Options.target_file_size_multiplier: %d", o.target_file_size_multiplier);
  Header(log, "Options.max_bytes_for_level_base: %" PRIu64, o.max_bytes_for_level_base);
  Header(log, "Options.max_bytes_for_level_multiplier: %g", o.max_bytes_for_level_multiplier);
  Header(log, "Options.level_compaction_dynamic_level_bytes: %d",
         o.level_compaction_dynamic_level_bytes);
  Header(log, "Options.max_compaction_bytes: %" PRIu64, o.max_compaction_bytes);
  Header(log, "Options.soft_pending_compaction_bytes_limit: %" PRIu64,
         o.soft_pending_compaction_bytes_limit);
  Header(log, "Options.hard_pending_compaction_bytes_limit: %" PRIu64,
         o.hard_pending_compaction_bytes_limit);
  Header(log, "Options.disable_auto_compactions: %d", o.disable_auto_compactions);
  Header(log, "Options.optimize_filters_for_hits: %d", o.optimize_filters_for_hits);
  if (std::string(o.table_factory->Name()) == BlockBasedTableFactory::kClassName) {
    const BlockBasedTableOptions& t =
        static_cast<const BlockBasedTableFactory*>(o.table_factory.get())->table_options();
    Header(log, "  table_options.block_size: %zu", t.block_size);
    Header(log, "  table_options.block_restart_interval: %d", t.block_restart_interval);
    Header(log, "  table_options.no_block_cache: %d", t.no_block_cache);
    Header(log, "  table_options.block_cache capacity: %zu",
           t.block_cache != nullptr ? t.block_cache->GetCapacity() : size_t{0});
    Header(log, "  table_options.cache_index_and_filter_blocks: %d",
           t.cache_index_and_filter_blocks);
    Header(log, "  table_options.pin_l0_filter_and_index_blocks_in_cache: %d",
           t.pin_l0_filter_and_index_blocks_in_cache);
    Header(log, "  table_options.filter_policy: %s",
           t.filter_policy != nullptr ? t.filter_policy->Name() : "nullptr");
    Header(log, "  table_options.whole_key_filtering: %d", t.whole_key_filtering);
  }
}

void DBImpl::StartStatsDump() {
  if (options_.stats_dump_period_sec == 0 || info_log_ == nullptr) return;
  stats_dump_thread_ = std::thread([this] { StatsDumpLoop(); });
}

void DBImpl::StatsDumpLoop() {
  const uint64_t period = uint64_t{options_.stats_dump_period_sec} * 1000000;
  MutexLock l(&mutex_);
  uint64_t next = env_->NowMicros() + period;
  while (!shutting_down_) {
    const uint64_t now = env_->NowMicros();
    if (now < next) {
      stats_dump_cv_.TimedWaitMicros(&mutex_, next - now);
      continue;
    }
    next = now + period;
    mutex_.Unlock();  // the properties take the mutex themselves
    DumpStats();
    mutex_.Lock();
  }
}

void DBImpl::DumpStats() {
  std::string stats;
  if (!GetProperty(DefaultColumnFamily(), Properties::kStats, &stats)) return;
  SHALE_LOG_INFO(info_log_, "------- DUMPING STATS -------");
  // One LOG line per table row, so each keeps its own prefix and stays readable.
  size_t start = 0;
  while (start < stats.size()) {
    size_t end = stats.find('\n', start);
    if (end == std::string::npos) end = stats.size();
    Log(info_log_, "%s", stats.substr(start, end - start).c_str());
    start = end + 1;
  }
  if (stats_ != nullptr) {
    const std::string dump = stats_->ToString();
    start = 0;
    while (start < dump.size()) {
      size_t end = dump.find('\n', start);
      if (end == std::string::npos) end = dump.size();
      Log(info_log_, "%s", dump.substr(start, end - start).c_str());
      start = end + 1;
    }
  }
  info_log_->Flush();
}

}  // namespace shale

// db_bench's ingestexternalfile, as RocksDB 11.8.1's: --ingest_external_file_num_batches
// calls of IngestExternalFile, each of --ingest_external_file_batch_size files written with
// SstFileWriter just before, every file holding --num keys over the same key range (so the
// files of a call overlap each other and each takes a sequence number of its own). The
// files are written under <db>/ingest_tmp and moved in (move_files), so that the ingest
// path is measured rather than a copy. One operation per call; the bytes are the keys and
// values written. RocksDB's file_opening_threads, file_infos, fill_cache and prefetch
// flags are absent: shale's ingestion has none of them.
#include <gflags/gflags.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "shale/sst_file_writer.h"
#include "tools/db_bench.h"
#include "tools/db_bench_flags.h"

DEFINE_int32(ingest_external_file_batch_size, 10,
             "Number of SST files ingested per IngestExternalFile call (one batch) in the "
             "ingestexternalfile benchmark.");
DEFINE_int32(ingest_external_file_num_batches, 1,
             "Number of IngestExternalFile calls (batches) in the ingestexternalfile "
             "benchmark. Total files ingested is batch_size * num_batches; each file holds "
             "--num keys.");

namespace shale::tools {

void Benchmark::IngestExternalFiles(ThreadState* thread) {
  if (thread->tid > 0) return;  // one thread, as RocksDB runs it
  const int batch_size = std::max(1, FLAGS_ingest_external_file_batch_size);
  const int num_batches = std::max(1, FLAGS_ingest_external_file_num_batches);
  const std::string tmp_dir = FLAGS_db + "/ingest_tmp";
  Status s = options_.env->CreateDirIfMissing(tmp_dir);
  if (!s.ok()) Fail("CreateDirIfMissing", s);
  RandomGenerator gen(FLAGS_compression_ratio, static_cast<size_t>(value_size_));
  std::string key;
  int64_t bytes = 0;
  for (int b = 0; b < num_batches; b++) {
    std::vector<std::string> files;
    for (int j = 0; j < batch_size; j++) {
      files.push_back(tmp_dir + "/ingest_" + std::to_string(b) + "_" + std::to_string(j) + ".sst");
      SstFileWriter writer(EnvOptions(), options_);
      s = writer.Open(files.back());
      if (!s.ok()) Fail("SstFileWriter::Open", s);
      for (int64_t i = 0; i < num_; i++) {
        MakeKey(static_cast<uint64_t>(i), &key);
        Slice value = gen.Generate(static_cast<size_t>(value_size_));
        s = writer.Put(key, value);
        if (!s.ok()) Fail("SstFileWriter::Put", s);
        bytes += static_cast<int64_t>(key.size() + value.size());
      }
      s = writer.Finish();
      if (!s.ok()) Fail("SstFileWriter::Finish", s);
    }
    IngestExternalFileOptions ingest;
    ingest.move_files = true;
    s = db_->IngestExternalFile(files, ingest);
    if (!s.ok()) Fail("IngestExternalFile", s);
    thread->stats.FinishedOps(1, OpType::kWrite);
    for (const std::string& f : files) options_.env->DeleteFile(f).PermitUncheckedError();
  }
  thread->stats.AddBytes(bytes);
  char msg[100];
  snprintf(msg, sizeof(msg), "(%d batches x %d files, %" PRId64 " keys/file, 1 threads)",
           num_batches, batch_size, num_);
  thread->stats.AddMessage(msg);
}

}  // namespace shale::tools

#include "table/compression.h"

#include <cstring>
#include <new>

#include "table/block_buffers.h"
#include "util/coding.h"

#ifdef SHALE_HAVE_SNAPPY
#include <snappy.h>
#endif
#ifdef SHALE_HAVE_LZ4
#include <lz4.h>
#endif
#ifdef SHALE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace shale {

bool CompressionTypeSupported(CompressionType type) {
  switch (type) {
    case kNoCompression: return true;
#ifdef SHALE_HAVE_SNAPPY
    case kSnappyCompression: return true;
#endif
#ifdef SHALE_HAVE_LZ4
    case kLZ4Compression: return true;
#endif
#ifdef SHALE_HAVE_ZSTD
    case kZSTD: return true;
#endif
    default: return false;
  }
}

const char* CompressionTypeToString(CompressionType type) {
  switch (type) {
    case kNoCompression: return "NoCompression";
    case kSnappyCompression: return "Snappy";
    case kZlibCompression: return "Zlib";
    case kBZip2Compression: return "BZip2";
    case kLZ4Compression: return "LZ4";
    case kLZ4HCCompression: return "LZ4HC";
    case kXpressCompression: return "Xpress";
    case kZSTD: return "ZSTD";
    case kDisableCompressionOption: return "DisableOption";
  }
  return "Unknown";
}

namespace {

// Blocks are addressed with 32-bit offsets, so no valid block decompresses to more.
constexpr uint64_t kMaxUncompressedSize = uint64_t{1} << 32;

// new[] that reports failure instead of throwing: a corrupt length must not abort.
std::unique_ptr<char[]> TryAllocate(size_t n) {
  return std::unique_ptr<char[]>(new (std::nothrow) char[n == 0 ? 1 : n]);
}

[[maybe_unused]] bool ReadLengthPrefix(Slice* input, uint32_t* len) {
  return GetVarint32(input, len);
}

#ifdef SHALE_HAVE_ZSTD
// The calling thread's zstd decompression context, made at its first use and freed when
// the thread ends; null if zstd could not allocate one.
ZSTD_DCtx* ThreadZstdDCtx() {
  struct Freer {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  thread_local std::unique_ptr<ZSTD_DCtx, Freer> dctx(ZSTD_createDCtx());
  return dctx.get();
}
#endif

// Where snappy and lz4 write a block of up to kStagedBytes: a per-thread buffer, copied
// to the block's own buffer after. The block's buffer is mostly cold (a recycled evicted
// block, or fresh memory), and a decompressor's many short copies into cold memory each
// wait for their lines to load. Into the staging buffer, which stays in the CPU cache,
// they do not; the one long copy after streams the block's lines in together. With
// db_bench's blocks (4 KiB, half-compressible values) snappy into a cold buffer took about
// 950 ns and staged about 550 ns with the copy; at 16 KiB 2.2 us against 1.5 us; at
// 64 KiB staging gained nothing, hence the limit. zstd is slower per byte, so its writes
// wait less on the cold buffer than the extra copy costs: it writes in place.
constexpr size_t kStagedBytes = size_t{32} << 10;

class OutputStage {
 public:
  // dst: the block's n bytes of output.
  OutputStage(char* dst, size_t n) : dst_(dst), n_(n), target_(dst) {
    if (n > kStagedBytes) return;
    thread_local std::unique_ptr<char[]> staging(new (std::nothrow) char[kStagedBytes]);
    if (staging != nullptr) target_ = staging.get();
  }
  // Where the decompressor writes.
  char* target() const { return target_; }
  // After a successful decompression: the output into place.
  void Finish() const {
    if (target_ != dst_) memcpy(dst_, target_, n_);
  }

 private:
  char* const dst_;
  const size_t n_;
  char* target_;
};

Status Bad(CompressionType type, const char* what) {
  return Status::Corruption(
      std::string("bad ") + CompressionTypeToString(type) + " compressed block", what);
}

}  // namespace

struct BlockCompressor::LibraryState {
#ifdef SHALE_HAVE_ZSTD
  ZSTD_CCtx* zstd = nullptr;
#endif
  ~LibraryState() {
#ifdef SHALE_HAVE_ZSTD
    ZSTD_freeCCtx(zstd);  // accepts null
#endif
  }
};

BlockCompressor::BlockCompressor(CompressionType type) : type_(type) {}
BlockCompressor::~BlockCompressor() = default;

char* BlockCompressor::Reserve(size_t n) {
  if (capacity_ < n) {
    buffer_ = std::make_unique_for_overwrite<char[]>(n);
    capacity_ = n;
  }
  return buffer_.get();
}

bool BlockCompressor::Compress(const Slice& input, Slice* output) {
  switch (type_) {
#ifdef SHALE_HAVE_SNAPPY
    case kSnappyCompression: {
      char* out = Reserve(snappy::MaxCompressedLength(input.size()));
      size_t n = 0;
      snappy::RawCompress(input.data(), input.size(), out, &n);
      *output = Slice(out, n);
      return true;
    }
#endif
#ifdef SHALE_HAVE_LZ4
    case kLZ4Compression: {
      if (input.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return false;
      const int bound = LZ4_compressBound(static_cast<int>(input.size()));
      char* out = Reserve(kMaxVarint32Length + static_cast<size_t>(bound));
      char* body = EncodeVarint32(out, static_cast<uint32_t>(input.size()));
      // LZ4_compress_default clears a 16 KiB table per call, yet on 4 KiB blocks it measured
      // 1.5x to 1.9x faster than a stream kept and reset with LZ4_resetStream_fast.
      const int n = LZ4_compress_default(input.data(), body, static_cast<int>(input.size()), bound);
      if (n <= 0) return false;
      *output = Slice(out, static_cast<size_t>(body - out) + static_cast<size_t>(n));
      return true;
    }
#endif
#ifdef SHALE_HAVE_ZSTD
    case kZSTD: {
      if (input.size() >= kMaxUncompressedSize) return false;
      if (state_ == nullptr) state_ = std::make_unique<LibraryState>();
      if (state_->zstd == nullptr) {
        state_->zstd = ZSTD_createCCtx();
        if (state_->zstd == nullptr) return false;
      }
      const size_t bound = ZSTD_compressBound(input.size());
      char* out = Reserve(kMaxVarint32Length + bound);
      char* body = EncodeVarint32(out, static_cast<uint32_t>(input.size()));
      // Level 3 is zstd's default and RocksDB's.
      const size_t n = ZSTD_compressCCtx(state_->zstd, body, bound, input.data(), input.size(), 3);
      if (ZSTD_isError(n)) return false;
      *output = Slice(out, static_cast<size_t>(body - out) + n);
      return true;
    }
#endif
    default: return false;
  }
}

bool CompressBlock(CompressionType type, const Slice& input, std::string* output) {
  output->clear();
  BlockCompressor compressor(type);
  Slice compressed;
  if (!compressor.Compress(input, &compressed)) return false;
  output->assign(compressed.data(), compressed.size());
  return true;
}

Status DecompressBlock(CompressionType type, const Slice& input, std::unique_ptr<char[]>* out,
                       size_t* out_size, size_t headroom, size_t* out_capacity) {
  // The output buffer: from the thread's recycled block buffers when the caller takes
  // their capacity, else new[] (a corrupt length must not abort either way).
  size_t capacity = 0;
  [[maybe_unused]] auto allocate = [&](size_t n) {
    if (out_capacity == nullptr) return TryAllocate(n);
    BlockBuffer b = AllocateBlockBuffer(n);
    capacity = b.capacity;
    return std::move(b.bytes);
  };
  [[maybe_unused]] auto done = [&](std::unique_ptr<char[]> buf, size_t n) {
    *out = std::move(buf);
    *out_size = n;
    if (out_capacity != nullptr) *out_capacity = capacity;
    return Status::OK();
  };
  switch (type) {
#ifdef SHALE_HAVE_SNAPPY
    case kSnappyCompression: {
      size_t n = 0;
      if (!snappy::GetUncompressedLength(input.data(), input.size(), &n)) {
        return Bad(type, "unreadable length");
      }
      // A snappy element of k input bytes yields at most 64 output bytes (a copy with a
      // 2-byte offset takes 3 bytes): a claim beyond 22-fold is damage, refused before
      // allocating for it.
      if (n > kMaxUncompressedSize || n > static_cast<uint64_t>(input.size()) * 22 + 64) {
        return Bad(type, "length too large");
      }
      auto buf = allocate(headroom + n);
      if (buf == nullptr) return Bad(type, "cannot allocate the claimed length");
      const OutputStage stage(buf.get() + headroom, n);
      if (!snappy::RawUncompress(input.data(), input.size(), stage.target())) {
        return Bad(type, "malformed data");
      }
      stage.Finish();
      return done(std::move(buf), n);
    }
#endif
#ifdef SHALE_HAVE_LZ4
    case kLZ4Compression: {
      Slice in = input;
      uint32_t n = 0;
      if (!ReadLengthPrefix(&in, &n)) return Bad(type, "unreadable length");
      // LZ4 expands at most 255-fold (a match length grows by 255 per input byte): a larger
      // claim is damage, refused before allocating for it.
      if (n > static_cast<uint32_t>(LZ4_MAX_INPUT_SIZE) ||
          in.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE) ||
          static_cast<uint64_t>(n) > static_cast<uint64_t>(in.size()) * 255 + 64) {
        return Bad(type, "length too large");
      }
      auto buf = allocate(headroom + n);
      if (buf == nullptr) return Bad(type, "cannot allocate the claimed length");
      const OutputStage stage(buf.get() + headroom, n);
      const int got = LZ4_decompress_safe(in.data(), stage.target(), static_cast<int>(in.size()),
                                          static_cast<int>(n));
      if (got < 0 || static_cast<uint32_t>(got) != n) return Bad(type, "malformed data");
      stage.Finish();
      return done(std::move(buf), n);
    }
#endif
#ifdef SHALE_HAVE_ZSTD
    case kZSTD: {
      Slice in = input;
      uint32_t n = 0;
      if (!ReadLengthPrefix(&in, &n)) return Bad(type, "unreadable length");
      // The frame header records the size too; the two must agree before allocating.
      if (ZSTD_getFrameContentSize(in.data(), in.size()) != n) {
        return Bad(type, "length disagrees with the frame header");
      }
      // The densest zstd block is an RLE block: 4 bytes for at most 128 KiB.
      if (static_cast<uint64_t>(n) > static_cast<uint64_t>(in.size()) * 32768 + 65536) {
        return Bad(type, "length too large");
      }
      auto buf = allocate(headroom + n);
      if (buf == nullptr) return Bad(type, "cannot allocate the claimed length");
      // One decompression context per thread, kept: ZSTD_decompress makes one per call,
      // which cost about as much as decompressing a 4 KiB block.
      ZSTD_DCtx* dctx = ThreadZstdDCtx();
      // Straight into the block's buffer, not through OutputStage: on 8 KiB blocks the
      // staging copy cost more than the cold writes it saves (CPU per Get -3%).
      char* const dst = buf.get() + headroom;
      const size_t got = dctx != nullptr ? ZSTD_decompressDCtx(dctx, dst, n, in.data(), in.size())
                                         : ZSTD_decompress(dst, n, in.data(), in.size());
      if (ZSTD_isError(got) || got != n) return Bad(type, "malformed data");
      return done(std::move(buf), n);
    }
#endif
    default:
      return Status::NotSupported(std::string("compression type not supported by this build: ") +
                                  CompressionTypeToString(type));
  }
}

}  // namespace shale

#include "worker/block_verify.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "job/data_pattern.h"

namespace iofleet {
namespace {

using v1::JobSpec;

constexpr uint32_t kMagic = 0x10f1ee75;

struct Header {
  uint32_t magic;
  uint32_t kind;
  uint64_t offset;
  uint64_t length;
  uint64_t generation;
  uint64_t seed;
  uint64_t write_number;
  uint32_t job;
  uint32_t worker;
  uint32_t thread;
  uint32_t reserved;
  uint8_t checksum[16];
};
static_assert(sizeof(Header) == kVerifyHeaderSize);

// A table-driven reflected CRC (the right-shifting form, as zlib's crc32 and CRC-64/XZ).
template <typename T, T kPolynomial>
const std::array<T, 256>& ReflectedTable() {
  static const std::array<T, 256> table = [] {
    std::array<T, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      T c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

template <typename T, T kPolynomial>
T ReflectedCrc(const void* data, size_t length, T crc) {
  const auto& table = ReflectedTable<T, kPolynomial>();
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < length; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = __builtin_ia32_crc32qi(c32, *p);
  return c32;
}

uint8_t Crc7Update(uint8_t crc, const void* data, size_t length);

const EVP_MD* OpensslDigest(JobSpec::Verify kind) {
  switch (kind) {
    case JobSpec::VERIFY_MD5: return EVP_md5();
    case JobSpec::VERIFY_SHA1: return EVP_sha1();
    case JobSpec::VERIFY_SHA256: return EVP_sha256();
    case JobSpec::VERIFY_SHA512: return EVP_sha512();
    case JobSpec::VERIFY_SHA3_224: return EVP_sha3_224();
    case JobSpec::VERIFY_SHA3_256: return EVP_sha3_256();
    case JobSpec::VERIFY_SHA3_384: return EVP_sha3_384();
    case JobSpec::VERIFY_SHA3_512: return EVP_sha3_512();
    default: return nullptr;
  }
}

// The bytes of the stored checksum that mean something (the rest are zero).
size_t ChecksumBytes(JobSpec::Verify kind) {
  switch (kind) {
    case JobSpec::VERIFY_CRC64: return 8;
    case JobSpec::VERIFY_CRC16: return 2;
    case JobSpec::VERIFY_CRC7: return 1;
    case JobSpec::VERIFY_CRC32C:
    case JobSpec::VERIFY_CRC32:
    case JobSpec::VERIFY_XXHASH:
    case JobSpec::VERIFY_META:
    case JobSpec::VERIFY_PATTERN: return 4;
    default: return 16;  // md5; longer digests are stored cut to their first 16 bytes
  }
}

// The checksum of a unit: of its header up to the checksum field, and for the data kinds of
// its data too (meta and pattern: the header alone, as fio's header crc).
void Checksum(JobSpec::Verify kind, const char* unit, uint64_t length, uint8_t out[16]) {
  std::memset(out, 0, 16);
  const size_t covered_header = offsetof(Header, checksum);
  const bool header_only = kind == JobSpec::VERIFY_META || kind == JobSpec::VERIFY_PATTERN;
  const char* data = unit + kVerifyHeaderSize;
  const uint64_t data_length = header_only ? 0 : length - kVerifyHeaderSize;
  if (const EVP_MD* md = OpensslDigest(kind)) {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, md, nullptr);
    EVP_DigestUpdate(ctx, unit, covered_header);
    EVP_DigestUpdate(ctx, data, data_length);
    uint8_t digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx, digest, &n);
    EVP_MD_CTX_free(ctx);
    std::memcpy(out, digest, std::min<size_t>(16, n));
    return;
  }
  // The checksums that only come in one piece: over a copy of the header joined to the data
  // would cost a copy of the block, so the header's checksum seeds the data's where the
  // algorithm allows, and is combined with it otherwise.
  switch (kind) {
    case JobSpec::VERIFY_CRC64: {
      uint64_t c = ~ReflectedCrc<uint64_t, 0xC96C5795D7870F42ull>(unit, covered_header, ~0ull);
      c = ~ReflectedCrc<uint64_t, 0xC96C5795D7870F42ull>(data, data_length, ~c);
      std::memcpy(out, &c, sizeof(c));
      return;
    }
    case JobSpec::VERIFY_CRC32: {
      uint32_t c = ~ReflectedCrc<uint32_t, 0xEDB88320u>(unit, covered_header, ~0u);
      c = ~ReflectedCrc<uint32_t, 0xEDB88320u>(data, data_length, ~c);
      std::memcpy(out, &c, sizeof(c));
      return;
    }
    case JobSpec::VERIFY_CRC16: {
      uint16_t c = ReflectedCrc<uint16_t, 0xA001>(unit, covered_header, 0);
      c = ReflectedCrc<uint16_t, 0xA001>(data, data_length, c);
      std::memcpy(out, &c, sizeof(c));
      return;
    }
    case JobSpec::VERIFY_CRC7: {
      out[0] = Crc7Update(Crc7Update(0, unit, covered_header), data, data_length) >> 1;
      return;
    }
    case JobSpec::VERIFY_XXHASH: {
      const uint32_t c = XxHash32(data, data_length, XxHash32(unit, covered_header));
      std::memcpy(out, &c, sizeof(c));
      return;
    }
    default: {  // crc32c, meta, pattern
      uint32_t c = Crc32c(unit, covered_header);
      c = Crc32c(data, data_length, c);
      std::memcpy(out, &c, sizeof(c));
      return;
    }
  }
}

constexpr uint64_t kSectorSize = 512;

// The second stamp word mixes in the seed so equal write numbers of different threads still
// give distinct sectors (deduplicating storage cannot fold them).
uint64_t SectorTag(uint64_t write_number, uint64_t seed) { return write_number ^ seed; }

// Writes (offset of the sector, the writer's tag) into the first 16 bytes of every 512-byte
// sector after the header, so each sector says which write it belongs to.
void StampSectors(char* unit, uint64_t length, uint64_t offset, const BlockWriter& writer) {
  for (uint64_t b = kVerifyHeaderSize; b + 16 <= length; b += kSectorSize) {
    const uint64_t words[2] = {offset + b, SectorTag(writer.write_number, writer.seed)};
    std::memcpy(unit + b, words, sizeof(words));
  }
}

std::string DescribeWriter(const Header& h) {
  return absl::StrFormat("written by job %u, worker %u, thread %u (seed %#x), generation %u, write %u", h.job, h.worker,
                         h.thread, h.seed, h.generation, h.write_number);
}

std::string Hex(const uint8_t* bytes, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) absl::StrAppendFormat(&out, "%02x", bytes[i]);
  return out;
}

// Calls `unit(start, length)` for each verify unit of a block; a last piece shorter than a
// unit joins the one before it.
template <typename F>
void ForEachUnit(const VerifyFormat& format, uint64_t length, F&& unit) {
  const uint64_t step = format.interval > 0 && format.interval < length ? format.interval : length;
  for (uint64_t start = 0; start < length; start += step) {
    const uint64_t n = length - start < 2 * step ? length - start : step;
    if (!unit(start, n)) return;
    if (n != step) return;
  }
}

absl::Status CheckUnit(const VerifyFormat& format, const char* unit, uint64_t length, uint64_t offset, int64_t generation,
                       const BlockWriter* writer, const std::string& where) {
  const uint64_t data_start = format.has_header() ? kVerifyHeaderSize : 0;
  if (format.has_header()) {
    Header header;
    std::memcpy(&header, unit, sizeof(header));
    if (header.magic != kMagic) {
      return absl::DataLossError(absl::StrCat(where, absl::StrFormat("no verify header (magic %08x, expected %08x): the block was never written by a verify job, or was overwritten", header.magic, kMagic)));
    }
    if (header.offset != offset || header.length != length) {
      return absl::DataLossError(absl::StrCat(where, "found the block written for offset ", header.offset, " (", header.length,
                                              " bytes), ", DescribeWriter(header), ": misplaced data"));
    }
    // A sector stamped for this offset by a different write means the block holds parts of
    // two writes (a torn write, or a cache that kept old sectors): checked before the
    // generation, so a half-old block is called torn, not stale.
    if (format.pattern == nullptr) {
      const uint64_t own_tag = SectorTag(header.write_number, header.seed);
      for (uint64_t b = kVerifyHeaderSize; b + 16 <= length; b += kSectorSize) {
        uint64_t words[2];
        std::memcpy(words, unit + b, sizeof(words));
        if (words[0] == offset + b && words[1] != own_tag) {
          return absl::DataLossError(absl::StrCat(
              where, "the header says ", DescribeWriter(header), ", but the sector at offset ", offset + (b & ~(kSectorSize - 1)),
              " was written by another write: torn block"));
        }
      }
    }
    if (writer != nullptr && (header.job != writer->job || header.worker != writer->worker || header.thread != writer->thread ||
                              header.seed != writer->seed)) {
      return absl::DataLossError(absl::StrCat(where, "found the block ", DescribeWriter(header), ", not by this thread (job ", writer->job,
                                              ", worker ", writer->worker, ", thread ", writer->thread, "): overwritten by another writer"));
    }
    if (generation >= 0 && header.generation != static_cast<uint64_t>(generation)) {
      return absl::DataLossError(absl::StrCat(where, "found generation ", header.generation, ", expected ", generation, " (",
                                              DescribeWriter(header), "): stale data"));
    }
    if (writer != nullptr && header.write_number != writer->write_number) {
      return absl::DataLossError(absl::StrCat(where, "found write ", header.write_number, " of this thread, expected its last one here, write ",
                                              writer->write_number, " (", DescribeWriter(header), "): stale data"));
    }
    const auto kind = static_cast<JobSpec::Verify>(header.kind);
    if (kind != format.kind) {
      return absl::DataLossError(absl::StrCat(where, "the block was written with verify=",
                                              JobSpec::Verify_IsValid(kind) ? VerifyKindName(kind) : "?", " (", DescribeWriter(header), ")"));
    }
    uint8_t expected[16];
    Checksum(format.kind, unit, length, expected);
    if (std::memcmp(expected, header.checksum, sizeof(expected)) != 0) {
      const size_t n = ChecksumBytes(format.kind);
      const bool header_only = format.kind == JobSpec::VERIFY_META || format.kind == JobSpec::VERIFY_PATTERN;
      return absl::DataLossError(absl::StrCat(where, header_only ? "header checksum " : "checksum ", Hex(header.checksum, n), " stored, ",
                                              Hex(expected, n), " computed (", DescribeWriter(header),
                                              header_only ? "): the header is corrupted" : "): the data is corrupted"));
    }
  }
  if (format.pattern != nullptr) {
    const std::optional<uint64_t> bad =
        FirstPatternMismatch(*format.pattern, unit + data_start, length - data_start, data_start, offset);
    if (bad) {
      const uint64_t at = data_start + *bad;
      std::string expected(at + 1, '\0');
      FillWithPattern(*format.pattern, expected.data(), expected.size(), offset);
      const char wanted = expected[at];
      return absl::DataLossError(absl::StrCat(where, absl::StrFormat("byte %u of the block (file offset %u) is %02x, the pattern has %02x: the data is not the pattern",
                                                                     at, offset + at, static_cast<uint8_t>(unit[at]), static_cast<uint8_t>(wanted))));
    }
  }
  return absl::OkStatus();
}

}  // namespace

VerifyFormat VerifyFormat::Of(const v1::JobSpec& job) {
  VerifyFormat format;
  format.kind = job.verify();
  format.interval = job.verify_interval();
  if (job.has_verify_pattern()) format.pattern = &job.verify_pattern();
  format.stamp_sectors = !job.zero_buffers() && !job.has_buffer_pattern();
  return format;
}

const char* VerifyKindName(JobSpec::Verify kind) {
  switch (kind) {
    case JobSpec::VERIFY_NONE: return "none";
    case JobSpec::VERIFY_CRC32C: return "crc32c";
    case JobSpec::VERIFY_MD5: return "md5";
    case JobSpec::VERIFY_CRC64: return "crc64";
    case JobSpec::VERIFY_CRC32: return "crc32";
    case JobSpec::VERIFY_CRC16: return "crc16";
    case JobSpec::VERIFY_CRC7: return "crc7";
    case JobSpec::VERIFY_SHA1: return "sha1";
    case JobSpec::VERIFY_SHA256: return "sha256";
    case JobSpec::VERIFY_SHA512: return "sha512";
    case JobSpec::VERIFY_SHA3_224: return "sha3-224";
    case JobSpec::VERIFY_SHA3_256: return "sha3-256";
    case JobSpec::VERIFY_SHA3_384: return "sha3-384";
    case JobSpec::VERIFY_SHA3_512: return "sha3-512";
    case JobSpec::VERIFY_XXHASH: return "xxhash";
    case JobSpec::VERIFY_META: return "meta";
    case JobSpec::VERIFY_PATTERN: return "pattern (with header)";
    case JobSpec::VERIFY_PATTERN_NO_HEADER: return "pattern";
    default: return "?";
  }
}

uint32_t Crc32c(const void* data, size_t length, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  if (__builtin_cpu_supports("sse4.2")) {
    crc = Crc32cHardware(p, length, crc);
  } else {
    crc = ReflectedCrc<uint32_t, 0x82F63B78u>(p, length, crc);
  }
  return ~crc;
}

uint64_t Crc64(const void* data, size_t length) { return ~ReflectedCrc<uint64_t, 0xC96C5795D7870F42ull>(data, length, ~0ull); }
uint32_t Crc32(const void* data, size_t length) { return ~ReflectedCrc<uint32_t, 0xEDB88320u>(data, length, ~0u); }
uint16_t Crc16(const void* data, size_t length) { return ReflectedCrc<uint16_t, 0xA001>(data, length, 0); }

uint8_t Crc7(const void* data, size_t length) { return Crc7Update(0, data, length) >> 1; }

namespace {

// CRC-7/MMC (x^7 + x^3 + 1), kept in the top 7 bits of a byte (`crc` and the result).
uint8_t Crc7Update(uint8_t crc, const void* data, size_t length) {
  static const std::array<uint8_t, 256> table = [] {
    std::array<uint8_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint8_t c = static_cast<uint8_t>(i);
      for (int k = 0; k < 8; ++k) c = (c & 0x80) ? static_cast<uint8_t>((c << 1) ^ (0x09 << 1)) : static_cast<uint8_t>(c << 1);
      t[i] = c;
    }
    return t;
  }();
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < length; ++i) crc = table[crc ^ p[i]];
  return crc;
}

}  // namespace

uint32_t XxHash32(const void* data, size_t length, uint32_t seed) {
  constexpr uint32_t kP1 = 2654435761u, kP2 = 2246822519u, kP3 = 3266489917u, kP4 = 668265263u, kP5 = 374761393u;
  auto rotl = [](uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  auto read32 = [](const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  };
  const auto* p = static_cast<const uint8_t*>(data);
  const uint8_t* const end = p + length;
  uint32_t h;
  if (length >= 16) {
    uint32_t v[4] = {seed + kP1 + kP2, seed + kP2, seed, seed - kP1};
    for (; p + 16 <= end; p += 16) {
      for (int i = 0; i < 4; ++i) v[i] = rotl(v[i] + read32(p + 4 * i) * kP2, 13) * kP1;
    }
    h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
  } else {
    h = seed + kP5;
  }
  h += static_cast<uint32_t>(length);
  for (; p + 4 <= end; p += 4) h = rotl(h + read32(p) * kP3, 17) * kP4;
  for (; p < end; ++p) h = rotl(h + *p * kP5, 11) * kP1;
  h ^= h >> 15;
  h *= kP2;
  h ^= h >> 13;
  h *= kP3;
  h ^= h >> 16;
  return h;
}

void SealBlock(const VerifyFormat& format, char* block, uint64_t length, uint64_t offset, const BlockWriter& writer) {
  ForEachUnit(format, length, [&](uint64_t start, uint64_t n) {
    char* unit = block + start;
    const uint64_t unit_offset = offset + start;
    if (format.pattern != nullptr) {
      FillWithPattern(*format.pattern, unit, n, unit_offset);
    } else if (format.stamp_sectors) {
      StampSectors(unit, n, unit_offset, writer);
    }
    if (format.has_header()) {
      Header header{kMagic,      static_cast<uint32_t>(format.kind), unit_offset,   n,             writer.generation,
                    writer.seed, writer.write_number,                writer.job,    writer.worker, writer.thread,
                    0,           {}};
      std::memcpy(unit, &header, sizeof(header));
      Checksum(format.kind, unit, n, header.checksum);
      std::memcpy(unit + offsetof(Header, checksum), header.checksum, sizeof(header.checksum));
    }
    return true;
  });
}

std::optional<std::string> ExpectedBlock(const VerifyFormat& format, const char* read, uint64_t length, uint64_t offset) {
  if (format.pattern == nullptr) return std::nullopt;
  std::string expected(length, '\0');
  ForEachUnit(format, length, [&](uint64_t start, uint64_t n) {
    FillWithPattern(*format.pattern, expected.data() + start, n, offset + start);
    if (format.has_header()) std::memcpy(expected.data() + start, read + start, std::min<uint64_t>(n, kVerifyHeaderSize));
    return true;
  });
  return expected;
}

absl::Status CheckBlock(const VerifyFormat& format, const char* block, uint64_t length, uint64_t offset, int64_t generation,
                        const std::string& path, const BlockWriter* writer) {
  absl::Status status;
  ForEachUnit(format, length, [&](uint64_t start, uint64_t n) {
    const std::string where = absl::StrCat("verify (", VerifyKindName(format.kind), ") of ", n, " bytes at offset ", offset + start,
                                           " in ", path, ": ");
    status = CheckUnit(format, block + start, n, offset + start, generation, writer, where);
    return status.ok();
  });
  return status;
}

}  // namespace iofleet

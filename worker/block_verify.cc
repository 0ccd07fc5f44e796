#include "worker/block_verify.h"

#include <openssl/evp.h>

#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iofleet {
namespace {

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

const std::array<uint32_t, 256>& Crc32cTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
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

// The checksum of everything in the block but the checksum field itself.
void Checksum(v1::JobSpec::Verify kind, const char* block, uint64_t length, uint8_t out[16]) {
  std::memset(out, 0, 16);
  const size_t covered_header = offsetof(Header, checksum);
  if (kind == v1::JobSpec::VERIFY_CRC32C) {
    uint32_t crc = Crc32c(block, covered_header);
    crc = Crc32c(block + kVerifyHeaderSize, length - kVerifyHeaderSize, crc);
    std::memcpy(out, &crc, sizeof(crc));
  } else {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_md5(), nullptr);
    EVP_DigestUpdate(ctx, block, covered_header);
    EVP_DigestUpdate(ctx, block + kVerifyHeaderSize, length - kVerifyHeaderSize);
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx, out, &n);
    EVP_MD_CTX_free(ctx);
  }
}

constexpr uint64_t kSectorSize = 512;

// The second stamp word mixes in the seed so equal write numbers of different threads still
// give distinct sectors (deduplicating storage cannot fold them).
uint64_t SectorTag(uint64_t write_number, uint64_t seed) { return write_number ^ seed; }

std::string DescribeWriter(const Header& h) {
  return absl::StrFormat("written by job %u, worker %u, thread %u (seed %#x), generation %u, write %u", h.job, h.worker,
                         h.thread, h.seed, h.generation, h.write_number);
}

std::string Hex(const uint8_t* bytes, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) absl::StrAppendFormat(&out, "%02x", bytes[i]);
  return out;
}

}  // namespace

uint32_t Crc32c(const void* data, size_t length, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  if (__builtin_cpu_supports("sse4.2")) {
    crc = Crc32cHardware(p, length, crc);
  } else {
    const auto& table = Crc32cTable();
    for (size_t i = 0; i < length; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  }
  return ~crc;
}

void StampSectors(char* block, uint64_t length, uint64_t offset, const BlockWriter& writer) {
  for (uint64_t b = kVerifyHeaderSize; b + 16 <= length; b += kSectorSize) {
    const uint64_t words[2] = {offset + b, SectorTag(writer.write_number, writer.seed)};
    std::memcpy(block + b, words, sizeof(words));
  }
}

void SealBlock(v1::JobSpec::Verify kind, char* block, uint64_t length, uint64_t offset, const BlockWriter& writer) {
  Header header{kMagic,      static_cast<uint32_t>(kind), offset,        length,         writer.generation,
                writer.seed, writer.write_number,         writer.job,    writer.worker,  writer.thread,
                0,           {}};
  std::memcpy(block, &header, sizeof(header));
  Checksum(kind, block, length, header.checksum);
  std::memcpy(block + offsetof(Header, checksum), header.checksum, sizeof(header.checksum));
}

absl::Status CheckBlock(v1::JobSpec::Verify kind, const char* block, uint64_t length, uint64_t offset,
                        int64_t generation, const std::string& path) {
  Header header;
  std::memcpy(&header, block, sizeof(header));
  const std::string where = absl::StrCat("verify (", kind == v1::JobSpec::VERIFY_MD5 ? "md5" : "crc32c", ") of ", length,
                                         " bytes at offset ", offset, " in ", path, ": ");
  if (header.magic != kMagic) {
    return absl::DataLossError(absl::StrCat(where, absl::StrFormat("no verify header (magic %08x, expected %08x): the block was never written by a verify job, or was overwritten", header.magic, kMagic)));
  }
  if (header.offset != offset || header.length != length) {
    return absl::DataLossError(absl::StrCat(where, "found the block written for offset ", header.offset, " (", header.length,
                                            " bytes), ", DescribeWriter(header), ": misplaced data"));
  }
  // A sector stamped for this offset by a different write means the block holds parts of two
  // writes (a torn write, or a cache that kept old sectors): checked before the generation, so
  // a half-old block is called torn, not stale.
  const uint64_t own_tag = SectorTag(header.write_number, header.seed);
  for (uint64_t b = kVerifyHeaderSize; b + 16 <= length; b += kSectorSize) {
    uint64_t words[2];
    std::memcpy(words, block + b, sizeof(words));
    if (words[0] == offset + b && words[1] != own_tag) {
      return absl::DataLossError(absl::StrCat(
          where, "the header says ", DescribeWriter(header), ", but the sector at offset ", offset + (b & ~(kSectorSize - 1)),
          " was written by another write: torn block"));
    }
  }
  if (generation >= 0 && header.generation != static_cast<uint64_t>(generation)) {
    return absl::DataLossError(absl::StrCat(where, "found generation ", header.generation, ", expected ", generation, " (",
                                            DescribeWriter(header), "): stale data"));
  }
  uint8_t expected[16];
  Checksum(kind, block, length, expected);
  if (std::memcmp(expected, header.checksum, sizeof(expected)) != 0) {
    const size_t n = kind == v1::JobSpec::VERIFY_MD5 ? 16 : 4;
    return absl::DataLossError(absl::StrCat(where, "checksum ", Hex(header.checksum, n), " stored, ", Hex(expected, n),
                                            " computed (", DescribeWriter(header), "): the data is corrupted"));
  }
  return absl::OkStatus();
}

}  // namespace iofleet

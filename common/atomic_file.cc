#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/write_all.h"

namespace iofleet {
namespace {

// Direct IO's unit: buffer address, file offset and length are multiples of it (4 KiB covers
// every logical block size Linux file systems use).
constexpr size_t kDirectAlign = 4096;
// The bounce buffer the text goes through (aligned, and warm after its first use).
constexpr size_t kDirectChunk = 4 << 20;

// `text` into `temporary` with O_DIRECT: the whole blocks through an aligned buffer, the tail
// (under a block) buffered. Not OK (why not is not kept): the file system refused direct IO,
// and the caller writes the file the usual way, which says.
bool WriteDirect(const std::string& temporary, const std::string& text) {
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0666);
  if (fd < 0) return false;
  std::unique_ptr<char, decltype(&std::free)> bounce(static_cast<char*>(std::aligned_alloc(kDirectAlign, kDirectChunk)), &std::free);
  bool ok = bounce != nullptr;
  const size_t whole = text.size() / kDirectAlign * kDirectAlign;
  for (size_t done = 0; ok && done < whole;) {
    const size_t n = std::min(kDirectChunk, whole - done);
    std::memcpy(bounce.get(), text.data() + done, n);
    ok = WriteAll(fd, absl::string_view(bounce.get(), n)) == 0;
    done += n;
  }
  if (ok && whole < text.size()) {
    const int flags = ::fcntl(fd, F_GETFL);
    ok = flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_DIRECT) == 0 &&
         WriteAll(fd, absl::string_view(text).substr(whole)) == 0;
  }
  ok = ::close(fd) == 0 && ok;
  if (!ok) ::unlink(temporary.c_str());
  return ok;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = absl::StrCat(path, ".tmp-", ::getpid());
  if (text.size() < kDirectAtLeast || !WriteDirect(temporary, text)) {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      ::unlink(temporary.c_str());
      return absl::UnavailableError(absl::StrCat("cannot write ", temporary));
    }
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    return absl::ErrnoToStatus(err, absl::StrCat("rename to ", path));
  }
  return absl::OkStatus();
}

}  // namespace iofleet

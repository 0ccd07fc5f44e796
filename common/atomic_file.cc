#include "common/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace iofleet {

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = absl::StrCat(path, ".tmp-", ::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", temporary));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    return absl::ErrnoToStatus(err, absl::StrCat("rename to ", path));
  }
  return absl::OkStatus();
}

}  // namespace iofleet

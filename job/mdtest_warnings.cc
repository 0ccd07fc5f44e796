#include "job/mdtest_warnings.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iofleet {

using Op = v1::MetadataPhase;

bool MdtestWarnsAndGoesOn(Op::Op op) {
  switch (op) {
    case Op::TREE_CREATE:
    case Op::TREE_REMOVE:
    case Op::DIR_CREATE:
    case Op::DIR_STAT:
    case Op::DIR_RENAME:
    case Op::DIR_REMOVE:
    case Op::FILE_STAT:
    case Op::FILE_REMOVE: return true;
    default: return false;
  }
}

std::string MdtestRecursionPath(const std::string& path, uint32_t level) {
  // The last `level` separators (not one at the path's start), found from the end, then the
  // path written again with each of them twice.
  std::vector<size_t> doubled;
  for (size_t at = path.size(); doubled.size() < level && at > 0;) {
    at = path.rfind('/', at - 1);
    if (at == std::string::npos || at == 0) break;
    doubled.push_back(at);
  }
  std::string named;
  named.reserve(path.size() + doubled.size());
  size_t from = 0;
  for (auto it = doubled.rbegin(); it != doubled.rend(); ++it) {
    named.append(path, from, *it - from).push_back('/');
    from = *it;
  }
  named.append(path, from, std::string::npos);
  return named;
}

std::string MdtestWarning(Op::Op op, uint32_t rank, const std::string& item_path, const std::string& other, bool top, uint32_t level) {
  const bool made_or_removed = op == Op::DIR_CREATE || op == Op::DIR_REMOVE || op == Op::FILE_REMOVE;
  const std::string path = made_or_removed ? MdtestRecursionPath(item_path, level) : item_path;
  switch (op) {
    case Op::TREE_CREATE:
      return top ? absl::StrCat("unable to create tree directory '", path, "/'") : absl::StrCat("Unable to create directory ", path, "/");
    case Op::TREE_REMOVE: return absl::StrCat("Unable to remove directory ", path, "/");
    case Op::DIR_CREATE: return absl::StrCat("unable to create directory ", path);
    case Op::DIR_REMOVE: return absl::StrCat("unable to remove directory ", path);
    case Op::DIR_STAT: return absl::StrCat("unable to stat directory ", path);
    case Op::FILE_STAT: return absl::StrCat("unable to stat file ", path);
    case Op::DIR_RENAME:
      return absl::StrFormat("[RANK %03d]: rename() of file \"%s\" to  \"%s\" failed\nunable to rename directory %s", rank, path, other, path);
    case Op::FILE_REMOVE: return absl::StrFormat("[RANK %03d]: unlink() of file \"%s\" failed", rank, path);
    default: return "";
  }
}

}  // namespace iofleet

// Writing a whole buffer to a descriptor, going on after short writes and EINTR: the one loop
// the controller's result files, its children's stdin and the worker's file layout share.
#ifndef IOFLEET_COMMON_WRITE_ALL_H_
#define IOFLEET_COMMON_WRITE_ALL_H_

#include <sys/types.h>

#include "absl/strings/string_view.h"

namespace iofleet {

// Writes all of `data` to `fd` (write(2)): 0, or the errno of the call that failed (ENOSPC for
// one that wrote nothing and said nothing, so that a full file system surfaces as such).
int WriteAll(int fd, absl::string_view data);
// The same with pwrite(2), `data` going to `offset` onwards.
int WriteAllAt(int fd, absl::string_view data, off_t offset);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_WRITE_ALL_H_

// Status propagation macros. Debian's abseil (20220623) ships none, so iofleet keeps these two.
#ifndef IOFLEET_COMMON_STATUS_MACROS_H_
#define IOFLEET_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define IOFLEET_CONCAT_INNER_(a, b) a##b
#define IOFLEET_CONCAT_(a, b) IOFLEET_CONCAT_INNER_(a, b)

// Returns from the calling function when `expr` yields a non-OK absl::Status.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status iofleet_status_ = (expr);           \
    if (!iofleet_status_.ok()) return iofleet_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());` unwraps an absl::StatusOr or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(IOFLEET_CONCAT_(iofleet_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(*tmp)

#endif  // IOFLEET_COMMON_STATUS_MACROS_H_

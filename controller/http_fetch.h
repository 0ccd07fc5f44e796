// HTTP GET of a small document (a Prometheus /metrics page) with libcurl, one connection kept
// open between fetches. Bounded in time and size: a target that stalls or answers without end
// costs one timeout, never the controller's memory.
#ifndef IOFLEET_CONTROLLER_HTTP_FETCH_H_
#define IOFLEET_CONTROLLER_HTTP_FETCH_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace iofleet {

class HttpFetcher {
 public:
  explicit HttpFetcher(std::string url);
  ~HttpFetcher();
  HttpFetcher(const HttpFetcher&) = delete;
  HttpFetcher& operator=(const HttpFetcher&) = delete;

  // The body of a 200 answer; an error naming what failed (connect, timeout, status, size).
  absl::StatusOr<std::string> Get(absl::Duration timeout, size_t max_bytes);

  // Whether `url` is one this fetcher can reach: http:// or https://, with a host.
  static absl::Status CheckUrl(const std::string& url);

 private:
  const std::string url_;
  void* curl_ = nullptr;  // CURL*
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_HTTP_FETCH_H_

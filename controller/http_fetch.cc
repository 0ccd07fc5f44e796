#include "controller/http_fetch.h"

#include <curl/curl.h>

#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace iofleet {
namespace {

struct Body {
  std::string text;
  size_t max_bytes = 0;
  bool too_big = false;
};

size_t Append(char* data, size_t size, size_t count, void* user) {
  Body* body = static_cast<Body*>(user);
  const size_t n = size * count;
  if (body->text.size() + n > body->max_bytes) {
    body->too_big = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  body->text.append(data, n);
  return n;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

HttpFetcher::HttpFetcher(std::string url) : url_(std::move(url)) {
  GlobalInit();
  curl_ = curl_easy_init();
}

HttpFetcher::~HttpFetcher() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

absl::Status HttpFetcher::CheckUrl(const std::string& url) {
  const bool http = absl::StartsWith(url, "http://"), https = absl::StartsWith(url, "https://");
  if (!http && !https) return absl::InvalidArgumentError(absl::StrCat("'", url, "' is not an http:// or https:// URL"));
  const std::string rest = url.substr(http ? 7 : 8);
  if (rest.empty() || rest[0] == '/' || rest[0] == ':') return absl::InvalidArgumentError(absl::StrCat("'", url, "' has no host"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> HttpFetcher::Get(absl::Duration timeout, size_t max_bytes) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return absl::InternalError("libcurl could not start");
  Body body{.max_bytes = max_bytes};
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url_.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM (threads)
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout))));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip if the target offers it
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "iofleet-target-metrics");
  const CURLcode code = curl_easy_perform(curl);
  if (body.too_big) return absl::ResourceExhaustedError(absl::StrCat("the answer is larger than ", max_bytes, " bytes"));
  if (code != CURLE_OK) return absl::UnavailableError(error[0] != '\0' ? error : curl_easy_strerror(code));
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) return absl::UnavailableError(absl::StrCat("HTTP status ", status));
  return std::move(body.text);
}

}  // namespace iofleet

// libFuzzer target: any bytes as a Prometheus exposition (what a target's /metrics answers, which
// the controller does not control) must parse or fail cleanly, within the limits; what parses
// must survive the increase and quantile arithmetic against itself and an empty scrape.
#include <cstddef>
#include <cstdint>
#include <string>

#include "metrics/prometheus_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto scrape = iofleet::ParsePrometheusText(text, {.max_bytes = 1 << 20, .max_series = 5000, .max_buckets = 200});
  if (!scrape.ok()) return 0;
  const iofleet::PrometheusScrape empty;
  for (const auto& changed : {iofleet::PrometheusIncrease(empty, *scrape), iofleet::PrometheusIncrease(*scrape, *scrape, true)}) {
    for (const iofleet::PrometheusSeries& s : changed) {
      if (s.kind == iofleet::PrometheusSeries::Kind::kHistogram) (void)iofleet::HistogramQuantile(s.buckets, 0.99);
    }
  }
  return 0;
}

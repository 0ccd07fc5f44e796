#include "metrics/prometheus_text.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace iofleet {
namespace {

using Kind = PrometheusSeries::Kind;

bool NameStart(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool NameChar(char c) { return NameStart(c) || absl::ascii_isdigit(static_cast<unsigned char>(c)); }

// Prometheus' float syntax: Go's ParseFloat plus +Inf/-Inf/NaN in any case.
bool ParseValue(absl::string_view text, double* value) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "+inf" || lower == "inf") {
    *value = std::numeric_limits<double>::infinity();
    return true;
  }
  if (lower == "-inf") {
    *value = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (lower == "nan") {
    *value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  return !text.empty() && absl::SimpleAtod(text, value);
}

struct Label {
  std::string name;
  std::string value;  // as exposed (escapes kept): re-rendered unchanged
  std::string Render() const { return absl::StrCat(name, "=\"", value, "\""); }
};

// One sample line: name{labels} value [timestamp].
struct Sample {
  std::string name;
  std::vector<Label> labels;
  double value = 0;
};

absl::StatusOr<Sample> ParseSample(absl::string_view line) {
  Sample s;
  size_t i = 0;
  if (i >= line.size() || !NameStart(line[i])) return absl::InvalidArgumentError("a sample must start with a metric name");
  while (i < line.size() && NameChar(line[i])) ++i;
  s.name = std::string(line.substr(0, i));
  auto skip_space = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  skip_space();
  if (i < line.size() && line[i] == '{') {
    ++i;
    for (;;) {
      skip_space();
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      const size_t start = i;
      if (i >= line.size() || !NameStart(line[i]) || line[i] == ':') return absl::InvalidArgumentError("a label name was expected");
      while (i < line.size() && NameChar(line[i]) && line[i] != ':') ++i;
      Label label{std::string(line.substr(start, i - start)), ""};
      skip_space();
      if (i >= line.size() || line[i] != '=') return absl::InvalidArgumentError(absl::StrCat("'=' expected after label ", label.name));
      ++i;
      skip_space();
      if (i >= line.size() || line[i] != '"') return absl::InvalidArgumentError(absl::StrCat("label ", label.name, "'s value must be quoted"));
      ++i;
      const size_t value_start = i;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\') {
          if (i + 1 >= line.size() || (line[i + 1] != '\\' && line[i + 1] != '"' && line[i + 1] != 'n')) {
            return absl::InvalidArgumentError(absl::StrCat("label ", label.name, ": a bad escape"));
          }
          ++i;
        }
        ++i;
      }
      if (i >= line.size()) return absl::InvalidArgumentError(absl::StrCat("label ", label.name, "'s value is not closed"));
      label.value = std::string(line.substr(value_start, i - value_start));
      ++i;
      for (const Label& other : s.labels) {
        if (other.name == label.name) return absl::InvalidArgumentError(absl::StrCat("label ", label.name, " given twice"));
      }
      s.labels.push_back(std::move(label));
      skip_space();
      if (i < line.size() && line[i] == ',') {
        ++i;
        continue;
      }
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      return absl::InvalidArgumentError("',' or '}' expected after a label");
    }
  }
  skip_space();
  std::vector<absl::string_view> rest = absl::StrSplit(line.substr(i), absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (rest.empty()) return absl::InvalidArgumentError(absl::StrCat(s.name, " has no value"));
  if (rest.size() > 2) return absl::InvalidArgumentError(absl::StrCat(s.name, ": text after the value and timestamp"));
  if (!ParseValue(rest[0], &s.value)) return absl::InvalidArgumentError(absl::StrCat(s.name, ": '", rest[0], "' is not a number"));
  int64_t timestamp;
  if (rest.size() == 2 && !absl::SimpleAtoi(rest[1], &timestamp)) {
    return absl::InvalidArgumentError(absl::StrCat(s.name, ": '", rest[1], "' is not a timestamp in milliseconds"));
  }
  return s;
}

// The canonical label text of `labels` without the one named `drop`.
std::string RenderLabels(std::vector<Label> labels, absl::string_view drop) {
  labels.erase(std::remove_if(labels.begin(), labels.end(), [&](const Label& l) { return l.name == drop; }), labels.end());
  if (labels.empty()) return "";
  std::sort(labels.begin(), labels.end(), [](const Label& a, const Label& b) { return a.name < b.name; });
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) absl::StrAppend(&out, i ? "," : "", labels[i].Render());
  return out + "}";
}

const Label* FindLabel(const std::vector<Label>& labels, absl::string_view name) {
  for (const Label& l : labels) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<PrometheusScrape> ParsePrometheusText(absl::string_view text, const PrometheusLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the exposition is ", text.size(), " bytes, more than ", limits.max_bytes));
  }
  absl::flat_hash_map<std::string, std::string> types;  // family -> counter|gauge|histogram|summary|untyped
  PrometheusScrape scrape;
  absl::flat_hash_map<std::string, size_t> index;  // Key() -> series
  size_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    auto fail = [&](absl::string_view why) { return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", why)); };
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::vector<absl::string_view> words = absl::StrSplit(line.substr(1), absl::ByAnyChar(" \t"), absl::SkipEmpty());
      if (words.size() >= 2 && words[0] == "TYPE") {
        if (words.size() != 3) return fail("# TYPE takes a metric name and a type");
        const absl::string_view type = words[2];
        if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" && type != "untyped") {
          return fail(absl::StrCat("unknown metric type '", type, "'"));
        }
        if (types.size() >= limits.max_series) return absl::ResourceExhaustedError(absl::StrCat("more than ", limits.max_series, " metric families"));
        types[std::string(words[1])] = std::string(type);
      }
      continue;  // # HELP and other comments
    }
    auto sample = ParseSample(line);
    if (!sample.ok()) return fail(sample.status().message());
    // Which family and kind the sample belongs to.
    auto type_of = [&](absl::string_view family) -> absl::string_view {
      auto it = types.find(family);
      return it == types.end() ? absl::string_view() : absl::string_view(it->second);
    };
    std::string family = sample->name;
    absl::string_view suffix;
    // A sample named as a typed family is that family; otherwise its suffix may name one.
    for (absl::string_view s : {"_bucket", "_sum", "_count", "_total"}) {
      if (!type_of(sample->name).empty()) break;
      if (absl::EndsWith(sample->name, s)) {
        const absl::string_view base = absl::string_view(sample->name).substr(0, sample->name.size() - s.size());
        const absl::string_view base_type = type_of(base);
        if ((base_type == "histogram" && s != "_total") || (base_type == "summary" && (s == "_sum" || s == "_count")) ||
            (base_type == "counter" && s == "_total")) {
          family = std::string(base);
          suffix = s;
        }
        break;
      }
    }
    const absl::string_view type = type_of(family);
    PrometheusSeries series;
    if (type == "histogram") {
      series.kind = Kind::kHistogram;
      series.name = family;
      series.labels = RenderLabels(sample->labels, "le");
      auto it = index.find(series.Key());
      if (it == index.end()) {
        if (scrape.series.size() >= limits.max_series) return absl::ResourceExhaustedError(absl::StrCat("more than ", limits.max_series, " series"));
        it = index.emplace(series.Key(), scrape.series.size()).first;
        scrape.series.push_back(std::move(series));
      }
      PrometheusSeries& h = scrape.series[it->second];
      if (h.kind != Kind::kHistogram) return fail(absl::StrCat(sample->name, ": a series given twice"));
      if (suffix == "_bucket") {
        const Label* le = FindLabel(sample->labels, "le");
        double bound;
        if (le == nullptr || !ParseValue(le->value, &bound) || std::isnan(bound)) return fail(absl::StrCat(sample->name, ": a bucket needs a numeric le label"));
        for (const auto& [b, c] : h.buckets) {
          if (b == bound) return fail(absl::StrCat(sample->name, ": bucket le=", le->value, " given twice"));
        }
        if (h.buckets.size() >= limits.max_buckets) return fail(absl::StrCat(sample->name, ": more than ", limits.max_buckets, " buckets"));
        h.buckets.emplace_back(bound, sample->value);
      } else if (suffix == "_sum") {
        h.sum = sample->value;
      } else if (suffix == "_count") {
        h.count = sample->value;
      } else {
        return fail(absl::StrCat(sample->name, ": a histogram's samples are _bucket, _sum and _count"));
      }
      continue;
    }
    // Counters (a summary's _sum and _count too), gauges (a summary's quantiles, untyped).
    series.kind = type == "counter" || (type == "summary" && !suffix.empty()) ? Kind::kCounter : Kind::kGauge;
    series.name = type == "counter" ? sample->name : (type == "summary" && !suffix.empty() ? sample->name : family);
    series.labels = RenderLabels(sample->labels, "");
    series.value = sample->value;
    if (index.contains(series.Key())) return fail(absl::StrCat(series.Key(), ": a series given twice"));
    if (scrape.series.size() >= limits.max_series) return absl::ResourceExhaustedError(absl::StrCat("more than ", limits.max_series, " series"));
    index.emplace(series.Key(), scrape.series.size());
    scrape.series.push_back(std::move(series));
  }
  for (PrometheusSeries& s : scrape.series) {
    std::sort(s.buckets.begin(), s.buckets.end());
  }
  return scrape;
}

std::vector<PrometheusSeries> PrometheusIncrease(const PrometheusScrape& before, const PrometheusScrape& after, bool keep_unchanged) {
  absl::flat_hash_map<std::string, const PrometheusSeries*> earlier;
  for (const PrometheusSeries& s : before.series) earlier.emplace(s.Key(), &s);
  std::vector<PrometheusSeries> out;
  for (const PrometheusSeries& now : after.series) {
    auto it = earlier.find(now.Key());
    const PrometheusSeries* then = it != earlier.end() && it->second->kind == now.kind ? it->second : nullptr;
    PrometheusSeries d = now;
    switch (now.kind) {
      case Kind::kGauge:
        if (!keep_unchanged && then != nullptr && (then->value == now.value || (std::isnan(then->value) && std::isnan(now.value)))) continue;
        break;
      case Kind::kCounter:
        // A counter that went down was reset (the target restarted): all of it is new.
        if (then != nullptr && now.value >= then->value) d.value = now.value - then->value;
        if (!keep_unchanged && d.value == 0) continue;
        break;
      case Kind::kHistogram: {
        const bool reset = then != nullptr && now.count < then->count;
        if (then != nullptr && !reset) {
          d.sum = now.sum - then->sum;
          d.count = now.count - then->count;
          for (auto& [bound, count] : d.buckets) {
            for (const auto& [b, c] : then->buckets) {
              if (b == bound) count -= std::min(count, c);
            }
          }
        }
        if (!keep_unchanged && d.count == 0) continue;
        break;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::optional<size_t> HistogramQuantileBucket(const std::vector<std::pair<double, double>>& buckets, double q) {
  if (buckets.empty() || !(buckets.back().second > 0)) return std::nullopt;
  const double rank = std::clamp(q, 0.0, 1.0) * buckets.back().second;
  size_t i = 0;
  while (i + 1 < buckets.size() && buckets[i].second < rank) ++i;
  return i;
}

double HistogramQuantile(const std::vector<std::pair<double, double>>& buckets, double q) {
  const std::optional<size_t> in = HistogramQuantileBucket(buckets, q);
  if (!in) return std::nan("");
  const size_t i = *in;
  const auto& [bound, count] = buckets[i];
  if (std::isinf(bound)) return i == 0 ? std::nan("") : buckets[i - 1].first;
  if (i == 0 && bound <= 0) return bound;
  const double lower = i == 0 ? 0 : buckets[i - 1].first, below = i == 0 ? 0 : buckets[i - 1].second;
  if (count == below) return bound;
  const double rank = std::clamp(q, 0.0, 1.0) * buckets.back().second;
  return lower + (bound - lower) * (rank - below) / (count - below);
}

}  // namespace iofleet

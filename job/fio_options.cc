#include "job/fio_options.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/index_list.h"
#include "common/nearest_name.h"
#include "common/nfs_url.h"
#include "common/status_macros.h"
#include "common/units.h"
#include "job/block_sizes.h"
#include "job/data_pattern.h"
#include "job/file_names.h"
#include "job/run_limits.h"

namespace iofleet {

using v1::JobSpec;
using v1::ReadWrite;

namespace {

absl::Status ParseBool(absl::string_view value, bool* out) {
  if (value.empty() || value == "1" || value == "true") *out = true;
  else if (value == "0" || value == "false") *out = false;
  else return absl::InvalidArgumentError(absl::StrCat("'", value, "' is not 0 or 1"));
  return absl::OkStatus();
}

// The message an option's field is in: the job, or its zones (zonemode's options). The setters
// below take a setter of either and find the message through this.
JobSpec* FieldOwner(JobSpec* j, const JobSpec*) { return j; }
v1::ZoneSpec* FieldOwner(JobSpec* j, const v1::ZoneSpec*) { return j->mutable_zones(); }
template <typename Message, typename T>
void SetField(JobSpec* j, void (Message::*set)(T), T value) {
  (FieldOwner(j, static_cast<const Message*>(nullptr))->*set)(value);
}

// Setters for the common kinds of option, each writing one field. `negated`: the field is the
// option's opposite (buffered=1 is direct=0).
template <typename Message>
OptionSetter BoolOption(void (Message::*set)(bool), bool negated = false) {
  return [set, negated](absl::string_view v, JobSpec* j) {
    bool b = false;
    absl::Status s = ParseBool(v, &b);
    if (s.ok()) SetField(j, set, b != negated);
    return s;
  };
}

// Takes the field's mutable_*() accessor (protobuf's string setters are templates).
OptionSetter StringOption(std::string* (JobSpec::*field)()) {
  return [field](absl::string_view v, JobSpec* j) {
    *(j->*field)() = std::string(v);
    return absl::OkStatus();
  };
}

// fio's write_*_log[=prefix]: without a prefix the job's name is the prefix (filled in once the
// job is read: kJobNamePrefix stands for it until then).
OptionSetter LogPrefixOption(std::string* (JobSpec::*field)()) {
  return [field](absl::string_view v, JobSpec* j) {
    *(j->*field)() = v.empty() ? std::string(kJobNamePrefix) : std::string(v);
    return absl::OkStatus();
  };
}

// One of a fixed list of names, each setting one enumerator (several names may share one: fio's
// old spellings); an unknown name is an error naming the nearest and the list.
template <typename Message, typename Enum>
OptionSetter NamedOption(void (Message::*set)(Enum), std::vector<std::pair<std::string, Enum>> names) {
  return [set, names = std::move(names)](absl::string_view v, JobSpec* j) {
    std::vector<std::string> known;
    for (const auto& [name, value] : names) {
      if (v == name) {
        SetField(j, set, value);
        return absl::OkStatus();
      }
      known.push_back(name);
    }
    return absl::InvalidArgumentError(absl::StrCat("'", v, "'", DidYouMean(v, known), " is not one of ", absl::StrJoin(known, ", ")));
  };
}

// A whole number in [min, max]; `transform` maps it to the stored value (e.g. 100 - x).
template <typename Message>
OptionSetter UintOption(void (Message::*set)(uint32_t), uint32_t min, uint32_t max,
                        uint32_t (*transform)(uint32_t) = nullptr) {
  return [=](absl::string_view v, JobSpec* j) {
    uint32_t n = 0;
    absl::StatusOr<uint64_t> value = EvaluateCount(v);
    if (value.ok() && *value <= UINT32_MAX) n = static_cast<uint32_t>(*value);
    if (!value.ok() || *value > UINT32_MAX || n < min || n > max) {
      return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not a whole number from ", min, " to ", max));
    }
    SetField(j, set, transform ? transform(n) : n);
    return absl::OkStatus();
  };
}

// fio's cmdprio_percentage/cmdprio_class/cmdprio/cmdprio_hint=N[,N]: reads, writes.
OptionSetter CommandPriorityValues(google::protobuf::RepeatedField<uint32_t>* (v1::CommandPriorities::*field)(), uint32_t max) {
  return [field, max](absl::string_view v, JobSpec* j) {
    google::protobuf::RepeatedField<uint32_t>* values = (j->mutable_cmdprio()->*field)();
    values->Clear();
    const std::vector<absl::string_view> parts = absl::StrSplit(v, ',');
    if (parts.size() > 2) return absl::InvalidArgumentError(absl::StrCat("'", v, "' has more than two values (reads,writes)"));
    for (absl::string_view part : parts) {
      uint32_t n;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &n) || n > max) {
        return absl::InvalidArgumentError(absl::StrCat("'", part, "' is not a whole number from 0 to ", max));
      }
      values->Add(n);
    }
    return absl::OkStatus();
  };
}

// fio's cmdprio_bssplit=bs/perc[/class/level[/hint]]:...[,reads' form for writes].
absl::Status SetCommandPrioritySplit(absl::string_view v, JobSpec* j) {
  const std::vector<absl::string_view> directions = absl::StrSplit(v, ',');
  if (directions.size() > 3) return absl::InvalidArgumentError(absl::StrCat("'", v, "' has more than three parts (read,write,trim)"));
  v1::CommandPriorities* c = j->mutable_cmdprio();
  c->clear_read_bssplit();
  c->clear_write_bssplit();
  for (int d = 0; d < 2; ++d) {
    // One part applies to both directions; fio ignores a third (trims).
    const absl::string_view text = directions.size() == 1 ? directions[0] : directions[d];
    auto* shares = d == 0 ? c->mutable_read_bssplit() : c->mutable_write_bssplit();
    for (absl::string_view entry : absl::StrSplit(text, ':', absl::SkipWhitespace())) {
      const std::vector<absl::string_view> fields = absl::StrSplit(entry, '/');
      if (fields.size() != 2 && fields.size() != 4 && fields.size() != 5) {
        return absl::InvalidArgumentError(absl::StrCat("'", entry, "' is not bs/percent, bs/percent/class/level or bs/percent/class/level/hint"));
      }
      auto size = ParseSize(fields[0]);
      if (!size.ok()) return size.status();
      if (*size == 0 || *size > (1ull << 30)) return absl::InvalidArgumentError(absl::StrCat("block size '", fields[0], "' is out of range"));
      uint32_t numbers[4] = {0, 0, 0, 0};  // percent, class, level, hint
      for (size_t f = 1; f < fields.size(); ++f) {
        if (!absl::SimpleAtoi(fields[f], &numbers[f - 1])) return absl::InvalidArgumentError(absl::StrCat("'", fields[f], "' in '", entry, "' is not a number"));
      }
      auto* share = shares->Add();
      share->set_block_size(*size);
      share->set_percent(numbers[0]);
      share->set_own_priority(fields.size() > 2);
      share->set_priority_class(numbers[1]);
      share->set_level(numbers[2]);
      share->set_hint(numbers[3]);
    }
  }
  return absl::OkStatus();
}

// fio's ignore_error=READ,WRITE,VERIFY: each a ':'-separated list of errno names (ENOSPC) or
// numbers (122); an empty part leaves that kind at fio's default (EIO, EILSEQ).
absl::Status SetIgnoreError(absl::string_view v, JobSpec* j) {
  const std::vector<absl::string_view> kinds = absl::StrSplit(v, ',');
  if (kinds.size() > 3) return absl::InvalidArgumentError(absl::StrCat("'", v, "' has more than 3 lists (read, write, verify)"));
  for (size_t kind = 0; kind < kinds.size(); ++kind) {
    google::protobuf::RepeatedField<int32_t>* list =
        kind == 0 ? j->mutable_ignore_read_errors() : kind == 1 ? j->mutable_ignore_write_errors() : j->mutable_ignore_verify_errors();
    list->Clear();
    for (absl::string_view token : absl::StrSplit(kinds[kind], ':', absl::SkipWhitespace())) {
      token = absl::StripAsciiWhitespace(token);
      int32_t number = 0;
      if (!absl::SimpleAtoi(token, &number)) {
        std::vector<std::string> names;
        for (int e = 1; e < kMaxErrno; ++e) {
          const char* name = strerrorname_np(e);
          if (name == nullptr) continue;
          if (token == name) number = e;
          names.push_back(name);
        }
        if (number == 0) return absl::InvalidArgumentError(absl::StrCat("'", token, "' is not an errno name or number", DidYouMean(token, names)));
      }
      if (number <= 0 || number >= kMaxErrno) return absl::InvalidArgumentError(absl::StrCat("errno ", number, " is out of range"));
      if (list->size() >= static_cast<int>(kMaxIgnoredErrors)) return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxIgnoredErrors, " errors in one list"));
      list->Add(number);
    }
  }
  return absl::OkStatus();
}

template <typename Message>
OptionSetter SizeOption(void (Message::*set)(uint64_t), uint64_t max) {
  return [=](absl::string_view v, JobSpec* j) {
    auto size = ParseSize(v);
    if (!size.ok()) return size.status();
    if (*size > max) return absl::InvalidArgumentError(absl::StrCat("'", v, "' is larger than ", max, " bytes"));
    SetField(j, set, *size);
    return absl::OkStatus();
  };
}

// fio's NNz: a number of zones (of zonesize each); the job file's reader multiplies it out.
std::optional<uint64_t> ZoneCount(absl::string_view v) {
  uint64_t zones = 0;
  if (!absl::ConsumeSuffix(&v, "z") || !absl::SimpleAtoi(v, &zones)) return std::nullopt;
  return zones;
}

// A size that may be given in zones (size=, offset=, io_size=, zoneskip= take "128z").
template <typename Message>
OptionSetter ZonedSizeOption(void (Message::*set)(uint64_t), void (v1::ZoneSpec::*set_zones)(uint64_t)) {
  return [=](absl::string_view v, JobSpec* j) {
    if (std::optional<uint64_t> zones = ZoneCount(v)) {
      SetField(j, set_zones, *zones);
      SetField(j, set, uint64_t{0});
      return absl::OkStatus();
    }
    auto size = ParseSize(v);
    if (!size.ok()) return size.status();
    SetField(j, set, *size);
    SetField(j, set_zones, uint64_t{0});
    return absl::OkStatus();
  };
}

// A fraction from 0 to 1 (zone_reset_threshold, zone_reset_frequency).
template <typename Message>
OptionSetter FractionOption(void (Message::*set)(double)) {
  return [=](absl::string_view v, JobSpec* j) {
    double f = 0;
    if (!absl::SimpleAtod(v, &f) || !(f >= 0 && f <= 1)) return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not a fraction from 0 to 1"));
    SetField(j, set, f);
    return absl::OkStatus();
  };
}

// A duration whose bare number is in `default_unit_ns` (seconds for most, microseconds for
// thinktime, as in fio).
OptionSetter DurationOption(void (JobSpec::*set)(uint64_t), uint64_t default_unit_ns) {
  return [=](absl::string_view v, JobSpec* j) {
    auto ns = ParseDurationNs(v, default_unit_ns);
    if (ns.ok()) (j->*set)(*ns);
    return ns.status();
  };
}

// fio's rate=READ,WRITE,TRIM (bytes/s with size suffixes) and rate_iops=READ,WRITE,TRIM; one
// value applies to every direction, an empty part leaves that direction unlimited.
OptionSetter PerDirectionRate(google::protobuf::RepeatedField<uint64_t>* (JobSpec::*field)(), bool sizes) {
  return [=](absl::string_view v, JobSpec* j) {
    std::vector<absl::string_view> parts = absl::StrSplit(v, ',');
    if (parts.size() > 3) return absl::InvalidArgumentError(absl::StrCat("'", v, "' has more than three parts"));
    google::protobuf::RepeatedField<uint64_t>* rates = (j->*field)();
    rates->Resize(parts.size() == 2 ? 2 : 3, 0);
    for (size_t i = 0; i < static_cast<size_t>(rates->size()); ++i) {
      const absl::string_view part = absl::StripAsciiWhitespace(parts.size() == 1 ? parts[0] : (i < parts.size() ? parts[i] : ""));
      if (part.empty()) continue;
      uint64_t value = 0;
      if (sizes) {
        auto size = ParseSize(part);
        if (!size.ok()) return size.status();
        value = *size;
      } else if (!absl::SimpleAtoi(part, &value)) {
        return absl::InvalidArgumentError(absl::StrCat("'", part, "' is not a number of IOs per second"));
      }
      rates->Set(static_cast<int>(i), value);
    }
    return absl::OkStatus();
  };
}

// fio's bssplit=4k/10:64k/50:32k/40[,WRITE SPLIT]: entries without a percentage share what
// the others leave of 100 equally; the total must come to 100.
absl::Status SetBlockSizeSplit(absl::string_view v, JobSpec* j) {
  std::vector<absl::string_view> directions = absl::StrSplit(v, ',');
  if (directions.size() > 3) return absl::InvalidArgumentError(absl::StrCat("'", v, "' has more than three parts (read,write,trim)"));
  if (directions.size() == 3 && !absl::StripAsciiWhitespace(directions[2]).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("'", v, "': a split for trims (the third part) is not supported"));
  }
  google::protobuf::RepeatedPtrField<v1::BlockSizeSplit>* targets[] = {j->mutable_read_bssplit(), j->mutable_write_bssplit()};
  for (size_t d = 0; d < 2; ++d) {
    const absl::string_view text = directions.size() == 1 ? directions[0] : (d < directions.size() ? directions[d] : "");
    if (absl::StripAsciiWhitespace(text).empty()) continue;
    google::protobuf::RepeatedPtrField<v1::BlockSizeSplit> split;
    uint32_t given = 0;
    int unweighted = 0;
    for (absl::string_view entry : absl::StrSplit(text, ':')) {
      const size_t slash = entry.find('/');
      auto size = ParseSize(entry.substr(0, slash));
      if (!size.ok()) return size.status();
      if (*size == 0 || *size > (1ull << 30)) return absl::InvalidArgumentError(absl::StrCat("block size '", entry, "' is out of range"));
      uint32_t percent = 0;
      if (slash != absl::string_view::npos) {
        if (!absl::SimpleAtoi(entry.substr(slash + 1), &percent) || percent > 100) {
          return absl::InvalidArgumentError(absl::StrCat("'", entry, "' needs a percentage from 0 to 100 after '/'"));
        }
        given += percent;
      } else {
        ++unweighted;
      }
      v1::BlockSizeSplit* e = split.Add();
      e->set_size(*size);
      e->set_percent(slash == absl::string_view::npos ? UINT32_MAX : percent);
    }
    if (given > 100) return absl::InvalidArgumentError(absl::StrCat("percentages in '", text, "' add up to ", given, ", above 100"));
    // The unweighted entries share what is left equally; the last one takes the rounding.
    const uint32_t left = 100 - given;
    const uint32_t share = unweighted ? left / static_cast<uint32_t>(unweighted) : 0;
    uint32_t total = given;
    for (v1::BlockSizeSplit& e : split) {
      if (e.percent() != UINT32_MAX) continue;
      e.set_percent(--unweighted == 0 ? 100 - total : share);
      total += e.percent();
    }
    if (total != 100) {
      return absl::InvalidArgumentError(absl::StrCat("percentages in '", text, "' add up to ", total, ", not 100"));
    }
    targets[d]->Swap(&split);
  }
  return absl::OkStatus();
}

// fio's file_service_type=roundrobin|sequential|random[:N].
absl::Status SetFileService(absl::string_view v, JobSpec* j) {
  const size_t colon = v.find(':');
  const absl::string_view kind = v.substr(0, colon);
  uint32_t every = 1;
  if (colon != absl::string_view::npos && (!absl::SimpleAtoi(v.substr(colon + 1), &every) || every == 0)) {
    return absl::InvalidArgumentError(absl::StrCat("'", v.substr(colon + 1), "' is not a number of IOs above 0"));
  }
  if (kind == "roundrobin") j->set_file_service(v1::JobSpec::ROUNDROBIN);
  else if (kind == "sequential") j->set_file_service(v1::JobSpec::SEQUENTIAL);
  else if (kind == "random") j->set_file_service(v1::JobSpec::RANDOM_FILE);
  else {
    return absl::InvalidArgumentError(absl::StrCat("unknown file_service_type '", kind, "'",
                                                   DidYouMean(kind, {"roundrobin", "sequential", "random"}),
                                                   "; use roundrobin, sequential or random"));
  }
  j->set_file_service_switch(every);
  return absl::OkStatus();
}

// fio's random_distribution=zoned:50/5:30/15:20/ (IO percent / range percent, the last
// entry's empty range taking the rest) or zoned_abs:60/20G:40/100G, optionally per direction
// (READ,WRITE[,TRIM]) like bssplit.
absl::Status SetZonedDistribution(absl::string_view kind, absl::string_view zones, JobSpec* j) {
  const bool absolute = kind == "zoned_abs";
  v1::RandomDistribution* d = j->mutable_random_distribution();
  d->Clear();
  d->set_kind(absolute ? v1::RandomDistribution::ZONED_ABS : v1::RandomDistribution::ZONED);
  std::vector<absl::string_view> directions = absl::StrSplit(zones, ',');
  if (directions.size() > 3) return absl::InvalidArgumentError(absl::StrCat("'", zones, "' has more than three parts (read,write,trim)"));
  google::protobuf::RepeatedPtrField<v1::RandomDistribution::Zone>* targets[] = {d->mutable_read_zones(), d->mutable_write_zones()};
  for (size_t dir = 0; dir < 2; ++dir) {
    absl::string_view text = absl::StripAsciiWhitespace(directions.size() == 1 ? directions[0] : (dir < directions.size() ? directions[dir] : ""));
    if (text.empty()) text = absl::StripAsciiWhitespace(directions[0]);  // a direction left out uses the first
    uint32_t access = 0, size = 0, unsized = 0;
    for (absl::string_view entry : absl::StrSplit(text, ':')) {
      const size_t slash = entry.find('/');
      if (slash == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat("zone '", entry, "' needs IO_PERCENT/", absolute ? "SIZE" : "RANGE_PERCENT"));
      v1::RandomDistribution::Zone* zone = targets[dir]->Add();
      uint32_t percent;
      if (!absl::SimpleAtoi(entry.substr(0, slash), &percent) || percent > 100) {
        return absl::InvalidArgumentError(absl::StrCat("zone '", entry, "': '", entry.substr(0, slash), "' is not a percentage of the IOs"));
      }
      zone->set_access_percent(percent);
      access += percent;
      const absl::string_view extent = absl::StripAsciiWhitespace(entry.substr(slash + 1));
      if (extent.empty()) {
        ++unsized;
        continue;
      }
      if (absolute) {
        auto bytes = ParseSize(extent);
        if (!bytes.ok()) return bytes.status();
        if (*bytes == 0) return absl::InvalidArgumentError(absl::StrCat("zone '", entry, "' has no size"));
        zone->set_size_bytes(*bytes);
      } else {
        uint32_t range;
        if (!absl::SimpleAtoi(extent, &range) || range == 0 || range > 100) {
          return absl::InvalidArgumentError(absl::StrCat("zone '", entry, "': '", extent, "' is not a percentage of the range from 1 to 100"));
        }
        zone->set_size_percent(range);
        size += range;
      }
    }
    if (targets[dir]->size() > 256) return absl::InvalidArgumentError("more than 256 zones");
    if (access != 100) return absl::InvalidArgumentError(absl::StrCat("the zones' IO percentages in '", text, "' add up to ", access, ", not 100"));
    if (unsized > 1) return absl::InvalidArgumentError(absl::StrCat("'", text, "': only the last zone may leave its size out (it takes the rest)"));
    if (unsized == 1 && targets[dir]->rbegin()->size_percent() + targets[dir]->rbegin()->size_bytes() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("'", text, "': only the last zone may leave its size out (it takes the rest)"));
    }
    if (!absolute) {
      if (unsized == 1) {
        if (size >= 100) return absl::InvalidArgumentError(absl::StrCat("'", text, "': the zones before the last cover the whole range"));
        targets[dir]->rbegin()->set_size_percent(100 - size);
        size = 100;
      }
      if (size != 100) return absl::InvalidArgumentError(absl::StrCat("the zones' range percentages in '", text, "' add up to ", size, ", not 100"));
    }
  }
  j->set_norandommap(true);  // fio draws within a zone with repeats
  return absl::OkStatus();
}

// fio's random_distribution: random, zipf:THETA, pareto:H, normal:DEV (percent), zoned and
// zoned_abs.
absl::Status SetRandomDistribution(absl::string_view v, JobSpec* j) {
  const size_t colon = v.find(':');
  const absl::string_view kind = v.substr(0, colon);
  if (kind == "sequence") {
    v1::RandomDistribution* d = j->mutable_random_distribution();
    d->Clear();
    d->set_kind(v1::RandomDistribution::SEQUENCE);
    if (colon == absl::string_view::npos) return absl::InvalidArgumentError("sequence needs block indices, e.g. sequence:2,0,1");
    for (absl::string_view entry : absl::StrSplit(v.substr(colon + 1), ',')) {
      uint64_t block;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(entry), &block)) {
        return absl::InvalidArgumentError(absl::StrCat("'", entry, "' is not a block index"));
      }
      d->add_sequence(block);
    }
    if (d->sequence_size() > kMaxSequenceLength) return absl::InvalidArgumentError(absl::StrCat("a sequence of more than ", kMaxSequenceLength, " blocks"));
    j->set_norandommap(true);  // blocks repeat by design
    return absl::OkStatus();
  }
  if (kind == "zoned" || kind == "zoned_abs") {
    if (colon == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(kind, " needs zones, e.g. ", kind, ":50/5:30/15:20/"));
    return SetZonedDistribution(kind, v.substr(colon + 1), j);
  }
  j->mutable_random_distribution()->Clear();
  double parameter = 0;
  if (colon != absl::string_view::npos && !absl::SimpleAtod(v.substr(colon + 1), &parameter)) {
    return absl::InvalidArgumentError(absl::StrCat("'", v.substr(colon + 1), "' is not a number"));
  }
  v1::RandomDistribution* d = j->mutable_random_distribution();
  d->set_parameter(parameter);
  if (kind == "random") {
    d->set_kind(v1::RandomDistribution::UNIFORM);
  } else if (kind == "zipf") {
    if (parameter <= 0 || parameter == 1.0) return absl::InvalidArgumentError("zipf needs a theta above 0 other than 1 (e.g. zipf:1.2)");
    d->set_kind(v1::RandomDistribution::ZIPF);
  } else if (kind == "pareto") {
    if (parameter <= 0 || parameter >= 1) return absl::InvalidArgumentError("pareto needs h between 0 and 1 (e.g. pareto:0.2)");
    d->set_kind(v1::RandomDistribution::PARETO);
  } else if (kind == "normal" || kind == "gauss") {
    if (parameter <= 0 || parameter > 100) return absl::InvalidArgumentError("normal needs a deviation in percent (e.g. normal:5)");
    d->set_kind(v1::RandomDistribution::NORMAL);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown distribution '", kind, "'",
                                                   DidYouMean(kind, {"random", "zipf", "pareto", "normal", "zoned", "zoned_abs", "sequence"}),
                                                   "; use random, zipf:THETA, pareto:H, normal:DEV, zoned:..., zoned_abs:... or sequence:..."));
  }
  if (d->kind() != v1::RandomDistribution::UNIFORM) j->set_norandommap(true);  // repeats are the point
  return absl::OkStatus();
}

// fio's CPU and node lists (common/index_list.h) into a job field.
absl::Status SetIndexList(absl::string_view v, uint32_t limit, google::protobuf::RepeatedField<uint32_t>* out) {
  absl::StatusOr<std::vector<uint32_t>> list = ParseIndexList(v, limit);
  if (!list.ok()) return list.status();
  out->Assign(list->begin(), list->end());
  return absl::OkStatus();
}

// fio's numa_mem_policy=MODE[:NODES]: default and local take no nodes, prefer one, bind and
// interleave a list.
absl::Status SetNumaMemPolicy(absl::string_view v, JobSpec* j) {
  const size_t colon = v.find(':');
  const absl::string_view mode = v.substr(0, colon);
  static const std::vector<std::pair<std::string, JobSpec::NumaMemPolicy>> kModes = {
      {"default", JobSpec::NUMA_MEM_DEFAULT}, {"prefer", JobSpec::NUMA_MEM_PREFER}, {"bind", JobSpec::NUMA_MEM_BIND},
      {"interleave", JobSpec::NUMA_MEM_INTERLEAVE}, {"local", JobSpec::NUMA_MEM_LOCAL}};
  std::vector<std::string> names;
  for (const auto& [name, policy] : kModes) {
    names.push_back(name);
    if (mode != name) continue;
    j->set_numa_mem_policy(policy);
    j->clear_numa_mem_nodes();
    const bool takes_nodes = policy == JobSpec::NUMA_MEM_PREFER || policy == JobSpec::NUMA_MEM_BIND || policy == JobSpec::NUMA_MEM_INTERLEAVE;
    if (!takes_nodes) {
      if (colon != absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(mode, " takes no nodes"));
      return absl::OkStatus();
    }
    if (colon == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(mode, " needs nodes, e.g. ", mode, ":0"));
    RETURN_IF_ERROR(SetIndexList(v.substr(colon + 1), kMaxNumaNode, j->mutable_numa_mem_nodes()));
    if (policy == JobSpec::NUMA_MEM_PREFER && j->numa_mem_nodes_size() != 1) return absl::InvalidArgumentError("prefer takes one node");
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown numa_mem_policy '", mode, "'", DidYouMean(mode, names),
                                                 "; use default, prefer:NODE, bind:NODES, interleave:NODES or local"));
}

// fio's steadystate=iops:10% (or iops_slope, bw, bw_slope, lat, lat_slope; a limit in units of
// the criterion, or a percentage of the mean).
absl::Status SetSteadyState(absl::string_view v, JobSpec* j) {
  const size_t colon = v.find(':');
  const absl::string_view kind = v.substr(0, colon);
  static const std::vector<std::pair<std::string, v1::SteadyState::Criterion>> kCriteria = {
      {"iops", v1::SteadyState::IOPS}, {"iops_slope", v1::SteadyState::IOPS_SLOPE}, {"bw", v1::SteadyState::BW},
      {"bw_slope", v1::SteadyState::BW_SLOPE}, {"lat", v1::SteadyState::LAT}, {"lat_slope", v1::SteadyState::LAT_SLOPE}};
  std::vector<std::string> names;
  for (const auto& [name, criterion] : kCriteria) {
    names.push_back(name);
    if (kind != name) continue;
    if (colon == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(kind, " needs a limit, e.g. ", kind, ":1%"));
    absl::string_view limit = absl::StripAsciiWhitespace(v.substr(colon + 1));
    const bool percent = absl::ConsumeSuffix(&limit, "%");
    double value;
    if (!absl::SimpleAtod(limit, &value) || !std::isfinite(value) || value < 0) {
      return absl::InvalidArgumentError(absl::StrCat("'", v.substr(colon + 1), "' is not a limit (a number, or a percentage like 1%)"));
    }
    v1::SteadyState* ss = j->mutable_steadystate();
    ss->set_criterion(criterion);
    ss->set_limit(value);
    ss->set_percent(percent);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown steadystate criterion '", kind, "'", DidYouMean(kind, names),
                                                 "; use iops, iops_slope, bw, bw_slope, lat or lat_slope"));
}

// fio's percentile_list=99:99.9:99.99 (up to 20 values in (0, 100]).
absl::Status SetPercentileList(absl::string_view v, JobSpec* j) {
  j->clear_percentile_list();
  for (absl::string_view part : absl::StrSplit(v, ':')) {
    double p;
    if (!absl::SimpleAtod(part, &p) || p <= 0 || p > 100) {
      return absl::InvalidArgumentError(absl::StrCat("'", part, "' is not a percentile in (0, 100]"));
    }
    j->add_percentile_list(p);
  }
  if (j->percentile_list_size() > 20) return absl::InvalidArgumentError("at most 20 percentiles");
  return absl::OkStatus();
}

absl::Status SetReadWrite(absl::string_view value, JobSpec* j) {
  // rw=randread:8 (IOs per random offset) or rw=write:4k (bytes skipped after each IO).
  const size_t colon = value.find(':');
  const absl::string_view v = value.substr(0, colon);
  j->set_rw_modifier(0);
  j->set_rw_modifier_backwards(false);
  if (colon != absl::string_view::npos) {
    // rw=read:-8k: a negative modifier goes backwards.
    absl::string_view text = absl::StripAsciiWhitespace(value.substr(colon + 1));
    const bool backwards = absl::ConsumePrefix(&text, "-");
    auto modifier = ParseSize(text);
    if (!modifier.ok()) return modifier.status();
    j->set_rw_modifier(*modifier);
    j->set_rw_modifier_backwards(backwards && *modifier > 0);
  }
  if (j->rw_modifier_backwards() && (v == "randread" || v == "randwrite" || v == "randrw" || v == "randtrim")) {
    return absl::InvalidArgumentError(absl::StrCat("'", value, "': a negative modifier (backwards) is for sequential IO only"));
  }
  static const std::vector<std::pair<std::string, ReadWrite>> kModes = {
      {"read", v1::SEQ_READ},      {"write", v1::SEQ_WRITE}, {"randread", v1::RAND_READ},
      {"randwrite", v1::RAND_WRITE}, {"rw", v1::SEQ_MIXED},  {"readwrite", v1::SEQ_MIXED},
      {"randrw", v1::RAND_MIXED},  {"trim", v1::SEQ_TRIM},    {"randtrim", v1::RAND_TRIM}};
  std::vector<std::string> names;
  for (const auto& [name, mode] : kModes) {
    if (v == name) {
      j->set_rw(mode);
      return absl::OkStatus();
    }
    names.push_back(name);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown rw mode '", v, "'", DidYouMean(v, names),
                                                 "; use read, write, randread, randwrite, rw, randrw, trim or randtrim"));
}

// fio's bs=/bsrange= syntax: up to three comma-separated parts for reads, writes and trims;
// each a size or a "min-max" range; an empty part leaves that direction as it was; a single
// part applies to every direction.
absl::Status SetBlockSizes(absl::string_view v, JobSpec* j) {
  std::vector<absl::string_view> parts = absl::StrSplit(v, ',');
  if (parts.size() > 3) return absl::InvalidArgumentError(absl::StrCat("'", v, "' has more than three parts (read,write,trim)"));
  v1::BlockSizeRange* ranges[] = {j->mutable_read_bs(), j->mutable_write_bs(), j->mutable_trim_bs()};
  for (size_t i = 0; i < 3; ++i) {
    const absl::string_view part = absl::StripAsciiWhitespace(parts.size() == 1 ? parts[0] : (i < parts.size() ? parts[i] : ""));
    if (part.empty()) continue;
    const size_t dash = part.find('-');
    auto min = ParseSize(part.substr(0, dash));
    if (!min.ok()) return min.status();
    auto max = dash == absl::string_view::npos ? min : ParseSize(part.substr(dash + 1));
    if (!max.ok()) return max.status();
    if (*min == 0) return absl::InvalidArgumentError("a block size must be greater than 0");
    if (*max > (1ull << 30)) return absl::InvalidArgumentError("block sizes above 1GiB are not supported");
    if (*min > *max) return absl::InvalidArgumentError(absl::StrCat("range '", part, "' has its minimum above its maximum"));
    ranges[i]->set_min(*min);
    ranges[i]->set_max(*max);
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<FioOption>& FioOptions() {
  static const std::vector<FioOption> kOptions = {
      {"name", true, StringOption(&JobSpec::mutable_name)},
      {"rw", true, &SetReadWrite},
      {"rwmixread", true, UintOption(&JobSpec::set_rwmix_read, 0, 100)},
      {"rwmixwrite", true, UintOption(&JobSpec::set_rwmix_read, 0, 100, [](uint32_t w) { return 100 - w; })},
      {"bs", true, &SetBlockSizes},
      {"bsrange", true, &SetBlockSizes},
      {"size", true, [](absl::string_view v, JobSpec* j) {
         if (absl::EndsWith(v, "%")) {
           uint32_t percent;
           if (!absl::SimpleAtoi(v.substr(0, v.size() - 1), &percent) || percent == 0 || percent > 100) {
             return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not a percentage from 1% to 100%"));
           }
           j->set_size_percent(percent);
           j->set_size(0);
           j->mutable_zones()->set_size_zones(0);
           return absl::OkStatus();
         }
         static const OptionSetter kBytesOrZones = ZonedSizeOption(&JobSpec::set_size, &v1::ZoneSpec::set_size_zones);
         j->set_size_percent(0);
         return kBytesOrZones(v, j);
       }},
      {"numjobs", true, UintOption(&JobSpec::set_numjobs, 1, 4096)},
      {"write_bw_log", false, LogPrefixOption(&JobSpec::mutable_write_bw_log)},
      {"write_iops_log", false, LogPrefixOption(&JobSpec::mutable_write_iops_log)},
      {"write_lat_log", false, LogPrefixOption(&JobSpec::mutable_write_lat_log)},
      {"write_hist_log", false, LogPrefixOption(&JobSpec::mutable_write_hist_log)},
      {"log_avg_msec", true, UintOption(&JobSpec::set_log_avg_msec, 0, 86'400'000)},
      {"log_hist_msec", true, UintOption(&JobSpec::set_log_hist_msec, 0, 86'400'000)},
      {"runtime", true, DurationOption(&JobSpec::set_runtime_ns, 1'000'000'000)},
      {"time_based", false, BoolOption(&JobSpec::set_time_based)},
      {"directory", true, StringOption(&JobSpec::mutable_directory)},
      {"nfs_url", true,
       [](absl::string_view v, JobSpec* j) {
         auto url = ParseNfsUrl(v);
         if (!url.ok()) return url.status();
         j->set_nfs_url(url->ToString());
         return absl::OkStatus();
       }},
      {"filename", true, StringOption(&JobSpec::mutable_filename)},
      {"filename_format", true, [](absl::string_view v, JobSpec* j) {
         if (absl::Status s = GeneratedFileName(v, GeneratedFile{}).status(); !s.ok()) return s;
         j->set_filename_format(std::string(v));
         return absl::OkStatus();
       }},
      // Checked against the engine table in validation, where the worker's engines are known.
      {"ioengine", true, StringOption(&JobSpec::mutable_ioengine)},
      {"fsync", true, UintOption(&JobSpec::set_fsync_every, 0, UINT32_MAX)},
      {"direct", false, BoolOption(&JobSpec::set_direct)},
      {"invalidate", false, BoolOption(&JobSpec::set_invalidate)},
      {"iodepth", true, UintOption(&JobSpec::set_iodepth, 1, 4096)},
      {"hipri", false, BoolOption(&JobSpec::set_hipri)},
      {"fixedbufs", false, BoolOption(&JobSpec::set_fixedbufs)},
      {"registerfiles", false, BoolOption(&JobSpec::set_registerfiles)},
      {"sqthread_poll", false, BoolOption(&JobSpec::set_sqthread_poll)},
      {"buffered", false, BoolOption(&JobSpec::set_direct, /*negated=*/true)},
      {"loops", true, UintOption(&JobSpec::set_loops, 1, UINT32_MAX)},
      {"startdelay", true, DurationOption(&JobSpec::set_startdelay_ns, 1'000'000'000)},
      {"verify_across_workers_delay", true, DurationOption(&JobSpec::set_verify_across_workers_delay_ns, 1'000'000'000)},
      {"ramp_time", true, DurationOption(&JobSpec::set_ramp_time_ns, 1'000'000'000)},
      {"fdatasync", true, UintOption(&JobSpec::set_fdatasync_every, 0, UINT32_MAX)},
      {"end_fsync", false, BoolOption(&JobSpec::set_end_fsync)},
      {"fsync_on_close", false, BoolOption(&JobSpec::set_fsync_on_close)},
      {"thinktime", true, DurationOption(&JobSpec::set_thinktime_ns, 1'000)},  // fio: microseconds
      {"flow", true, UintOption(&JobSpec::set_flow, 0, 1000)},
      {"flow_id", true, UintOption(&JobSpec::set_flow_id, 0, UINT32_MAX)},
      {"flow_sleep", true, DurationOption(&JobSpec::set_flow_sleep_ns, 1'000)},  // fio: microseconds
      {"thinktime_blocks", true, UintOption(&JobSpec::set_thinktime_blocks, 1, UINT32_MAX)},
      {"rate", true, PerDirectionRate(&JobSpec::mutable_rate_bytes, true)},
      {"rate_iops", true, PerDirectionRate(&JobSpec::mutable_rate_iops, false)},
      {"rate_min", true, PerDirectionRate(&JobSpec::mutable_rate_min_bytes, true)},
      {"rate_iops_min", true, PerDirectionRate(&JobSpec::mutable_rate_iops_min, false)},
      {"rate_cycle", true, UintOption(&JobSpec::set_rate_cycle_ms, 1, 86'400'000)},
      {"io_submit_mode", true, [](absl::string_view v, JobSpec* j) {
         if (v != "inline" && v != "offload") return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not inline or offload"));
         j->set_io_submit_offload(v == "offload");
         return absl::OkStatus();
       }},
      {"rate_process", true, NamedOption(&JobSpec::set_rate_process, {{"linear", JobSpec::RATE_LINEAR}, {"poisson", JobSpec::RATE_POISSON}})},
      {"norandommap", false, BoolOption(&JobSpec::set_norandommap)},
      {"randrepeat", false, BoolOption(&JobSpec::set_randrepeat)},
      {"randseed", true, [](absl::string_view v, JobSpec* j) {
         uint64_t seed;
         if (!absl::SimpleAtoi(v, &seed)) return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not a number"));
         j->set_randseed(seed);
         return absl::OkStatus();
       }},
      {"zero_buffers", false, BoolOption(&JobSpec::set_zero_buffers)},
      {"refill_buffers", false, BoolOption(&JobSpec::set_refill_buffers)},
      {"scramble_buffers", false, BoolOption(&JobSpec::set_scramble_buffers)},
      {"offset", true, ZonedSizeOption(&JobSpec::set_offset, &v1::ZoneSpec::set_offset_zones)},
      {"io_size", true, ZonedSizeOption(&JobSpec::set_io_size, &v1::ZoneSpec::set_io_size_zones)},
      {"zonemode", true,
       NamedOption(&v1::ZoneSpec::set_mode, {{"none", v1::ZoneSpec::NONE}, {"strided", v1::ZoneSpec::STRIDED}, {"zbd", v1::ZoneSpec::ZBD}})},
      {"zonesize", true, SizeOption(&v1::ZoneSpec::set_size, UINT64_MAX)},
      {"zonerange", true, SizeOption(&v1::ZoneSpec::set_range, UINT64_MAX)},
      {"zonecapacity", true, SizeOption(&v1::ZoneSpec::set_capacity, UINT64_MAX)},
      {"zoneskip", true, ZonedSizeOption(&v1::ZoneSpec::set_skip, &v1::ZoneSpec::set_skip_zones)},
      {"max_open_zones", true, UintOption(&v1::ZoneSpec::set_max_open_zones, 0, kMaxOpenZones)},
      {"read_beyond_wp", false, BoolOption(&v1::ZoneSpec::set_read_beyond_wp)},
      {"zone_reset_threshold", true, FractionOption(&v1::ZoneSpec::set_reset_threshold)},
      {"zone_reset_frequency", true, FractionOption(&v1::ZoneSpec::set_reset_frequency)},
      {"log_offset", false, BoolOption(&JobSpec::set_log_offset)},
      {"unlink", false, BoolOption(&JobSpec::set_unlink)},
      {"bssplit", true, &SetBlockSizeSplit},
      {"nrfiles", true, UintOption(&JobSpec::set_nrfiles, 1, 65536)},
      {"filesize", true, SizeOption(&JobSpec::set_filesize, UINT64_MAX)},
      {"file_service_type", true, &SetFileService},
      {"create_on_open", false, BoolOption(&JobSpec::set_create_on_open)},
      {"overwrite", false, BoolOption(&JobSpec::set_overwrite)},
      {"stonewall", false, BoolOption(&JobSpec::set_stonewall)},
      {"new_group", false, BoolOption(&JobSpec::set_new_group)},
      {"wait_for", true, StringOption(&JobSpec::mutable_wait_for)},
      {"allow_file_create", false, BoolOption(&JobSpec::set_no_file_create, /*negated=*/true)},
      {"exitall", false, BoolOption(&JobSpec::set_exitall)},
      {"exit_what", true, NamedOption(&JobSpec::set_exit_what, {{"group", JobSpec::EXIT_GROUP}, {"stonewall", JobSpec::EXIT_STONEWALL},
                                                               {"all", JobSpec::EXIT_ALL}})},
      {"number_ios", true, SizeOption(&JobSpec::set_number_ios, UINT64_MAX)},
      {"group_reporting", false, BoolOption(&JobSpec::set_group_reporting)},
      {"verify", true, NamedOption(&JobSpec::set_verify, {{"0", JobSpec::VERIFY_NONE}, {"null", JobSpec::VERIFY_NONE},
                                                          {"md5", JobSpec::VERIFY_MD5}, {"crc64", JobSpec::VERIFY_CRC64},
                                                          {"crc32c", JobSpec::VERIFY_CRC32C}, {"crc32c-intel", JobSpec::VERIFY_CRC32C},
                                                          {"crc32", JobSpec::VERIFY_CRC32}, {"crc16", JobSpec::VERIFY_CRC16},
                                                          {"crc7", JobSpec::VERIFY_CRC7}, {"sha1", JobSpec::VERIFY_SHA1},
                                                          {"sha256", JobSpec::VERIFY_SHA256}, {"sha512", JobSpec::VERIFY_SHA512},
                                                          {"sha3-224", JobSpec::VERIFY_SHA3_224}, {"sha3-256", JobSpec::VERIFY_SHA3_256},
                                                          {"sha3-384", JobSpec::VERIFY_SHA3_384}, {"sha3-512", JobSpec::VERIFY_SHA3_512},
                                                          {"xxhash", JobSpec::VERIFY_XXHASH}, {"meta", JobSpec::VERIFY_META},
                                                          {"pattern", JobSpec::VERIFY_PATTERN_NO_HEADER}})},
      // fio: a pattern without verify= is verified as a pattern after the header.
      {"verify_pattern", true, [](absl::string_view v, JobSpec* j) {
         auto pattern = ParseDataPattern(v, /*block_offsets=*/true);
         if (!pattern.ok()) return pattern.status();
         *j->mutable_verify_pattern() = *std::move(pattern);
         if (j->verify() == JobSpec::VERIFY_NONE) j->set_verify(JobSpec::VERIFY_PATTERN);
         return absl::OkStatus();
       }},
      {"buffer_pattern", true, [](absl::string_view v, JobSpec* j) {
         auto pattern = ParseDataPattern(v, /*block_offsets=*/false);
         if (!pattern.ok()) return pattern.status();
         *j->mutable_buffer_pattern() = *std::move(pattern);
         return absl::OkStatus();
       }},
      {"verify_interval", true, SizeOption(&JobSpec::set_verify_interval, 1u << 30)},
      {"atomic", false, BoolOption(&JobSpec::set_atomic)},
      {"prio", true, UintOption(&JobSpec::set_prio_level, 0, 7)},
      {"prioclass", true, UintOption(&JobSpec::set_prio_class, 0, 3)},
      {"cmdprio_percentage", true, CommandPriorityValues(&v1::CommandPriorities::mutable_percent, 100)},
      {"cmdprio_class", true, CommandPriorityValues(&v1::CommandPriorities::mutable_priority_class, 3)},
      {"cmdprio", true, CommandPriorityValues(&v1::CommandPriorities::mutable_level, 7)},
      {"cmdprio_hint", true, CommandPriorityValues(&v1::CommandPriorities::mutable_hint, 7)},
      {"cmdprio_bssplit", true, &SetCommandPrioritySplit},
      {"log_prio", false, BoolOption(&JobSpec::set_log_prio)},
      {"sprandom", false, BoolOption(&JobSpec::set_sprandom)},
      {"spr_op", true, [](absl::string_view v, JobSpec* j) {
         double op;
         // fio's model needs write amplification 0.5/op + 0.7 above 1.
         if (!absl::SimpleAtod(v, &op) || !(op > 0 && op < 5.0 / 3)) {
           return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not an over-provisioning ratio above 0 and below 1.67 (0.15 is 15%)"));
         }
         j->set_spr_over_provisioning(op);
         return absl::OkStatus();
       }},
      {"spr_num_regions", true, UintOption(&JobSpec::set_spr_num_regions, 1, kMaxSprandomRegions)},
      {"offset_increment", true, SizeOption(&JobSpec::set_offset_increment, UINT64_MAX)},
      {"verify_backlog", true, UintOption(&JobSpec::set_verify_backlog, 0, kMaxVerifyBacklog)},
      {"verify_dump", false, BoolOption(&JobSpec::set_verify_dump)},
      {"verify_async", true, UintOption(&JobSpec::set_verify_async, 0, kMaxVerifyAsyncThreads)},
      {"error_dump", false, BoolOption(&JobSpec::set_error_dump_off, /*negated=*/true)},
      {"ignore_error", true, &SetIgnoreError},
      {"fill_device", false, BoolOption(&JobSpec::set_fill_device)},
      {"create_serialize", false, BoolOption(&JobSpec::set_create_in_parallel, /*negated=*/true)},
      {"verify_write_sequence", false, BoolOption(&JobSpec::set_verify_any_sequence, /*negated=*/true)},
      {"do_verify", false, BoolOption(&JobSpec::set_do_verify)},
      {"verify_across_workers", false, BoolOption(&JobSpec::set_verify_across_workers)},
      {"buffer_compress_percentage", true, UintOption(&JobSpec::set_buffer_compress_percentage, 0, 100)},
      {"dedupe_percentage", true, UintOption(&JobSpec::set_dedupe_percentage, 0, 100)},
      {"dedupe_mode", true, NamedOption(&JobSpec::set_dedupe_mode, {{"repeat", JobSpec::DEDUPE_REPEAT}, {"working_set", JobSpec::DEDUPE_WORKING_SET}})},
      {"dedupe_working_set_percentage", true, UintOption(&JobSpec::set_dedupe_working_set_percentage, 1, 100)},
      {"dedupe_global", false, BoolOption(&JobSpec::set_dedupe_global)},
      {"buffer_compress_chunk", true, UintOption(&JobSpec::set_buffer_compress_chunk, 16, 1u << 30)},
      {"verify_fatal", false, BoolOption(&JobSpec::set_verify_fatal)},
      {"description", true, StringOption(&JobSpec::mutable_description)},
      {"continue_on_error", true, [](absl::string_view v, JobSpec* j) {
         static const std::vector<std::pair<std::string, uint32_t>> kKinds = {
             {"none", 0}, {"0", 0}, {"read", 1}, {"write", 2}, {"io", 3}, {"verify", 0}, {"all", 3}, {"1", 3}};
         for (const auto& [name, bits] : kKinds) {
           if (v == name) {
             j->set_continue_on_error(bits);
             return absl::OkStatus();
           }
         }
         return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not none, read, write, io, verify or all"));
       }},
      // iofleet always runs job threads; fio's `thread` (threads instead of processes) is what
      // it does anyway.
      {"thread", false, [](absl::string_view v, JobSpec*) {
         bool b = false;
         return ParseBool(v, &b);
       }},
      {"kb_base", true, [](absl::string_view v, JobSpec*) {
         if (v == "1024") return absl::OkStatus();
         return absl::InvalidArgumentError("only kb_base=1024 (fio's default: k = 1024) is implemented");
       }},
      // fio's values; 1 and 0 are its old spellings of posix and none, truncate is none here
      // (layout sets the size with ftruncate after any allocation).
      {"fallocate", true, NamedOption(&JobSpec::set_fallocate, {{"native", JobSpec::FALLOCATE_NATIVE}, {"posix", JobSpec::FALLOCATE_POSIX},
                                                                {"keep", JobSpec::FALLOCATE_KEEP_SIZE}, {"none", JobSpec::FALLOCATE_NONE},
                                                                {"truncate", JobSpec::FALLOCATE_NONE}, {"1", JobSpec::FALLOCATE_POSIX},
                                                                {"0", JobSpec::FALLOCATE_NONE}})},
      {"ba", true, SizeOption(&JobSpec::set_blockalign, 1ull << 30)},
      {"bs_unaligned", false, BoolOption(&JobSpec::set_bs_unaligned)},
      {"random_distribution", true, &SetRandomDistribution},
      {"random_sequence_stride", true, BoolOption(&JobSpec::set_random_sequence_stride)},
      {"iodepth_batch", true, UintOption(&JobSpec::set_iodepth_batch_submit, 0, 4096)},
      {"iodepth_batch_complete_min", true, UintOption(&JobSpec::set_iodepth_batch_complete_min, 0, 4096)},
      {"iodepth_batch_complete_max", true, UintOption(&JobSpec::set_iodepth_batch_complete_max, 0, 4096)},
      {"percentile_list", true, &SetPercentileList},
      {"random_generator", true, [](absl::string_view v, JobSpec* j) {
         if (v != "tausworthe" && v != "lfsr" && v != "tausworthe64") {
           return absl::InvalidArgumentError(absl::StrCat("'", v, "'", DidYouMean(v, {"tausworthe", "lfsr", "tausworthe64"}),
                                                          " is not tausworthe, lfsr or tausworthe64"));
         }
         j->set_random_generator_lfsr(v == "lfsr");
         return absl::OkStatus();
       }},
      {"latency_target", true, DurationOption(&JobSpec::set_latency_target_ns, 1'000)},  // fio: microseconds
      {"latency_window", true, DurationOption(&JobSpec::set_latency_window_ns, 1'000)},
      {"latency_percentile", true, [](absl::string_view v, JobSpec* j) {
         double p;
         if (!absl::SimpleAtod(absl::StripSuffix(v, "%"), &p) || !(p > 0 && p <= 100)) {
           return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not a percentage in (0, 100]"));
         }
         j->set_latency_percentile(p);
         return absl::OkStatus();
       }},
      {"steadystate", true, &SetSteadyState},
      {"steadystate_duration", true, [](absl::string_view v, JobSpec* j) {
         auto ns = ParseDurationNs(v, 1'000'000'000);
         if (ns.ok()) j->mutable_steadystate()->set_duration_ns(*ns);
         return ns.status();
       }},
      {"steadystate_ramp_time", true, [](absl::string_view v, JobSpec* j) {
         auto ns = ParseDurationNs(v, 1'000'000'000);
         if (ns.ok()) j->mutable_steadystate()->set_ramp_ns(*ns);
         return ns.status();
       }},
      {"steadystate_check_interval", true, [](absl::string_view v, JobSpec* j) {
         auto ns = ParseDurationNs(v, 1'000'000'000);
         if (ns.ok() && *ns == 0) return absl::InvalidArgumentError("the check interval must be above 0");
         if (ns.ok()) j->mutable_steadystate()->set_check_interval_ns(*ns);
         return ns.status();
       }},
      {"cpus_allowed", true, [](absl::string_view v, JobSpec* j) { return SetIndexList(v, kMaxCpu, j->mutable_cpus_allowed()); }},
      {"cpus_allowed_policy", true, [](absl::string_view v, JobSpec* j) {
         if (v != "shared" && v != "split") return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not shared or split"));
         j->set_cpus_allowed_split(v == "split");
         return absl::OkStatus();
       }},
      {"numa_cpu_nodes", true, [](absl::string_view v, JobSpec* j) { return SetIndexList(v, kMaxNumaNode, j->mutable_numa_cpu_nodes()); }},
      {"numa_mem_policy", true, &SetNumaMemPolicy},
      {"disable_lat", false, BoolOption(&JobSpec::set_disable_lat)},
      {"disable_clat", false, BoolOption(&JobSpec::set_disable_clat)},
      {"disable_slat", false, BoolOption(&JobSpec::set_disable_slat)},
      {"gtod_reduce", false, [](absl::string_view v, JobSpec* j) {
         // fio: "enable all of the gettimeofday() reducing options (disable_clat, disable_slat,
         // disable_bw)" — and disable_lat, as its help says.
         bool b = false;
         if (absl::Status s = ParseBool(v, &b); !s.ok()) return s;
         j->set_disable_lat(b);
         j->set_disable_clat(b);
         j->set_disable_slat(b);
         return absl::OkStatus();
       }},
      {"clat_percentiles", false, BoolOption(&JobSpec::set_clat_percentiles)},
      {"lat_percentiles", false, BoolOption(&JobSpec::set_lat_percentiles)},
  };
  return kOptions;
}

// fio spells some options two ways: its aliases (`fio --cmdhelp=NAME` lists them), and
// `threads`, which fio takes for `thread`.
const absl::flat_hash_map<absl::string_view, absl::string_view>& FioAliases() {
  static const auto* const kAliases = new absl::flat_hash_map<absl::string_view, absl::string_view>{
      {"readwrite", "rw"},
      {"blocksize", "bs"},
      {"blockalign", "ba"},
      {"blocksize_range", "bsrange"},
      {"blocksize_unaligned", "bs_unaligned"},
      {"iodepth_batch_submit", "iodepth_batch"},
      {"iodepth_batch_complete", "iodepth_batch_complete_min"},
      {"io_limit", "io_size"},
      {"fill_fs", "fill_device"},
      {"fileoffset", "offset"},
      {"nr_files", "nrfiles"},
      {"timeout", "runtime"},
      {"iomem", "mem"},
      {"ratemin", "rate_min"},
      {"ratecycle", "rate_cycle"},
      {"wait_for_previous", "stonewall"},
      {"disable_bw", "disable_bw_measurement"},
      {"ss", "steadystate"},
      {"ss_dur", "steadystate_duration"},
      {"ss_ramp", "steadystate_ramp_time"},
      {"threads", "thread"},
  };
  return *kAliases;
}

absl::string_view CanonicalFioName(absl::string_view name) {
  auto it = FioAliases().find(name);
  return it == FioAliases().end() ? name : it->second;
}

// fio's defaults for what the file does not say.
JobSpec DefaultJob() {
  JobSpec job;
  job.set_rw(v1::SEQ_READ);
  job.set_rwmix_read(50);
  SetFixedBlockSize(&job, 4096);
  job.set_numjobs(1);
  job.set_ioengine("psync");
  job.set_iodepth(1);
  job.set_invalidate(true);
  job.set_loops(1);
  job.set_thinktime_blocks(1);
  job.set_randrepeat(true);
  job.set_scramble_buffers(true);
  job.set_iodepth_batch_submit(1);
  job.set_iodepth_batch_complete_min(1);
  job.set_clat_percentiles(true);
  job.set_nrfiles(1);
  job.set_file_service_switch(1);
  job.set_do_verify(true);
  return job;
}

}  // namespace iofleet

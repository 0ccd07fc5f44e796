#include "job/fio_job_file.h"

#include <fstream>
#include <functional>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/nearest_name.h"
#include "common/printable.h"
#include "common/nfs_url.h"
#include "common/status_macros.h"
#include "job/block_sizes.h"
#include "job/file_names.h"
#include "job/fio_option_names.h"
#include "common/units.h"
#include "job/job_validation.h"

namespace iofleet {
namespace {

// Applies one option's value to a job; returns a message (without location) on a bad value.
using OptionSetter = std::function<absl::Status(absl::string_view value, JobSpec* job)>;

struct FioOption {
  const char* name;
  bool needs_value;  // false: a bare "name" is allowed (boolean options)
  OptionSetter set;
};

absl::Status ParseBool(absl::string_view value, bool* out) {
  if (value.empty() || value == "1" || value == "true") *out = true;
  else if (value == "0" || value == "false") *out = false;
  else return absl::InvalidArgumentError(absl::StrCat("'", value, "' is not 0 or 1"));
  return absl::OkStatus();
}

// Setters for the common kinds of option, each writing one JobSpec field.
OptionSetter BoolOption(void (JobSpec::*set)(bool)) {
  return [set](absl::string_view v, JobSpec* j) {
    bool b = false;
    absl::Status s = ParseBool(v, &b);
    if (s.ok()) (j->*set)(b);
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

// A whole number in [min, max]; `transform` maps it to the stored value (e.g. 100 - x).
OptionSetter UintOption(void (JobSpec::*set)(uint32_t), uint32_t min, uint32_t max,
                        uint32_t (*transform)(uint32_t) = nullptr) {
  return [=](absl::string_view v, JobSpec* j) {
    uint32_t n;
    if (!absl::SimpleAtoi(v, &n) || n < min || n > max) {
      return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not a whole number from ", min, " to ", max));
    }
    (j->*set)(transform ? transform(n) : n);
    return absl::OkStatus();
  };
}

OptionSetter SizeOption(void (JobSpec::*set)(uint64_t), uint64_t max) {
  return [=](absl::string_view v, JobSpec* j) {
    auto size = ParseSize(v);
    if (!size.ok()) return size.status();
    if (*size > max) return absl::InvalidArgumentError(absl::StrCat("'", v, "' is larger than ", max, " bytes"));
    (j->*set)(*size);
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

// fio's rate=READ,WRITE (bytes/s with size suffixes) and rate_iops=READ,WRITE; one value
// applies to both directions, an empty part leaves that direction unlimited.
OptionSetter PerDirectionRate(google::protobuf::RepeatedField<uint64_t>* (JobSpec::*field)(), bool sizes) {
  return [=](absl::string_view v, JobSpec* j) {
    std::vector<absl::string_view> parts = absl::StrSplit(v, ',');
    if (parts.size() > 3) return absl::InvalidArgumentError(absl::StrCat("'", v, "' has more than three parts"));
    // fio's third part limits trims, which iofleet never issues: refused, not dropped.
    if (parts.size() == 3 && !absl::StripAsciiWhitespace(parts[2]).empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'", v, "': a rate for trims (the third part) is not supported (iofleet issues no trims)"));
    }
    google::protobuf::RepeatedField<uint64_t>* rates = (j->*field)();
    rates->Resize(2, 0);
    for (size_t i = 0; i < 2; ++i) {
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
    return absl::InvalidArgumentError(absl::StrCat("'", v, "': a split for trims (the third part) is not supported (iofleet issues no trims)"));
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

// fio's random_distribution: random, zipf:THETA, pareto:H, normal:DEV (percent).
absl::Status SetRandomDistribution(absl::string_view v, JobSpec* j) {
  const size_t colon = v.find(':');
  const absl::string_view kind = v.substr(0, colon);
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
                                                   DidYouMean(kind, {"random", "zipf", "pareto", "normal"}),
                                                   "; use random, zipf:THETA, pareto:H or normal:DEV"));
  }
  if (d->kind() != v1::RandomDistribution::UNIFORM) j->set_norandommap(true);  // repeats are the point
  return absl::OkStatus();
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
  if (colon != absl::string_view::npos) {
    auto modifier = ParseSize(value.substr(colon + 1));
    if (!modifier.ok()) return modifier.status();
    j->set_rw_modifier(*modifier);
  }
  static const std::vector<std::pair<std::string, ReadWrite>> kModes = {
      {"read", v1::SEQ_READ},      {"write", v1::SEQ_WRITE}, {"randread", v1::RAND_READ},
      {"randwrite", v1::RAND_WRITE}, {"rw", v1::SEQ_MIXED},  {"readwrite", v1::SEQ_MIXED},
      {"randrw", v1::RAND_MIXED}};
  std::vector<std::string> names;
  for (const auto& [name, mode] : kModes) {
    if (v == name) {
      j->set_rw(mode);
      return absl::OkStatus();
    }
    names.push_back(name);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown rw mode '", v, "'", DidYouMean(v, names),
                                                 "; use read, write, randread, randwrite, rw or randrw"));
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

const std::vector<FioOption>& Options() {
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
           return absl::OkStatus();
         }
         auto size = ParseSize(v);
         if (!size.ok()) return size.status();
         j->set_size(*size);
         j->set_size_percent(0);
         return absl::OkStatus();
       }},
      {"numjobs", true, UintOption(&JobSpec::set_numjobs, 1, 4096)},
      {"write_bw_log", true, StringOption(&JobSpec::mutable_write_bw_log)},
      {"write_iops_log", true, StringOption(&JobSpec::mutable_write_iops_log)},
      {"write_lat_log", true, StringOption(&JobSpec::mutable_write_lat_log)},
      {"write_hist_log", true, StringOption(&JobSpec::mutable_write_hist_log)},
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
      {"buffered", false, [](absl::string_view v, JobSpec* j) {
         bool b = true;
         absl::Status s = ParseBool(v, &b);
         if (s.ok()) j->set_direct(!b);
         return s;
       }},
      {"loops", true, UintOption(&JobSpec::set_loops, 1, UINT32_MAX)},
      {"startdelay", true, DurationOption(&JobSpec::set_startdelay_ns, 1'000'000'000)},
      {"verify_across_workers_delay", true, DurationOption(&JobSpec::set_verify_across_workers_delay_ns, 1'000'000'000)},
      {"ramp_time", true, DurationOption(&JobSpec::set_ramp_time_ns, 1'000'000'000)},
      {"fdatasync", true, UintOption(&JobSpec::set_fdatasync_every, 0, UINT32_MAX)},
      {"end_fsync", false, BoolOption(&JobSpec::set_end_fsync)},
      {"fsync_on_close", false, BoolOption(&JobSpec::set_fsync_on_close)},
      {"thinktime", true, DurationOption(&JobSpec::set_thinktime_ns, 1'000)},  // fio: microseconds
      {"thinktime_blocks", true, UintOption(&JobSpec::set_thinktime_blocks, 1, UINT32_MAX)},
      {"rate", true, PerDirectionRate(&JobSpec::mutable_rate_bytes, true)},
      {"rate_iops", true, PerDirectionRate(&JobSpec::mutable_rate_iops, false)},
      {"rate_process", true, [](absl::string_view v, JobSpec* j) {
         if (v == "linear") j->set_rate_process(v1::JobSpec::RATE_LINEAR);
         else if (v == "poisson") j->set_rate_process(v1::JobSpec::RATE_POISSON);
         else return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not linear or poisson"));
         return absl::OkStatus();
       }},
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
      {"offset", true, SizeOption(&JobSpec::set_offset, UINT64_MAX)},
      {"io_size", true, SizeOption(&JobSpec::set_io_size, UINT64_MAX)},
      {"io_limit", true, SizeOption(&JobSpec::set_io_size, UINT64_MAX)},
      {"unlink", false, BoolOption(&JobSpec::set_unlink)},
      {"bssplit", true, &SetBlockSizeSplit},
      {"nrfiles", true, UintOption(&JobSpec::set_nrfiles, 1, 65536)},
      {"filesize", true, SizeOption(&JobSpec::set_filesize, UINT64_MAX)},
      {"file_service_type", true, &SetFileService},
      {"create_on_open", false, BoolOption(&JobSpec::set_create_on_open)},
      {"overwrite", false, BoolOption(&JobSpec::set_overwrite)},
      {"stonewall", false, BoolOption(&JobSpec::set_stonewall)},
      {"wait_for_previous", false, BoolOption(&JobSpec::set_stonewall)},
      {"new_group", false, BoolOption(&JobSpec::set_new_group)},
      {"group_reporting", false, BoolOption(&JobSpec::set_group_reporting)},
      {"verify", true, [](absl::string_view v, JobSpec* j) {
         if (v == "crc32c" || v == "crc32c-intel") j->set_verify(v1::JobSpec::VERIFY_CRC32C);
         else if (v == "md5") j->set_verify(v1::JobSpec::VERIFY_MD5);
         else if (v == "0" || v == "null") j->set_verify(v1::JobSpec::VERIFY_NONE);
         else return absl::InvalidArgumentError(absl::StrCat("verify='", v, "' is not implemented; use crc32c or md5"));
         return absl::OkStatus();
       }},
      {"do_verify", false, BoolOption(&JobSpec::set_do_verify)},
      {"verify_across_workers", false, BoolOption(&JobSpec::set_verify_across_workers)},
      {"buffer_compress_percentage", true, UintOption(&JobSpec::set_buffer_compress_percentage, 0, 100)},
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
      {"fallocate", true, [](absl::string_view v, JobSpec*) {
         // Layout allocates with posix_fallocate, which is fio's default (native/posix).
         if (v == "native" || v == "posix" || v == "1") return absl::OkStatus();
         return absl::InvalidArgumentError(absl::StrCat("fallocate=", v, " is not implemented (layout uses posix_fallocate: native/posix)"));
       }},
      {"blockalign", true, SizeOption(&JobSpec::set_blockalign, 1ull << 30)},
      {"random_distribution", true, &SetRandomDistribution},
      {"iodepth_batch_submit", true, UintOption(&JobSpec::set_iodepth_batch_submit, 0, 4096)},
      {"iodepth_batch", true, UintOption(&JobSpec::set_iodepth_batch_submit, 0, 4096)},
      {"iodepth_batch_complete_min", true, UintOption(&JobSpec::set_iodepth_batch_complete_min, 0, 4096)},
      {"iodepth_batch_complete", true, UintOption(&JobSpec::set_iodepth_batch_complete_min, 0, 4096)},
      {"iodepth_batch_complete_max", true, UintOption(&JobSpec::set_iodepth_batch_complete_max, 0, 4096)},
      {"percentile_list", true, &SetPercentileList},
      {"clat_percentiles", false, BoolOption(&JobSpec::set_clat_percentiles)},
      {"lat_percentiles", false, BoolOption(&JobSpec::set_lat_percentiles)},
  };
  return kOptions;
}

// fio spells some options two ways.
absl::string_view CanonicalName(absl::string_view name) {
  if (name == "readwrite") return "rw";
  if (name == "blocksize") return "bs";
  return name;
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

// verify_across_workers=1 on a write job: its blocks are read back by another worker after
// every worker finished writing (a stonewalled read job of the same files, shifted by one
// worker), instead of by the writer itself.
absl::Status AddCrossWorkerVerifyJobs(RunSpec* spec) {
  RunSpec expanded = *spec;
  expanded.clear_jobs();
  for (const JobSpec& job : spec->jobs()) {
    JobSpec* writer = expanded.add_jobs();
    *writer = job;
    const bool reads_only = job.rw() == v1::SEQ_READ || job.rw() == v1::RAND_READ;
    if (!job.verify_across_workers()) continue;
    if (reads_only) {
      // A re-check of the next worker's files: the delay is a plain start delay.
      writer->set_startdelay_ns(job.startdelay_ns() + job.verify_across_workers_delay_ns());
      writer->set_verify_across_workers_delay_ns(0);
      continue;
    }
    const std::string where = absl::StrCat(job.location().file(), ":", job.location().line(), ": job '", job.name(),
                                           "': verify_across_workers ");
    auto bad = [&](absl::string_view why) { return absl::InvalidArgumentError(absl::StrCat(where, why)); };
    if (job.verify() == JobSpec::VERIFY_NONE) return bad("needs verify=crc32c or verify=md5");
    if (job.rw() != v1::SEQ_WRITE && job.rw() != v1::RAND_WRITE) {
      return bad(absl::StrCat("needs rw=write or rw=randwrite (not ", ReadWriteName(job.rw()), ")"));
    }
    if (!job.filename().empty()) return bad("needs one file per worker (remove filename=)");
    if (job.time_based() || job.runtime_ns() > 0 || job.io_size() > 0 || job.rw_modifier() > 0) {
      return bad("needs every block of the file written once (no time_based, runtime, io_size or rw modifier)");
    }
    if (MinBlockSize(job) != MaxBlockSize(job)) return bad("needs one block size (bs=, not bsrange or bssplit)");
    writer->set_do_verify(false);
    writer->set_verify_across_workers(false);
    writer->set_unlink(false);  // the files must outlive the write phase; the verify job unlinks
    writer->set_verify_across_workers_delay_ns(0);
    JobSpec* verifier = expanded.add_jobs();
    *verifier = job;
    verifier->set_name(absl::StrCat(job.name(), "-verify"));
    verifier->set_files_of_job(job.name());
    verifier->set_rw(v1::SEQ_READ);
    verifier->set_stonewall(true);
    verifier->set_do_verify(false);
    verifier->set_overwrite(false);
    verifier->set_create_on_open(false);
    verifier->set_end_fsync(false);
    verifier->set_fsync_on_close(false);
    verifier->set_startdelay_ns(job.verify_across_workers_delay_ns());
    verifier->set_verify_across_workers_delay_ns(0);
    verifier->set_ramp_time_ns(0);
    verifier->set_thinktime_ns(0);
    verifier->clear_rate_bytes();
    verifier->clear_rate_iops();
  }
  *spec = std::move(expanded);
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> KnownFioOptions() {
  std::vector<std::string> names = {"readwrite", "blocksize"};
  for (const FioOption& o : Options()) names.push_back(o.name);
  return names;
}

std::string ReadWriteName(ReadWrite rw) {
  switch (rw) {
    case v1::SEQ_READ: return "read";
    case v1::SEQ_WRITE: return "write";
    case v1::RAND_READ: return "randread";
    case v1::RAND_WRITE: return "randwrite";
    case v1::SEQ_MIXED: return "rw";
    case v1::RAND_MIXED: return "randrw";
    default: return "unset";
  }
}

namespace {

// One line of job text and where it came from (after include expansion).
struct SourceLine {
  std::string file;
  int line = 0;
  std::string text;
};

constexpr char kCommandLine[] = "command line";

std::string FileLine(const SourceLine& l) {
  if (l.file == kCommandLine) return absl::StrCat("command line argument ", l.line);
  return absl::StrCat(l.file, ":", l.line);
}

// Job files are small regular files: `include /dev/zero` or a FIFO must not hang the parser.
constexpr off_t kMaxJobFileBytes = 16 << 20;
// Lines longer than this are refused (fio itself reads lines of up to 8 KiB).
constexpr size_t kMaxLineBytes = 64 << 10;

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return absl::NotFoundError(absl::StrCat("cannot read job file ", path));
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat("job file ", path, " is not a regular file"));
  if (st.st_size > kMaxJobFileBytes) return absl::InvalidArgumentError(absl::StrCat("job file ", path, " is larger than 16 MiB"));
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read job file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Splits `text` into lines, replacing each "include FILE" line by FILE's lines (relative to
// the including file's directory, as fio resolves them).
absl::Status AppendLines(const std::string& text, const std::string& file_name, int depth,
                         std::vector<SourceLine>* out) {
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    // A job file is text with lines of sane length; anything else is refused before parsing.
    if (raw.find('\0') != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", number, ": a NUL byte: this is not a text job file"));
    }
    if (raw.size() > kMaxLineBytes) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", number, ": the line is ", raw.size(), " bytes long, above the maximum of ",
                                                     kMaxLineBytes));
    }
    absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    if (absl::StartsWith(stripped, "include") && (stripped.size() == 7 || absl::ascii_isspace(stripped[7]))) {
      const std::string where = absl::StrCat(file_name, ":", number);
      const std::string target(absl::StripAsciiWhitespace(stripped.substr(7)));
      if (target.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": include needs a file name"));
      if (depth >= 16) return absl::InvalidArgumentError(absl::StrCat(where, ": includes nested more than 16 deep (a cycle?)"));
      std::string path = target;
      if (path[0] != '/' && file_name.find('/') != std::string::npos) {
        path = absl::StrCat(file_name.substr(0, file_name.rfind('/') + 1), target);
      }
      auto included = ReadWholeFile(path);
      if (!included.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", included.status().message()));
      RETURN_IF_ERROR(AppendLines(*included, path, depth + 1, out));
      continue;
    }
    out->push_back({file_name, number, std::string(raw)});
  }
  return absl::OkStatus();
}

// fio's variables: ${NAME} or $NAME from the environment, and fio's own $ncpus, $pagesize,
// $mb_memory. An undefined variable is an error: running with an empty value would quietly
// run another workload.
absl::StatusOr<std::string> ExpandVariables(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out.push_back(text[i++]);
      continue;
    }
    std::string name;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      const size_t close = text.find('}', i + 2);
      if (close == absl::string_view::npos) return absl::InvalidArgumentError("unterminated ${...}");
      name = std::string(text.substr(i + 2, close - i - 2));
      i = close + 1;
    } else {
      size_t end = i + 1;
      while (end < text.size() && (absl::ascii_isalnum(text[end]) || text[end] == '_')) ++end;
      name = std::string(text.substr(i + 1, end - i - 1));
      i = end;
    }
    if (name.empty()) return absl::InvalidArgumentError("'$' without a variable name");
    if (name == "ncpus") {
      out += absl::StrCat(::sysconf(_SC_NPROCESSORS_ONLN));
    } else if (name == "pagesize") {
      out += absl::StrCat(::sysconf(_SC_PAGESIZE));
    } else if (name == "mb_memory") {
      out += absl::StrCat(static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE) / (1 << 20));
    } else if (const char* value = std::getenv(name.c_str()); value != nullptr) {
      out += value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("environment variable '", name, "' is not set"));
    }
  }
  return out;
}

absl::StatusOr<RunSpec> ParseLines(const std::vector<SourceLine>& lines, const std::string& source,
                                   const FioParseOptions& parse_options) {
  RunSpec spec;
  spec.set_source(source);
  JobSpec global = DefaultJob();
  JobSpec* current = nullptr;  // nullptr outside any section
  for (const SourceLine& source_line : lines) {
    auto fail = [&](absl::string_view message) {
      return absl::InvalidArgumentError(absl::StrCat(FileLine(source_line), ": ", Printable(message, 400)));
    };
    absl::string_view line = absl::StripAsciiWhitespace(source_line.text);
    if (line.empty() || line[0] == ';' || line[0] == '#') continue;
    if (line[0] == '[') {
      if (line.back() != ']' || line.size() < 3) {
        return fail(absl::StrCat("malformed section header '", line, "' (expected [name])"));
      }
      std::string name(absl::StripAsciiWhitespace(line.substr(1, line.size() - 2)));
      if (name == "global") {
        current = &global;
        continue;
      }
      for (const JobSpec& existing : spec.jobs()) {
        if (existing.name() == name) return fail(absl::StrCat("job '", name, "' is defined twice"));
      }
      current = spec.add_jobs();
      *current = global;
      current->set_name(name);
      current->mutable_location()->set_file(source_line.file);
      current->mutable_location()->set_line(source_line.line);
      continue;
    }
    if (current == nullptr) {
      return fail(absl::StrCat("option '", line, "' outside of a section: start with [global] or [jobname]"));
    }
    absl::string_view key = line, raw_value;
    bool has_value = false;
    if (size_t eq = line.find('='); eq != absl::string_view::npos) {
      key = absl::StripAsciiWhitespace(line.substr(0, eq));
      raw_value = absl::StripAsciiWhitespace(line.substr(eq + 1));
      has_value = true;
    }
    if (key.empty()) return fail(absl::StrCat("malformed line '", line, "' (expected option=value)"));
    const std::string name(CanonicalName(key));
    const FioOption* option = nullptr;
    for (const FioOption& o : Options()) {
      if (name == o.name) option = &o;
    }
    // Nothing in a job may run commands on a worker: refused outright, never skipped.
    if (name == "exec_prerun" || name == "exec_postrun" || (name == "ioengine" && absl::StrContains(raw_value, "exec"))) {
      return fail(absl::StrCat("'", line, "' is refused: iofleet never runs commands on workers"));
    }
    if (option == nullptr) {
      const auto& fio_names = FioOptionNames();
      if (std::find(fio_names.begin(), fio_names.end(), name) != fio_names.end()) {
        if (parse_options.ignore_unsupported) {
          spec.add_ignored_options(absl::StrCat(FileLine(source_line), ": ", line));
          continue;
        }
        return fail(absl::StrCat("fio option '", key, "' is not implemented by iofleet; ",
                                 "--ignore-unsupported runs without it (and says so in the report)"));
      }
      return fail(absl::StrCat("unknown option '", key, "'", DidYouMean(key, KnownFioOptions())));
    }
    auto value = ExpandVariables(raw_value);
    if (!value.ok()) return fail(absl::StrCat("option '", key, "': ", value.status().message()));
    if (option->needs_value && (!has_value || value->empty())) {
      return fail(absl::StrCat("option '", key, "' needs a value (", key, "=...)"));
    }
    // fio accepts name= in [global] (job files in the wild have it); each section still names its job.
    absl::Status status = option->set(*value, current);
    if (!status.ok()) return fail(absl::StrCat("bad value for ", key, ": ", status.message()));
  }
  if (spec.jobs().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no job sections (add [jobname] after [global])"));
  }
  for (JobSpec& job : *spec.mutable_jobs()) {
    // fio: filename=a:b:c names the job's files; size defaults to nrfiles x filesize.
    if (const size_t names = JobFileNames(job).size(); names > 1) job.set_nrfiles(static_cast<uint32_t>(names));
    if (job.size() == 0 && job.filesize() > 0) job.set_size(job.filesize() * std::max(1u, job.nrfiles()));
    if (!job.nfs_url().empty()) {
      // fio's nfs engine opens directory/filename inside the export nfs_url names.
      auto url = ParseNfsUrl(job.nfs_url());  // checked where the option was read
      if (!url.ok()) return url.status();
      if (!job.directory().empty() && job.directory()[0] == '/') {
        return absl::InvalidArgumentError(absl::StrCat(source, ": job '", job.name(), "': with nfs_url, directory='", job.directory(),
                                                       "' must be relative (a directory inside the export)"));
      }
      job.set_directory(job.directory().empty() ? url->ToString() : url->Child(job.directory()).ToString());
    }
  }
  RETURN_IF_ERROR(AddCrossWorkerVerifyJobs(&spec));
  return spec;
}

}  // namespace

absl::StatusOr<RunSpec> ParseFioJobText(const std::string& text, const std::string& file_name,
                                        const FioParseOptions& options) {
  std::vector<SourceLine> lines;
  RETURN_IF_ERROR(AppendLines(text, file_name, 0, &lines));
  return ParseLines(lines, file_name, options);
}

absl::StatusOr<RunSpec> ParseFioJobFile(const std::string& path, const FioParseOptions& options) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseFioJobText(*text, path, options);
}

absl::StatusOr<RunSpec> ParseFioCommandLine(const std::vector<std::string>& args, const FioParseOptions& parse_options) {
  const std::vector<std::string>& options = args;
  // fio's rule: options before the first --name are global; each --name starts a job.
  std::vector<SourceLine> lines = {{kCommandLine, 0, "[global]"}};
  int argument = 0;
  for (const std::string& option : options) {
    ++argument;
    if (!absl::StartsWith(option, "--")) {
      return absl::InvalidArgumentError(absl::StrCat("command line argument ", argument, ": '", option, "' is not a --option"));
    }
    const std::string body = option.substr(2);
    if (absl::StartsWith(body, "name=")) {
      lines.push_back({kCommandLine, argument, absl::StrCat("[", body.substr(5), "]")});
    } else {
      lines.push_back({kCommandLine, argument, body});
    }
  }
  if (std::none_of(options.begin(), options.end(), [](const std::string& o) { return absl::StartsWith(o, "--name="); })) {
    return absl::InvalidArgumentError("command line: job options need --name=JOB to start a job (as in fio)");
  }
  return ParseLines(lines, kCommandLine, parse_options);
}

}  // namespace iofleet

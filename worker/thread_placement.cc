#include "worker/thread_placement.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/errno_status.h"
#include "common/index_list.h"
#include "job/run_limits.h"

namespace iofleet {
namespace {

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrnoStatus(errno ? errno : ENOENT, path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string OnlineNodes(const std::string& sysfs) {
  auto online = ReadSmallFile(sysfs + "/online");
  return online.ok() ? std::string(absl::StripAsciiWhitespace(*online)) : "none";
}

// set_mempolicy(2)'s modes; glibc has no wrapper (libnuma's numaif.h has them).
constexpr int kMpolDefault = 0, kMpolPreferred = 1, kMpolBind = 2, kMpolInterleave = 3, kMpolLocal = 4;

absl::Status SetMemoryPolicy(const v1::JobSpec& job) {
  int mode = kMpolDefault;
  switch (job.numa_mem_policy()) {
    case v1::JobSpec::NUMA_MEM_UNSET: return absl::OkStatus();
    case v1::JobSpec::NUMA_MEM_DEFAULT: mode = kMpolDefault; break;
    case v1::JobSpec::NUMA_MEM_PREFER: mode = kMpolPreferred; break;
    case v1::JobSpec::NUMA_MEM_BIND: mode = kMpolBind; break;
    case v1::JobSpec::NUMA_MEM_INTERLEAVE: mode = kMpolInterleave; break;
    case v1::JobSpec::NUMA_MEM_LOCAL: mode = kMpolLocal; break;
    default: return absl::InvalidArgumentError("unknown numa_mem_policy");
  }
  constexpr unsigned kBitsPerWord = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(kMaxNumaNode / kBitsPerWord, 0);
  for (const uint32_t node : job.numa_mem_nodes()) {
    if (node >= kMaxNumaNode) return absl::InvalidArgumentError(absl::StrCat("numa node ", node, " is out of range"));
    // The kernel takes a mask with absent nodes as long as one is present; a typo'd node would
    // then quietly be left out, so each must exist.
    if (auto cpus = NumaNodeCpus(node); !cpus.ok()) {
      return absl::Status(cpus.status().code(), absl::StrCat("numa_mem_policy (nodes ", absl::StrJoin(job.numa_mem_nodes(), ","),
                                                             "): ", cpus.status().message()));
    }
    mask[node / kBitsPerWord] |= 1ul << (node % kBitsPerWord);
  }
  const bool has_nodes = !job.numa_mem_nodes().empty();
  if (::syscall(SYS_set_mempolicy, mode, has_nodes ? mask.data() : nullptr, has_nodes ? kMaxNumaNode + 1 : 0) != 0) {
    const int error = errno;
    return ErrnoStatus(error, absl::StrCat("numa_mem_policy (nodes ", absl::StrJoin(job.numa_mem_nodes(), ","),
                                           "; this host's online nodes: ", OnlineNodes("/sys/devices/system/node"), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> NumaNodeCpus(uint32_t node, const std::string& sysfs) {
  const std::string path = absl::StrCat(sysfs, "/node", node, "/cpulist");
  auto text = ReadSmallFile(path);
  if (!text.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("NUMA node ", node, " does not exist on this host (online nodes: ", OnlineNodes(sysfs), ")"));
  }
  // The kernel's list format, which fio's options copy; a node without CPUs has an empty one.
  const absl::string_view list = absl::StripAsciiWhitespace(*text);
  if (list.empty()) return std::vector<uint32_t>{};
  auto cpus = ParseIndexList(list, kMaxCpu);
  if (!cpus.ok()) return absl::DataLossError(absl::StrCat(path, ": cannot read '", list, "': ", cpus.status().message()));
  return cpus;
}

absl::Status PlaceThisThread(const v1::JobSpec& job, uint32_t jobnum) {
  // The CPUs the thread may use: cpus_allowed (one of them with split), narrowed to the NUMA
  // nodes' CPUs when both are given (fio applies both; the later wins where they overlap).
  std::vector<uint32_t> cpus(job.cpus_allowed().begin(), job.cpus_allowed().end());
  if (job.cpus_allowed_split() && !cpus.empty()) cpus = {cpus[jobnum % cpus.size()]};
  if (!job.numa_cpu_nodes().empty()) {
    std::vector<uint32_t> node_cpus;
    for (const uint32_t node : job.numa_cpu_nodes()) {
      auto of_node = NumaNodeCpus(node);
      if (!of_node.ok()) return absl::Status(of_node.status().code(), absl::StrCat("numa_cpu_nodes: ", of_node.status().message()));
      node_cpus.insert(node_cpus.end(), of_node->begin(), of_node->end());
    }
    std::sort(node_cpus.begin(), node_cpus.end());
    if (!cpus.empty()) {
      std::vector<uint32_t> both;
      std::set_intersection(cpus.begin(), cpus.end(), node_cpus.begin(), node_cpus.end(), std::back_inserter(both));
      if (both.empty()) return absl::FailedPreconditionError("cpus_allowed has no CPU on the numa_cpu_nodes");
      cpus = both;
    } else {
      cpus = node_cpus;
    }
  }
  if (!cpus.empty()) {
    cpu_set_t* set = CPU_ALLOC(kMaxCpu);
    const size_t size = CPU_ALLOC_SIZE(kMaxCpu);
    CPU_ZERO_S(size, set);
    for (const uint32_t cpu : cpus) CPU_SET_S(cpu, size, set);
    const int result = ::sched_setaffinity(0, size, set);
    const int error = errno;
    CPU_FREE(set);
    if (result != 0) {
      return ErrnoStatus(error, absl::StrCat("cpus_allowed/numa_cpu_nodes: CPUs ", absl::StrJoin(cpus, ","), " (this host has ",
                                             ::sysconf(_SC_NPROCESSORS_ONLN), " online)"));
    }
  }
  return SetMemoryPolicy(job);
}

}  // namespace iofleet

#include <dirent.h>

#include <string>
#include <vector>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "job/fio_job_file.h"
#include "job/job_validation.h"
#include "metrics/interval_metrics.h"

namespace iofleet {
namespace {

TEST(Configs, EveryJobFileParsesAndValidates) {
  const std::string dir = std::string(std::getenv("TEST_SRCDIR")) + "/iofleet/configs";
  DIR* d = ::opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  std::vector<std::string> files;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 4 && name.substr(name.size() - 4) == ".fio") files.push_back(dir + "/" + name);
  }
  ::closedir(d);
  EXPECT_GE(files.size(), 6u);
  for (const std::string& file : files) {
    auto spec = ParseFioJobFile(file);
    ASSERT_TRUE(spec.ok()) << spec.status();
    for (v1::JobSpec& job : *spec->mutable_jobs()) {
      if (job.directory().empty()) job.set_directory("/mnt/test");  // what --directory or a local run provides
    }
    EXPECT_TRUE(ValidateRunSpec(*spec).ok()) << file << ": " << ValidateRunSpec(*spec);
  }
}

// The names the code exports, as a scrape would list them (histograms as _bucket/_count/_sum).
std::set<std::string> ExportedNames() {
  std::set<std::string> names;
  for (const char* prefix : {"iofleet_worker", "iofleet_cluster"}) {
    auto metrics = IntervalMetrics::Serve("127.0.0.1:0", prefix);
    EXPECT_TRUE(metrics.ok()) << metrics.status();
    if (!metrics.ok()) continue;
    (*metrics)->Add({{"run", "r"}, {"job", "j"}, {"direction", "read"}}, 1, 4096, 0, {});
    (*metrics)->SetQueueDepth({{"run", "r"}, {"job", "j"}, {"direction", "read"}}, {}, 1);
    if (std::string(prefix) == "iofleet_cluster") {
      // The gauges the controller sets (controller/live_view.cc, controller/cluster_session.cc).
      (*metrics)->Gauge("iofleet_cluster_run_info", "").Set(1);
      (*metrics)->Gauge("iofleet_cluster_workers_expected", "").Set(1);
      (*metrics)->Gauge("iofleet_cluster_workers_reporting", "").Set(1);
      (*metrics)->Gauge("iofleet_cluster_workers_up", "").Set(1);
    }
    for (const auto& family : (*metrics)->registry().Collect()) {
      names.insert(family.name);
      for (const char* suffix : {"_bucket", "_count", "_sum"}) names.insert(family.name + suffix);
    }
  }
  return names;
}

// The Grafana dashboard is valid JSON and every metric its queries use is one the code exports.
TEST(Configs, GrafanaDashboardUsesExportedMetrics) {
  std::ifstream in(std::string(std::getenv("TEST_SRCDIR")) + "/iofleet/configs/grafana-iofleet.json");
  std::stringstream text;
  text << in.rdbuf();
  google::protobuf::Struct dashboard;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text.str(), &dashboard).ok());
  const std::set<std::string> exported = ExportedNames();
  int queries = 0;
  for (const auto& panel : dashboard.fields().at("panels").list_value().values()) {
    for (const auto& target : panel.struct_value().fields().at("targets").list_value().values()) {
      const std::string expr = target.struct_value().fields().at("expr").string_value();
      ++queries;
      const std::regex metric("iofleet_[a-z_]+");
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
        EXPECT_TRUE(exported.count(it->str())) << it->str() << " in " << expr;
      }
    }
  }
  EXPECT_GE(queries, 8);
}

}  // namespace
}  // namespace iofleet

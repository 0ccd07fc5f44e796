#include <dirent.h>

#include <string>
#include <vector>

#include <fstream>

#include "gtest/gtest.h"
#include "job/fio_job_file.h"
#include "job/job_validation.h"

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

// The Grafana dashboard is checked against what a real controller and worker export, in
// //tests:telemetry_e2e_test (PrometheusOnWorkerAndControllerMatchesTheReport).

}  // namespace
}  // namespace iofleet

// libFuzzer target: any bytes as a job file must give a RunSpec or an error — never a crash,
// a hang or a sanitizer report. Parsed specs also go through the resolution stage every run
// takes (placement, verify_across_workers, validation).
#include <cstddef>
#include <cstdint>
#include <string>

#include "job/fio_job_file.h"
#include "job/run_resolution.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto spec = iofleet::ParseFioJobText(text, "fuzz.fio");
  if (spec.ok()) {
    (void)iofleet::ResolveRunSpec(*spec, iofleet::RunPlacement{.default_directory = "/fuzz",
                                                               .local_workers = true,
                                                               .temporary_directory = []() -> absl::StatusOr<std::string> { return std::string("/tmp/fuzz"); }});
  }
  auto command_line = iofleet::ParseFioCommandLine({"--name=fuzz", std::string("--") + text});
  (void)command_line;
  return 0;
}

// libFuzzer target: any bytes as a job file must give a RunSpec or an error — never a crash,
// a hang or a sanitizer report. Valid specs also go through validation.
#include <cstddef>
#include <cstdint>
#include <string>

#include "job/fio_job_file.h"
#include "job/job_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto spec = iofleet::ParseFioJobText(text, "fuzz.fio");
  if (spec.ok()) (void)iofleet::ValidateRunSpec(*spec);
  auto command_line = iofleet::ParseFioCommandLine({"--name=fuzz", std::string("--") + text});
  (void)command_line;
  return 0;
}

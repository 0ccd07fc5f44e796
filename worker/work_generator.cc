#include "worker/work_generator.h"

#include <algorithm>

#include "job/block_sizes.h"

namespace iofleet {
namespace {

bool Reads(v1::ReadWrite rw) { return rw == v1::SEQ_READ || rw == v1::RAND_READ || rw == v1::SEQ_MIXED || rw == v1::RAND_MIXED; }
bool IsRandom(v1::ReadWrite rw) { return rw == v1::RAND_READ || rw == v1::RAND_WRITE || rw == v1::RAND_MIXED; }
bool IsMixed(v1::ReadWrite rw) { return rw == v1::SEQ_MIXED || rw == v1::RAND_MIXED; }

}  // namespace

WorkGenerator::WorkGenerator(const v1::JobSpec& job, size_t files, uint64_t seed)
    : job_(job),
      rng_(seed),
      files_(files),
      reads_(Reads(job.rw())),
      writes_(job.rw() != v1::SEQ_READ && job.rw() != v1::RAND_READ),
      random_(IsRandom(job.rw())),
      mixed_(IsMixed(job.rw())),
      holes_(!random_ && job.rw_modifier() > 0 && job.io_size() == 0),
      unit_(OffsetUnit(job)),
      file_size_(FileSize(job)),
      region_start_(job.offset()),
      pass_budget_(job.io_size() ? job.io_size() : job.size()) {
  for (File& f : files_) f.offsets = std::make_unique<RandomOffsets>(job_.random_distribution(), file_size_ / unit_, !job_.norandommap(), rng_());
}

void WorkGenerator::NewPass() {
  for (File& f : files_) {
    f.offsets->NewPass();
    f.cursor = 0;
    f.pass_bytes = 0;
    f.last_end = 0;
    f.run_length = 0;
    f.exhausted = false;
  }
  exhausted_files_ = 0;
  current_file_ = 0;
  ios_on_current_file_ = 0;
  pass_bytes_ = 0;
}

WorkGenerator::File& WorkGenerator::NextOfSeveralFiles() {
  const uint32_t every = job_.file_service_switch();  // 0 (unset) switches every IO, as 1
  switch (job_.file_service()) {
    case v1::JobSpec::SEQUENTIAL:
      // Stay on a file until its share of the pass is issued.
      while (files_[current_file_].pass_bytes >= file_size_ && current_file_ + 1 < files_.size()) ++current_file_;
      break;
    case v1::JobSpec::RANDOM_FILE:
      if (ios_on_current_file_ >= every) {
        current_file_ = rng_() % files_.size();
        ios_on_current_file_ = 0;
      }
      break;
    case v1::JobSpec::ROUNDROBIN:
    default:
      if (ios_on_current_file_ >= every) {
        current_file_ = (current_file_ + 1) % files_.size();
        ios_on_current_file_ = 0;
      }
      break;
  }
  ++ios_on_current_file_;
  return files_[current_file_];
}

IoTarget WorkGenerator::Next(bool is_read) {
  const uint64_t size = PickBlockSize(job_, is_read, rng_());
  File* chosen = &NextFile();
  for (size_t i = 0; holes_ && chosen->exhausted && i < files_.size(); ++i) chosen = &files_[(current_file_ = (current_file_ + 1) % files_.size())];
  File& file = *chosen;
  IoTarget target;
  target.file_index = static_cast<size_t>(&file - files_.data());
  uint64_t position;  // within the file's region
  if (random_) {
    // rw=randread:N: N IOs in a row, then a new random offset.
    if (job_.rw_modifier() > 1 && file.run_length % job_.rw_modifier() != 0 && file.last_end < file_size_) {
      position = file.last_end;
    } else {
      position = file.offsets->Next(rng_) * unit_;
      file.run_length = 0;
    }
    ++file.run_length;
  } else {
    if (file.cursor >= file_size_) file.cursor = 0;  // io_size beyond size wraps around
    position = file.cursor;
  }
  // Never past the end of the region, nor past the pass's bytes (fio trims the last IO).
  target.length = std::min({size, file_size_ - position, pass_budget_ - pass_bytes_});
  file.last_end = position + target.length;
  // rw=write:4k: sequential with a hole of that many bytes after each IO.
  if (!random_) file.cursor = position + target.length + job_.rw_modifier();
  if (holes_ && file.cursor >= file_size_ && !file.exhausted) {
    file.exhausted = true;
    ++exhausted_files_;
  }
  target.offset = region_start_ + position;
  file.pass_bytes += target.length;
  pass_bytes_ += target.length;
  return target;
}

}  // namespace iofleet

// The names of all of fio's own job options, whether or not iofleet implements them.
#ifndef IOFLEET_JOB_FIO_OPTION_NAMES_H_
#define IOFLEET_JOB_FIO_OPTION_NAMES_H_

#include <string>
#include <vector>

namespace iofleet {

const std::vector<std::string>& FioOptionNames();

}  // namespace iofleet

#endif  // IOFLEET_JOB_FIO_OPTION_NAMES_H_

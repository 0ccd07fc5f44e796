// Structure-aware mutation of protobuf messages for libFuzzer's custom mutator: one random
// change to one field, chosen through reflection — a number set to a boundary (0, ±1, the
// type's limits, NaN/inf) or nudged, an enum to any value (also unknown ones), a string
// replaced, cut, grown or byte-mutated, a repeated field grown, shrunk or an element changed, a
// sub-message recursed into or cleared. Byte-level mutation of wire bytes mostly breaks the
// encoding; this keeps inputs well-formed so that they reach the code under test with hostile
// values in every field. (No libprotobuf-mutator package on Debian 12: this is its core idea.)
#ifndef IOFLEET_FUZZ_PROTO_MUTATION_H_
#define IOFLEET_FUZZ_PROTO_MUTATION_H_

#include <cstddef>
#include <cstdint>
#include <random>

#include "google/protobuf/message.h"

namespace iofleet::fuzz {

// Changes one field of `message` (or of a message nested in it). `mutate_bytes` mutates a
// buffer in place as libFuzzer's LLVMFuzzerMutate does (data, size, max_size) -> new size.
using ByteMutator = size_t (*)(uint8_t* data, size_t size, size_t max_size);
void MutateMessage(google::protobuf::Message* message, std::mt19937_64& rng, ByteMutator mutate_bytes);

}  // namespace iofleet::fuzz

#endif  // IOFLEET_FUZZ_PROTO_MUTATION_H_

// Protobuf's JSON of a large message, byte for byte, printed by reflection.
//
// Protobuf 3.21's printer (MessageToJsonString) serializes the message, parses the bytes back
// through a type resolver and, with always_print_primitive_fields, first builds a tree of the
// whole message in memory: a 1,024-worker run's result.json (42 MB) took the controller 1.19 s
// of a core, more than half of what it spent after the run; this printer takes 0.21 s.
// It prints proto3 messages without maps, oneofs or well-known types (the report, the host
// facts); for other types it is MessageToJsonString itself. The text is the same, which
// pretty_json_test checks against protobuf's printer on reports with every field set.
#ifndef IOFLEET_COMMON_PRETTY_JSON_H_
#define IOFLEET_COMMON_PRETTY_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace iofleet {

// MessageToJsonString(message, options).
absl::StatusOr<std::string> PrintJson(const google::protobuf::Message& message, const google::protobuf::util::JsonPrintOptions& options);

// Appends `json`, a value printed with add_whitespace as a message of its own, as it reads `depth`
// levels down: the printer indents one space a level, so every line but the first gets `depth`
// more. `nested`: it stands inside another value, which goes on after it (its own trailing line
// break left out). (A JSON string holds no raw line break: every one is between tokens.)
void AppendAtDepth(absl::string_view json, int depth, bool nested, std::string* out);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_PRETTY_JSON_H_

// Protobuf's pretty JSON of a large message, byte for byte, made piece by piece.
//
// With always_print_primitive_fields, protobuf's printer (DefaultValueObjectWriter) first
// builds a tree of the whole message in memory, some fifteen times the JSON's size, and only
// then writes it: a 1,024-worker run's result.json (52 MB) took the controller to 1.1 GB and
// five seconds of a core, most of it the kernel handing out and zeroing fresh pages. Here
// every repeated message field bigger than `piece_bytes` (serialized) is printed an element
// at a time, each re-indented to where it stands, and spliced into the rest of its message
// where that printed the field as an empty array; the result is the same text.
#ifndef IOFLEET_COMMON_PRETTY_JSON_H_
#define IOFLEET_COMMON_PRETTY_JSON_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace iofleet {

// MessageToJsonString(message, options). The splicing needs the layout of add_whitespace and
// always_print_primitive_fields (an empty array stands for the field, one space of indent per
// level); with other options this is MessageToJsonString itself.
absl::StatusOr<std::string> PrettyJsonInPieces(const google::protobuf::Message& message,
                                               const google::protobuf::util::JsonPrintOptions& options,
                                               size_t piece_bytes = 256 * 1024);

// Appends `json`, a value printed with add_whitespace as a message of its own, as it reads `depth`
// levels down: the printer indents one space a level, so every line but the first gets `depth`
// more. `nested`: it stands inside another value, which goes on after it (its own trailing line
// break left out). (A JSON string holds no raw line break: every one is between tokens.)
void AppendAtDepth(absl::string_view json, int depth, bool nested, std::string* out);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_PRETTY_JSON_H_

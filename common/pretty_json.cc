#include "common/pretty_json.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"

namespace iofleet {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::util::JsonPrintOptions;

absl::Status Print(const Message& message, const JsonPrintOptions& options, std::string* json) {
  json->clear();
  const auto status = google::protobuf::util::MessageToJsonString(message, json, options);
  if (!status.ok()) return absl::InternalError(absl::StrCat("JSON of ", message.GetTypeName(), ": ", status.ToString()));
  return absl::OkStatus();
}

// Whether repeated message field `field` of `message` serializes to more than `piece_bytes`,
// by the sizes the top message's ByteSizeLong cached in every message below it (recomputing
// them here would walk the whole report again at every level it is split at).
bool Large(const Message& message, const FieldDescriptor* field, size_t piece_bytes) {
  if (!field->is_repeated() || field->is_map() || field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return false;
  const Reflection* reflection = message.GetReflection();
  size_t bytes = 0;
  for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
    bytes += static_cast<size_t>(reflection->GetRepeatedMessage(message, field, i).GetCachedSize());
    if (bytes > piece_bytes) return true;
  }
  return false;
}

// Appends `message` as it is printed `depth` levels down (the top: depth 0, not nested).
absl::Status AppendMessage(const Message& message, const JsonPrintOptions& options, size_t piece_bytes, int depth, bool nested,
                           std::string* out) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields, pieces;
  reflection->ListFields(message, &fields);
  google::protobuf::FieldMask rest_mask;
  for (const FieldDescriptor* field : fields) {
    if (Large(message, field, piece_bytes)) {
      pieces.push_back(field);
    } else {
      rest_mask.add_paths(field->name());
    }
  }
  std::string json;
  if (pieces.empty()) {
    if (absl::Status printed = Print(message, options, &json); !printed.ok()) return printed;
    AppendAtDepth(json, depth, nested, out);
    return absl::OkStatus();
  }
  // The message without its large fields, which it prints as empty arrays ("name": [] on a
  // line of their own, one level in: the only such line, since deeper ones are indented more).
  std::unique_ptr<Message> rest(message.New());
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(message, rest_mask, google::protobuf::util::FieldMaskUtil::MergeOptions(),
                                                       rest.get());
  if (absl::Status printed = Print(*rest, options, &json); !printed.ok()) return printed;
  rest.reset();
  // Spliced in the order the printer put them (where each field's empty array stands).
  std::vector<std::pair<size_t, const FieldDescriptor*>> places;
  for (const FieldDescriptor* field : pieces) {
    const std::string empty = absl::StrCat("\n \"", options.preserve_proto_field_names ? field->name() : field->json_name(), "\": []");
    const size_t at = json.find(empty);
    if (at == std::string::npos) {
      return absl::InternalError(absl::StrCat("JSON of ", message.GetTypeName(), ": field ", field->name(), " not found to splice"));
    }
    places.emplace_back(at + empty.size() - 2, field);  // where its "[]" is
  }
  std::sort(places.begin(), places.end());
  size_t done = 0;  // of json
  for (const auto& [brackets, field] : places) {
    // Up to the '[', then the elements one level further in than the field.
    AppendAtDepth(absl::string_view(json).substr(done, brackets - done), depth, /*nested=*/false, out);
    done = brackets + 2;
    out->push_back('[');
    const int element_depth = depth + 2;
    for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
      if (i > 0) out->push_back(',');
      out->push_back('\n');
      out->append(static_cast<size_t>(element_depth), ' ');
      if (absl::Status appended = AppendMessage(reflection->GetRepeatedMessage(message, field, i), options, piece_bytes, element_depth,
                                                /*nested=*/true, out);
          !appended.ok()) {
        return appended;
      }
    }
    out->push_back('\n');
    out->append(static_cast<size_t>(depth + 1), ' ');
    out->push_back(']');
  }
  const absl::string_view remaining = absl::string_view(json).substr(done);
  AppendAtDepth(remaining, depth, nested, out);
  return absl::OkStatus();
}

}  // namespace

void AppendAtDepth(absl::string_view json, int depth, bool nested, std::string* out) {
  if (nested) {
    while (!json.empty() && json.back() == '\n') json.remove_suffix(1);
  }
  if (depth == 0) {
    out->append(json.data(), json.size());
    return;
  }
  // (String values never hold a raw line break: JSON escapes it.)
  for (size_t start = 0;;) {
    const size_t newline = json.find('\n', start);
    if (newline == absl::string_view::npos) {
      const absl::string_view last = json.substr(start);
      out->append(last.data(), last.size());
      return;
    }
    out->append(json.data() + start, newline + 1 - start);
    out->append(static_cast<size_t>(depth), ' ');
    start = newline + 1;
  }
}

absl::StatusOr<std::string> PrettyJsonInPieces(const Message& message, const JsonPrintOptions& options, size_t piece_bytes) {
  std::string json;
  if (!options.add_whitespace || !options.always_print_primitive_fields) {
    if (absl::Status printed = Print(message, options, &json); !printed.ok()) return printed;
    return json;
  }
  (void)message.ByteSizeLong();  // caches every message's size for Large
  if (absl::Status appended = AppendMessage(message, options, piece_bytes, 0, /*nested=*/false, &json); !appended.ok()) return appended;
  return json;
}

}  // namespace iofleet

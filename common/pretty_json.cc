#include "common/pretty_json.h"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/wrappers.pb.h"

namespace iofleet {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::util::JsonPrintOptions;

// Whether every message type reachable from `root` is one this printer prints as protobuf does:
// proto3, no maps, no well-known types (each has a JSON form of its own), no float or bytes
// fields (their own number and base64 forms), no oneof and at most one optional field per
// message (where protobuf puts several, or a oneof's member, is not checked here). Cached per
// type: asked once per report.
bool ReflectionPrints(const Descriptor* root) {
  static std::mutex mu;
  static auto* known = new std::unordered_map<const Descriptor*, bool>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known->find(root); it != known->end()) return it->second;
  std::vector<const Descriptor*> stack{root};
  std::unordered_set<const Descriptor*> visited{root};
  bool printable = true;
  while (printable && !stack.empty()) {
    const Descriptor* type = stack.back();
    stack.pop_back();
    printable = type->file()->syntax() == FileDescriptor::SYNTAX_PROTO3 && type->file()->package() != "google.protobuf" &&
                !type->options().map_entry() && type->real_oneof_decl_count() == 0 && type->oneof_decl_count() <= 1;
    for (int i = 0; printable && i < type->field_count(); ++i) {
      const FieldDescriptor* field = type->field(i);
      printable = !field->is_map() && field->type() != FieldDescriptor::TYPE_FLOAT && field->type() != FieldDescriptor::TYPE_BYTES &&
                  field->type() != FieldDescriptor::TYPE_GROUP;
      if (field->type() == FieldDescriptor::TYPE_MESSAGE && visited.insert(field->message_type()).second) {
        stack.push_back(field->message_type());
      }
    }
  }
  (*known)[root] = printable;
  return printable;
}

// A code point protobuf's JsonEscaping writes as \u escapes although it is valid UTF-8:
// controls, and the invisible format characters of its table.
bool EscapedCodePoint(uint32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0xad || (c >= 0x600 && c <= 0x603) || c == 0x6dd || c == 0x70f ||
         c == 0x17b4 || c == 0x17b5 || (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x2064) ||
         (c >= 0x206a && c <= 0x206f) || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb) || (c >= 0x1d173 && c <= 0x1d17a) ||
         c == 0xe0001 || (c >= 0xe0020 && c <= 0xe007f);
}

void AppendUnicodeEscape(uint32_t unit, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char escape[6] = {'\\', 'u', kHex[(unit >> 12) & 0xf], kHex[(unit >> 8) & 0xf], kHex[(unit >> 4) & 0xf], kHex[unit & 0xf]};
  out->append(escape, sizeof escape);
}

// Decodes the UTF-8 sequence starting at s[i] into *code_point and returns its length, or 0
// where it is not valid (overlong, a surrogate, past U+10FFFF, cut short).
size_t DecodeUtf8(absl::string_view s, size_t i, uint32_t* code_point) {
  const auto byte = [&s](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t lead = byte(i);
  size_t length;
  uint32_t c, least;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, c = lead & 0x1f, least = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, c = lead & 0x0f, least = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, c = lead & 0x07, least = 0x10000;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3f);
  }
  if (c < least || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *code_point = c;
  return length;
}

// A JSON string as protobuf writes it; false (nothing appended) where `s` is not valid UTF-8,
// which protobuf repairs in ways of its own.
bool AppendEscaped(absl::string_view s, std::string* out) {
  const size_t mark = out->size();
  out->push_back('"');
  size_t plain = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size();) {
    const uint8_t b = static_cast<uint8_t>(s[i]);
    if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\' && b != '<' && b != '>') {
      ++i;
      continue;
    }
    uint32_t c = b;
    size_t length = 1;
    if (b >= 0x80) {
      length = DecodeUtf8(s, i, &c);
      if (length == 0) {
        out->resize(mark);
        return false;
      }
      if (!EscapedCodePoint(c)) {
        i += length;
        continue;
      }
    }
    out->append(s.data() + plain, i - plain);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\t': out->append("\\t"); break;
      case '\n': out->append("\\n"); break;
      case '\f': out->append("\\f"); break;
      case '\r': out->append("\\r"); break;
      default:
        if (c >= 0x10000) {
          AppendUnicodeEscape(0xd800 + ((c - 0x10000) >> 10), out);
          AppendUnicodeEscape(0xdc00 + ((c - 0x10000) & 0x3ff), out);
        } else {
          AppendUnicodeEscape(c, out);
        }
    }
    i += length;
    plain = i;
  }
  out->append(s.data() + plain, s.size() - plain);
  out->push_back('"');
  return true;
}

// A double as protobuf writes it (SimpleDtoa: printf's %.15g where that reads back as the same
// double, else %.17g; the non-finite ones as strings). std::to_chars with a precision is
// printf's %g without the locale, and several times faster than snprintf and strtod: a large
// report has hundreds of thousands of doubles.
void AppendDouble(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
    return;
  }
  if (std::isinf(value)) {
    out->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buffer[32];
  std::to_chars_result printed = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, DBL_DIG);
  double read_back = 0;
  std::from_chars(buffer, printed.ptr, read_back);
  if (read_back != value) printed = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, DBL_DIG + 2);
  out->append(buffer, static_cast<size_t>(printed.ptr - buffer));
}

class Printer {
 public:
  Printer(const JsonPrintOptions& options, std::string* out) : options_(options), out_(*out) {}

  void PrintMessage(const Message& message, int depth) {
    const Reflection* reflection = message.GetReflection();
    out_.push_back('{');
    bool any = false;
    for (const FieldDescriptor* field : FieldOrder(message.GetDescriptor())) {
      if (!Printed(message, reflection, field)) continue;
      if (any) out_.push_back(',');
      any = true;
      NewLine(depth + 1);
      out_.push_back('"');
      out_.append(options_.preserve_proto_field_names ? field->name() : field->json_name());
      out_.append(options_.add_whitespace ? "\": " : "\":");
      if (!field->is_repeated()) {
        PrintValue(message, reflection, field, -1, depth + 1);
        continue;
      }
      const int size = reflection->FieldSize(message, field);
      out_.push_back('[');
      for (int k = 0; k < size; ++k) {
        if (k > 0) out_.push_back(',');
        NewLine(depth + 2);
        PrintValue(message, reflection, field, k, depth + 2);
      }
      if (size > 0) NewLine(depth + 1);
      out_.push_back(']');
    }
    if (any) NewLine(depth);
    out_.push_back('}');
  }

 private:
  // What protobuf prints: a field with presence (a message, a oneof member, a proto3 optional)
  // when set; any other with always_print_primitive_fields, else when not its default.
  bool Printed(const Message& message, const Reflection* reflection, const FieldDescriptor* field) const {
    if (field->is_repeated()) return options_.always_print_primitive_fields || reflection->FieldSize(message, field) > 0;
    if (field->has_presence()) return reflection->HasField(message, field);
    return options_.always_print_primitive_fields || reflection->HasField(message, field);
  }

  // The order protobuf prints a type's fields in. Without always_print_primitive_fields it
  // prints the serialized fields as they come, by number. With it, it prints a tree whose nodes
  // it lays out in declaration order, but for a proto3 optional field (a oneof of its own): it
  // makes no node for that, so when set it ends up last.
  const std::vector<const FieldDescriptor*>& FieldOrder(const Descriptor* type) {
    std::vector<const FieldDescriptor*>& order = orders_[type];
    if (!order.empty() || type->field_count() == 0) return order;
    for (int i = 0; i < type->field_count(); ++i) order.push_back(type->field(i));
    if (!options_.always_print_primitive_fields) {
      std::sort(order.begin(), order.end(), [](const FieldDescriptor* a, const FieldDescriptor* b) { return a->number() < b->number(); });
    } else {
      std::stable_partition(order.begin(), order.end(), [](const FieldDescriptor* f) { return f->containing_oneof() == nullptr; });
    }
    return order;
  }

  void NewLine(int depth) {
    if (!options_.add_whitespace) return;
    out_.push_back('\n');
    out_.append(static_cast<size_t>(depth), ' ');
  }

  // Element `index` of a repeated field, or (-1) the singular field's value.
  void PrintValue(const Message& message, const Reflection* r, const FieldDescriptor* field, int index, int depth) {
    const bool one = index < 0;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(&out_, one ? r->GetInt32(message, field) : r->GetRepeatedInt32(message, field, index));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        absl::StrAppend(&out_, one ? r->GetUInt32(message, field) : r->GetRepeatedUInt32(message, field, index));
        break;
      case FieldDescriptor::CPPTYPE_INT64:  // as strings: JSON's numbers are doubles
        absl::StrAppend(&out_, "\"", one ? r->GetInt64(message, field) : r->GetRepeatedInt64(message, field, index), "\"");
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        absl::StrAppend(&out_, "\"", one ? r->GetUInt64(message, field) : r->GetRepeatedUInt64(message, field, index), "\"");
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        AppendDouble(one ? r->GetDouble(message, field) : r->GetRepeatedDouble(message, field, index), &out_);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        out_.append((one ? r->GetBool(message, field) : r->GetRepeatedBool(message, field, index)) ? "true" : "false");
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int number = one ? r->GetEnumValue(message, field) : r->GetRepeatedEnumValue(message, field, index);
        const EnumValueDescriptor* value = field->enum_type()->FindValueByNumber(number);
        if (value == nullptr || options_.always_print_enums_as_ints) {
          absl::StrAppend(&out_, number);
        } else {
          absl::StrAppend(&out_, "\"", value->name(), "\"");
        }
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& text = one ? r->GetStringReference(message, field, &scratch)
                                      : r->GetRepeatedStringReference(message, field, index, &scratch);
        if (!AppendEscaped(text, &out_)) AppendRepaired(text);
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        PrintMessage(one ? r->GetMessage(message, field) : r->GetRepeatedMessage(message, field, index), depth);
        break;
      default:  // CPPTYPE_FLOAT: excluded by ReflectionPrints
        break;
    }
  }

  // A string that is not valid UTF-8 (a worker's path or error text can hold any bytes), as
  // protobuf's printer repairs it: printed by protobuf as a google.protobuf.StringValue, whose
  // JSON is the bare string.
  void AppendRepaired(const std::string& text) {
    google::protobuf::StringValue value;
    value.set_value(text);
    std::string json;
    if (google::protobuf::util::MessageToJsonString(value, &json).ok()) {
      out_.append(json);
    } else {
      out_.append("\"\"");
    }
  }

  const JsonPrintOptions& options_;
  std::string& out_;
  std::unordered_map<const Descriptor*, std::vector<const FieldDescriptor*>> orders_;
};

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

absl::StatusOr<std::string> PrintJson(const Message& message, const JsonPrintOptions& options) {
  std::string json;
  if (!ReflectionPrints(message.GetDescriptor())) {
    const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
    if (!status.ok()) return absl::InternalError(absl::StrCat("JSON of ", message.GetTypeName(), ": ", status.ToString()));
    return json;
  }
  // Room for the whole text up front. Grown by doubling, a 1,024-worker run's result.json (61 MB)
  // was copied into fresh pages again and again: a fifth of the time spent printing it. Pages
  // reserved but never written cost nothing. Printed with whitespace, a run's reports came to
  // 3.4-5.2x their wire size, so this rarely needs a second allocation.
  json.reserve(message.ByteSizeLong() * (options.add_whitespace ? 6 : 4) + 64);
  Printer(options, &json).PrintMessage(message, 0);
  if (options.add_whitespace) json.push_back('\n');
  return json;
}

}  // namespace iofleet

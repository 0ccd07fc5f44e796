#include "fuzz/proto_mutation.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"

namespace iofleet::fuzz {

void MutateMessageAt(google::protobuf::Message* message, std::mt19937_64& rng, ByteMutator mutate_bytes, int depth);

namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

template <typename T>
T Pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  return values.begin()[rng() % values.size()];
}

// A boundary or a nudge of `value`, for any integer type.
template <typename T>
T MutateInteger(T value, std::mt19937_64& rng) {
  using L = std::numeric_limits<T>;
  // Arithmetic in uint64_t: it wraps where signed arithmetic would be undefined.
  const uint64_t v = static_cast<uint64_t>(value);
  switch (rng() % 6) {
    case 0: return Pick<T>(rng, {T(0), T(1), L::max(), L::min(), T(L::max() / 2 + 1), static_cast<T>(-1)});
    case 1: return static_cast<T>(v + 1);
    case 2: return static_cast<T>(v - 1);
    case 3: return static_cast<T>(v * 2 + 1);
    case 4: return static_cast<T>(uint64_t{1} << (rng() % (8 * sizeof(T))));  // powers of two: sizes, counts
    default: return static_cast<T>(rng());
  }
}

template <typename T>
T MutateFloating(T value, std::mt19937_64& rng) {
  using L = std::numeric_limits<T>;
  switch (rng() % 4) {
    case 0: return Pick<T>(rng, {T(0), T(-1), T(1), L::quiet_NaN(), L::infinity(), -L::infinity(), L::max(), L::denorm_min()});
    case 1: return value * 2;
    case 2: return -value;
    default: return static_cast<T>(static_cast<double>(rng()) / 1e6 - 1e12);
  }
}

int MutateEnum(const EnumDescriptor* type, std::mt19937_64& rng) {
  // A value the schema names, or (1 in 4) a number it does not: the receiver must cope.
  if (rng() % 4 == 0) return static_cast<int>(rng() % 1000) - 10;
  return type->value(static_cast<int>(rng() % type->value_count()))->number();
}

// proto3 strings must be UTF-8 (gRPC refuses the message otherwise, so the worker never sees
// it): bytes of a mutated string outside ASCII are folded into it.
std::string AsciiOnly(std::string value) {
  for (char& c : value) c = static_cast<char>(c & 0x7f);
  return value;
}

std::string MutateString(std::string value, std::mt19937_64& rng, ByteMutator mutate_bytes) {
  switch (rng() % 5) {
    case 0:
      return Pick<const char*>(rng, {"", "/", "..", "../../etc", "/etc/passwd", "a:b", "c\\:d", "nfs://127.0.0.1/x", "%s%n", "\u00e9\u65e5",
                                     "a\nb", "\x1b[2J"});
    case 1: return value.substr(0, value.empty() ? 0 : rng() % value.size());
    case 2: return value + std::string(1 + rng() % 300, static_cast<char>('a' + rng() % 26));
    default: {
      const size_t max = value.size() + 64;
      value.resize(max);
      const size_t size = mutate_bytes(reinterpret_cast<uint8_t*>(value.data()), max - 64, max);
      value.resize(size);
      return AsciiOnly(std::move(value));
    }
  }
}

void MutateSingular(Message* message, const FieldDescriptor* field, std::mt19937_64& rng, ByteMutator mutate_bytes, int depth);

void MutateRepeated(Message* message, const FieldDescriptor* field, std::mt19937_64& rng, ByteMutator mutate_bytes, int depth) {
  const Reflection* r = message->GetReflection();
  const int size = r->FieldSize(*message, field);
  const int action = size == 0 ? 0 : static_cast<int>(rng() % 4);
  if (action == 1) {  // drop the last element
    r->RemoveLast(message, field);
    return;
  }
  if (action == 0 && size < 64) {  // grow by one (a copy of another element, or a default)
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: r->AddInt32(message, field, MutateInteger<int32_t>(0, rng)); break;
      case FieldDescriptor::CPPTYPE_INT64: r->AddInt64(message, field, MutateInteger<int64_t>(0, rng)); break;
      case FieldDescriptor::CPPTYPE_UINT32: r->AddUInt32(message, field, MutateInteger<uint32_t>(0, rng)); break;
      case FieldDescriptor::CPPTYPE_UINT64: r->AddUInt64(message, field, MutateInteger<uint64_t>(0, rng)); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: r->AddDouble(message, field, MutateFloating<double>(0, rng)); break;
      case FieldDescriptor::CPPTYPE_FLOAT: r->AddFloat(message, field, MutateFloating<float>(0, rng)); break;
      case FieldDescriptor::CPPTYPE_BOOL: r->AddBool(message, field, rng() % 2); break;
      case FieldDescriptor::CPPTYPE_ENUM: r->AddEnumValue(message, field, MutateEnum(field->enum_type(), rng)); break;
      case FieldDescriptor::CPPTYPE_STRING: r->AddString(message, field, MutateString("", rng, mutate_bytes)); break;
      case FieldDescriptor::CPPTYPE_MESSAGE: {
        Message* added = r->AddMessage(message, field);
        if (size > 0) added->CopyFrom(r->GetRepeatedMessage(*message, field, static_cast<int>(rng() % size)));
        break;
      }
    }
    return;
  }
  if (size == 0) return;
  const int i = static_cast<int>(rng() % size);  // change one element
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: r->SetRepeatedInt32(message, field, i, MutateInteger(r->GetRepeatedInt32(*message, field, i), rng)); break;
    case FieldDescriptor::CPPTYPE_INT64: r->SetRepeatedInt64(message, field, i, MutateInteger(r->GetRepeatedInt64(*message, field, i), rng)); break;
    case FieldDescriptor::CPPTYPE_UINT32: r->SetRepeatedUInt32(message, field, i, MutateInteger(r->GetRepeatedUInt32(*message, field, i), rng)); break;
    case FieldDescriptor::CPPTYPE_UINT64: r->SetRepeatedUInt64(message, field, i, MutateInteger(r->GetRepeatedUInt64(*message, field, i), rng)); break;
    case FieldDescriptor::CPPTYPE_DOUBLE: r->SetRepeatedDouble(message, field, i, MutateFloating(r->GetRepeatedDouble(*message, field, i), rng)); break;
    case FieldDescriptor::CPPTYPE_FLOAT: r->SetRepeatedFloat(message, field, i, MutateFloating(r->GetRepeatedFloat(*message, field, i), rng)); break;
    case FieldDescriptor::CPPTYPE_BOOL: r->SetRepeatedBool(message, field, i, !r->GetRepeatedBool(*message, field, i)); break;
    case FieldDescriptor::CPPTYPE_ENUM: r->SetRepeatedEnumValue(message, field, i, MutateEnum(field->enum_type(), rng)); break;
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetRepeatedString(message, field, i, MutateString(r->GetRepeatedString(*message, field, i), rng, mutate_bytes));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      MutateMessageAt(r->MutableRepeatedMessage(message, field, i), rng, mutate_bytes, depth + 1);
      break;
  }
}

void MutateSingular(Message* message, const FieldDescriptor* field, std::mt19937_64& rng, ByteMutator mutate_bytes, int depth) {
  const Reflection* r = message->GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: r->SetInt32(message, field, MutateInteger(r->GetInt32(*message, field), rng)); break;
    case FieldDescriptor::CPPTYPE_INT64: r->SetInt64(message, field, MutateInteger(r->GetInt64(*message, field), rng)); break;
    case FieldDescriptor::CPPTYPE_UINT32: r->SetUInt32(message, field, MutateInteger(r->GetUInt32(*message, field), rng)); break;
    case FieldDescriptor::CPPTYPE_UINT64: r->SetUInt64(message, field, MutateInteger(r->GetUInt64(*message, field), rng)); break;
    case FieldDescriptor::CPPTYPE_DOUBLE: r->SetDouble(message, field, MutateFloating(r->GetDouble(*message, field), rng)); break;
    case FieldDescriptor::CPPTYPE_FLOAT: r->SetFloat(message, field, MutateFloating(r->GetFloat(*message, field), rng)); break;
    case FieldDescriptor::CPPTYPE_BOOL: r->SetBool(message, field, !r->GetBool(*message, field)); break;
    case FieldDescriptor::CPPTYPE_ENUM: r->SetEnumValue(message, field, MutateEnum(field->enum_type(), rng)); break;
    case FieldDescriptor::CPPTYPE_STRING: r->SetString(message, field, MutateString(r->GetString(*message, field), rng, mutate_bytes)); break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      if (r->HasField(*message, field) && rng() % 8 == 0) {
        r->ClearField(message, field);
      } else {
        MutateMessageAt(r->MutableMessage(message, field), rng, mutate_bytes, depth + 1);
      }
      break;
  }
}

}  // namespace

void MutateMessageAt(Message* message, std::mt19937_64& rng, ByteMutator mutate_bytes, int depth) {
  const auto* descriptor = message->GetDescriptor();
  if (descriptor->field_count() == 0 || depth > 8) return;
  const FieldDescriptor* field = descriptor->field(static_cast<int>(rng() % descriptor->field_count()));
  // Within a oneof, setting one member clears the others: that is a mutation too.
  if (field->is_repeated()) {
    MutateRepeated(message, field, rng, mutate_bytes, depth);
  } else {
    MutateSingular(message, field, rng, mutate_bytes, depth);
  }
}

void MutateMessage(Message* message, std::mt19937_64& rng, ByteMutator mutate_bytes) { MutateMessageAt(message, rng, mutate_bytes, 0); }

}  // namespace iofleet::fuzz

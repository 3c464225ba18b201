#include "core/models/safetensors.hpp"

#include "core/base/float_text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

namespace attnviz {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little endian; this reader maps it as it lies");

namespace {

using Json = nlohmann::json;

struct DtypeInfo {
  SafetensorsDtype dtype;
  const char* name;
  int size;
};

constexpr DtypeInfo kDtypes[] = {
    {SafetensorsDtype::BOOL, "BOOL", 1},       {SafetensorsDtype::U8, "U8", 1},
    {SafetensorsDtype::I8, "I8", 1},           {SafetensorsDtype::F8_E5M2, "F8_E5M2", 1},
    {SafetensorsDtype::F8_E4M3, "F8_E4M3", 1}, {SafetensorsDtype::I16, "I16", 2},
    {SafetensorsDtype::U16, "U16", 2},         {SafetensorsDtype::F16, "F16", 2},
    {SafetensorsDtype::BF16, "BF16", 2},       {SafetensorsDtype::I32, "I32", 4},
    {SafetensorsDtype::U32, "U32", 4},         {SafetensorsDtype::F32, "F32", 4},
    {SafetensorsDtype::F64, "F64", 8},         {SafetensorsDtype::I64, "I64", 8},
    {SafetensorsDtype::U64, "U64", 8},
};

std::optional<SafetensorsDtype> parse_dtype(const std::string& name) {
  for (const DtypeInfo& info : kDtypes)
    if (name == info.name) return info.dtype;
  return std::nullopt;
}

// Deeper nesting than this is no safetensors header (which nests 3 deep); refusing it before
// the JSON parser sees it keeps a hostile header from costing more than a scan.
constexpr int kMaxJsonDepth = 8;

bool nested_too_deeply(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

// A JSON number that is a whole number >= 0, or nullopt.
std::optional<std::uint64_t> whole_number(const Json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer()) {
    const std::int64_t v = value.get<std::int64_t>();
    if (v >= 0) return static_cast<std::uint64_t>(v);
  }
  return std::nullopt;
}

// A JSON value as a message shows it: at most 80 characters.
std::string shown_json(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// The name as a message shows it: quoted, with control characters escaped.
std::string shown_name(std::string_view name) {
  std::string out = "\"";
  for (const char c : name.substr(0, 200)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || c == '"' || c == '\\') {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  if (name.size() > 200) out += "...";
  return out + "\"";
}

}  // namespace

const char* dtype_name(SafetensorsDtype dtype) {
  for (const DtypeInfo& info : kDtypes)
    if (info.dtype == dtype) return info.name;
  return "?";
}

int dtype_size(SafetensorsDtype dtype) {
  for (const DtypeInfo& info : kDtypes)
    if (info.dtype == dtype) return info.size;
  return 1;
}

std::string SafetensorsTensor::shape_text() const {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x3FFu;
  std::uint32_t out = 0;
  if (exponent == 0x1F) {  // infinity (mantissa 0) or NaN (its payload kept)
    out = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal: rebias 15 -> 127
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // ±0
    out = sign;
  } else {  // subnormal: mantissa · 2^-24, normal in float: shift its leading 1 into place
    std::uint32_t e = 113;  // the exponent of 2^-14, biased for float
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    out = sign | (e << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return float_from_bits(out);
}

float bfloat16_to_float(std::uint16_t bits) {
  return float_from_bits(static_cast<std::uint32_t>(bits) << 16);
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  Result<MappedFile> mapped = MappedFile::open(path);
  if (!mapped) return mapped.status();
  SafetensorsFile result;
  result.file_ = std::move(*mapped);
  const std::uint8_t* const bytes = result.file_.data();
  const std::size_t size = result.file_.size();
  const auto fail = [&path](const std::string& why) { return Status::error(path + ": " + why); };

  if (size < 8)
    return fail("too short for a safetensors file (" + std::to_string(size) +
                " bytes; the header's length alone takes 8)");
  std::uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, bytes, 8);  // little endian, as the host (checked above)
  if (header_bytes > kMaxHeaderBytes)
    return fail("the header claims " + std::to_string(header_bytes) +
                " bytes, more than any model's (the limit is " + std::to_string(kMaxHeaderBytes) +
                "): not a safetensors file, or a damaged one");
  if (header_bytes > size - 8)
    return fail("the header claims " + std::to_string(header_bytes) +
                " bytes, past the end of the file (" + std::to_string(size) +
                " bytes): truncated, or not a safetensors file");
  const std::string_view header_text(reinterpret_cast<const char*>(bytes + 8),
                                     static_cast<std::size_t>(header_bytes));
  if (nested_too_deeply(header_text))
    return fail("the header is not a safetensors header (JSON nested more than " +
                std::to_string(kMaxJsonDepth) + " deep)");
  const Json header = Json::parse(header_text.begin(), header_text.end(), nullptr,
                                  /*allow_exceptions=*/false);
  if (header.is_discarded()) return fail("the header is not valid JSON");
  if (!header.is_object()) return fail("the header is not a JSON object");
  if (header.size() > kMaxTensors + 1)
    return fail("the header lists " + std::to_string(header.size()) + " tensors, more than " +
                std::to_string(kMaxTensors));

  const std::size_t data_offset = 8 + static_cast<std::size_t>(header_bytes);
  const std::size_t data_size = size - data_offset;
  const std::uint8_t* const data = bytes + data_offset;
  std::vector<SafetensorsTensor>& tensors = result.tensors_;
  tensors.reserve(header.size());
  for (const auto& [key, entry] : header.items()) {
    if (key == "__metadata__") {
      if (!entry.is_object()) return fail("__metadata__: not an object of strings");
      for (const auto& [name, value] : entry.items()) {
        if (!value.is_string()) return fail("__metadata__: " + shown_name(name) + ": not a string");
        result.metadata_[name] = value.get<std::string>();
      }
      continue;
    }
    const std::string at = "tensor " + shown_name(key) + ": ";
    if (!entry.is_object()) return fail(at + "not an object with dtype, shape and data_offsets");
    SafetensorsTensor tensor;
    tensor.name = key;

    const auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string()) return fail(at + "dtype missing or not text");
    const std::optional<SafetensorsDtype> known = parse_dtype(dtype->get<std::string>());
    if (!known)
      return fail(at + "unknown dtype " + shown_name(dtype->get<std::string>()) +
                  " (safetensors knows BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, "
                  "U32, F32, F64, I64, U64)");
    tensor.dtype = *known;

    const auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array()) return fail(at + "shape missing or not a list");
    if (shape->size() > kMaxRank)
      return fail(at + "shape has " + std::to_string(shape->size()) + " dimensions, more than " +
                  std::to_string(kMaxRank));
    // The element count, capped far above any file (each element takes at least one byte).
    constexpr std::uint64_t kCap = std::uint64_t{1} << 60;
    std::uint64_t elements = 1;
    for (const Json& dimension : *shape) {
      const std::optional<std::uint64_t> n = whole_number(dimension);
      if (!n || *n > kCap)
        return fail(at + "shape: " + shown_json(dimension) +
                    " is not a size (a whole number >= 0)");
      if (*n != 0 && elements > kCap / *n)
        return fail(at + "shape " + shown_json(*shape) + " holds more elements than any file");
      elements *= *n;
      tensor.shape.push_back(static_cast<std::int64_t>(*n));
    }
    tensor.elements = static_cast<std::int64_t>(elements);

    const auto offsets = entry.find("data_offsets");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2)
      return fail(at + "data_offsets missing or not [begin, end]");
    const std::optional<std::uint64_t> begin = whole_number((*offsets)[0]);
    const std::optional<std::uint64_t> end = whole_number((*offsets)[1]);
    if (!begin || !end)
      return fail(at + "data_offsets " + shown_json(*offsets) + " are not whole numbers >= 0");
    if (*begin > *end)
      return fail(at + "data_offsets " + shown_json(*offsets) + " end before they begin");
    if (*end > data_size)
      return fail(at + "data_offsets " + shown_json(*offsets) + " pass the end of the data (" +
                  std::to_string(data_size) + " bytes): the file is truncated or damaged");
    const std::uint64_t needed = elements * static_cast<std::uint64_t>(dtype_size(tensor.dtype));
    if (*end - *begin != needed)
      return fail(at + "data_offsets " + shown_json(*offsets) + " hold " +
                  std::to_string(*end - *begin) + " bytes, but shape " + tensor.shape_text() +
                  " of " + dtype_name(tensor.dtype) + " needs " + std::to_string(needed));
    tensor.begin = static_cast<std::size_t>(*begin);
    tensor.end = static_cast<std::size_t>(*end);
    tensor.bytes = data + tensor.begin;
    tensors.push_back(std::move(tensor));
  }

  // No two tensors share a byte.
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor& tensor : tensors) {
    if (tensor.begin == tensor.end) continue;  // empty: holds no byte
    if (previous && tensor.begin < previous->end)
      return fail("tensors " + shown_name(previous->name) + " (bytes " +
                  std::to_string(previous->begin) + " to " + std::to_string(previous->end) +
                  ") and " + shown_name(tensor.name) + " (bytes " + std::to_string(tensor.begin) +
                  " to " + std::to_string(tensor.end) + ") overlap");
    previous = &tensor;
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) result.index_.emplace(tensors[i].name, i);
  return result;
}

Result<const float*> SafetensorsFile::floats(
    const SafetensorsTensor& tensor, const std::function<float*(std::size_t)>& allocate) const {
  const auto count = static_cast<std::size_t>(tensor.elements);
  switch (tensor.dtype) {
    case SafetensorsDtype::F32: {
      if (reinterpret_cast<std::uintptr_t>(tensor.bytes) % alignof(float) == 0)
        return reinterpret_cast<const float*>(tensor.bytes);
      float* copy = allocate(count);
      if (count) std::memcpy(copy, tensor.bytes, count * sizeof(float));
      return static_cast<const float*>(copy);
    }
    case SafetensorsDtype::F16:
    case SafetensorsDtype::BF16: {
      float* converted = allocate(count);
      const bool half = tensor.dtype == SafetensorsDtype::F16;
      for (std::size_t i = 0; i < count; ++i) {
        std::uint16_t bits = 0;
        std::memcpy(&bits, tensor.bytes + 2 * i, 2);
        converted[i] = half ? half_to_float(bits) : bfloat16_to_float(bits);
      }
      return static_cast<const float*>(converted);
    }
    default:
      return Status::error(path() + ": tensor " + shown_name(tensor.name) + ": dtype " +
                           dtype_name(tensor.dtype) +
                           " cannot be read as weights (AttnViz reads F32, F16 and BF16)");
  }
}

}  // namespace attnviz

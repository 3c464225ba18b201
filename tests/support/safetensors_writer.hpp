// A safetensors writer of the tests' own (sharing no code with core/models/safetensors.cpp):
// tensors of F32, F16 or BF16 values, or raw bytes, written with an 8-byte header length and a
// JSON header padded with spaces, as Hugging Face's writer does. For the GPT-2 and BERT readers'
// tests.
#pragma once

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attnviz::testing {

// One tensor to write: its values, stored as `dtype`; `raw` (when not empty) replaces the bytes.
struct TestTensor {
  TestTensor() = default;
  TestTensor(std::string name_, std::vector<std::int64_t> shape_, std::vector<float> values_ = {},
             std::string dtype_ = "F32", std::string raw_ = {})
      : name(std::move(name_)),
        shape(std::move(shape_)),
        values(std::move(values_)),
        dtype(std::move(dtype_)),
        raw(std::move(raw_)) {}
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
  std::string dtype = "F32";
  std::string raw;
};

inline void put_u16(std::string& out, std::uint16_t bits) {
  out += static_cast<char>(bits & 0xFF);
  out += static_cast<char>(bits >> 8);
}

// binary16 of a float that is 0, ±inf, NaN or a normal half (the test's values all are): the
// exponent and the top 10 mantissa bits, from frexp.
inline std::uint16_t to_half(float value) {
  const std::uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return 0x7E00;
  if (std::isinf(value)) return sign | 0x7C00;
  if (value == 0) return sign;
  int exponent = 0;
  const double mantissa = std::frexp(std::fabs(static_cast<double>(value)), &exponent);  // [½, 1)
  REQUIRE(exponent - 1 + 15 >= 1);
  REQUIRE(exponent - 1 + 15 <= 30);
  const auto fraction = static_cast<std::uint16_t>((mantissa * 2 - 1) * 1024);
  return static_cast<std::uint16_t>(sign | ((exponent - 1 + 15) << 10) | fraction);
}

// bfloat16: the top half of the float's bits (the test's values fit in it).
inline std::uint16_t to_bfloat16(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline std::string tensor_bytes(const TestTensor& t) {
  if (!t.raw.empty()) return t.raw;
  std::string out;
  for (const float v : t.values) {
    if (t.dtype == "F16") {
      put_u16(out, to_half(v));
    } else if (t.dtype == "BF16") {
      put_u16(out, to_bfloat16(v));
    } else {
      char bytes[4];
      std::memcpy(bytes, &v, 4);
      out.append(bytes, 4);
    }
  }
  return out;
}

// The header's 8 bytes and text, then the data.
inline std::string with_header(const std::string& header, const std::string& data) {
  std::string out;
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

// A whole safetensors file: the tensors one after another, the header padded with spaces to a
// multiple of 8 bytes (as Hugging Face's writer does), then `misalign` spaces more.
inline std::string safetensors_file(const std::vector<TestTensor>& tensors,
                                    const nlohmann::json& metadata = {}, std::size_t misalign = 0) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const TestTensor& t : tensors) {
    const std::string bytes = tensor_bytes(t);
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + bytes.size()}}};
    data += bytes;
  }
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  text += std::string(misalign, ' ');
  return with_header(text, data);
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  REQUIRE(out.good());
}

}  // namespace attnviz::testing

// A safetensors file (Hugging Face's weight format), memory-mapped:
//   8 bytes: N, a little-endian u64; N bytes of UTF-8 JSON, an object
//   {"name": {"dtype": "F32", "shape": [rows, cols], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {string: string}}; then the data, each tensor's bytes at
//   [8 + N + begin, 8 + N + end), C order, little endian.
// `open` checks everything before any tensor's bytes are read: N against a cap and the file's
// size, the JSON, each entry's dtype (every dtype of the format is recognised; only F32, F16
// and BF16 can be read as floats), shape (rank, no overflow), offsets (inside the data, the
// byte count the shape and dtype need, no two tensors overlapping). Every error names the file
// and the tensor or key.
#pragma once

#include "core/base/status.hpp"
#include "core/models/mapped_file.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attnviz {

// The dtypes of the safetensors format (as spelled in the header).
enum class SafetensorsDtype {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64
};

const char* dtype_name(SafetensorsDtype dtype);
int dtype_size(SafetensorsDtype dtype);  // bytes per element

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<std::int64_t> shape;      // empty: a scalar
  std::int64_t elements = 0;            // the product of the shape
  std::size_t begin = 0, end = 0;       // bytes, counted from the start of the data section
  const std::uint8_t* bytes = nullptr;  // begin's byte in the mapped file

  // "[768, 2304]"
  std::string shape_text() const;
};

class SafetensorsFile {
 public:
  // The header is capped at this many bytes (GPT-2 XL's is about 40 kB).
  static constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;
  // And at this many tensors, this rank.
  static constexpr std::size_t kMaxTensors = 1u << 20;
  static constexpr std::size_t kMaxRank = 8;

  // The file at `path`, checked; or an error naming it and what is wrong.
  static Result<SafetensorsFile> open(const std::string& path);

  const std::string& path() const { return file_.path(); }
  // In the order of their data.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The tensor named `name`, or nullptr.
  const SafetensorsTensor* find(const std::string& name) const;

  // The tensor's values as 32-bit floats, in C order: for F32 a view into the mapped file (no
  // copy) when its bytes are 4-byte aligned, else a copy; F16 and BF16 converted exactly
  // (subnormals, infinities and NaN included) into a buffer from `allocate(count)`. Any other
  // dtype is an error naming the file and the tensor. The view lives as long as the mapping
  // (this object, or the MappedFile `release` hands over).
  Result<const float*> floats(const SafetensorsTensor& tensor,
                              const std::function<float*(std::size_t)>& allocate) const;

  // Gives up the mapping (for a model that keeps views into it); the tensors' pointers stay
  // valid as long as the returned file lives.
  MappedFile release() && { return std::move(file_); }

 private:
  MappedFile file_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, std::size_t> index_;  // name -> tensors_
  std::map<std::string, std::string> metadata_;
};

// IEEE 754 binary16 and bfloat16 (their bits) to float, exactly.
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);

}  // namespace attnviz

// Shared by the fuzz targets: an invariant check that aborts (so libFuzzer records the input as a
// crash), and a cheap estimate of how much work a scenario asks for, so that the targets can
// skip inputs whose shapes would make every run slow.
#pragma once

#include <nlohmann/json.hpp>

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Aborts with the failed condition when an invariant does not hold.
#define FUZZ_CHECK(condition)                                                                  \
  do {                                                                                         \
    if (!(condition)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

namespace attnviz::fuzz {

// An input written FIRST \0 SECOND \0 REST (two files and a text): its three parts, or none
// when it holds fewer than two NUL bytes.
struct ThreeParts {
  std::string_view first, second, rest;
};
inline std::optional<ThreeParts> three_parts(std::string_view input) {
  const std::size_t one = input.find('\0');
  const std::size_t two = one == std::string_view::npos ? one : input.find('\0', one + 1);
  if (two == std::string_view::npos) return std::nullopt;
  return ThreeParts{input.substr(0, one), input.substr(one + 1, two - one - 1),
                    input.substr(two + 1)};
}

// A folder of the process's own under /tmp, for the files a target writes (the model readers take
// paths), made on the first call. It is removed, with the `files` named in it, when the process
// exits. A target calls it with the same arguments every time.
inline const std::string& scratch_folder(const char* name, std::vector<std::string> files) {
  struct Folder {
    std::string path;
    std::vector<std::string> files;
    ~Folder() {
      for (const std::string& file : files) std::remove((path + "/" + file).c_str());
      std::remove(path.c_str());
    }
  };
  static const Folder folder = [&] {
    std::string pattern = std::string("/tmp/attnviz-fuzz-") + name + "-XXXXXX";
    const char* made = ::mkdtemp(pattern.data());
    FUZZ_CHECK(made != nullptr);
    return Folder{made, std::move(files)};
  }();
  return folder.path;
}

// Strict UTF-8 (RFC 3629): no overlongs, surrogates or code points past U+10FFFF. Written here,
// independently of core/text/ and core/models/, so that the check does not share the code it
// checks.
inline bool valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    unsigned low = 0x80, high = 0xBF;  // the allowed range of the second byte
    if (lead < 0x80) {
      length = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // overlong below U+0800
      if (lead == 0xED) high = 0x9F;  // surrogates U+D800..U+DFFF
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // overlong below U+10000
      if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      if (byte < (k == 1 ? low : 0x80u) || byte > (k == 1 ? high : 0xBFu)) return false;
    }
    i += length;
  }
  return true;
}

// Inputs whose weights would hold more numbers than this are skipped (return 0) before they
// are parsed: a scenario may legally ask for 16 heads of 1024x1024 matrices (hundreds of MB),
// which only measures the allocator and makes every execution slow.
inline constexpr double kMaxParameterCount = 65536;
// ... and so are sentences with more tokens than this (fuzz_compute, fuzz_lesson).
inline constexpr std::size_t kMaxTokensPerSentence = 64;

// The number of weights a scenario object asks for, with parse_scenario's defaults
// (d_model 8, heads 2, d_k = d_model / heads, d_v = d_att = d_k). Values that are not numbers
// are read as their default (parse_scenario rejects them anyway); numbers are clamped to
// [1, 1024] as the limits do.
inline double parameter_count(const nlohmann::json& scenario) {
  if (!scenario.is_object()) return 0;
  const auto dimension = [&](const char* key, double fallback) {
    const auto it = scenario.find(key);
    if (it == scenario.end() || !it->is_number()) return fallback;
    const double value = it->get<double>();
    return value >= 1 && value <= 1024 ? value : 1.0;  // out of range: rejected later
  };
  const double d_model = dimension("d_model", 8);
  const double heads = dimension("heads", 2);
  const double d_k = dimension("d_k", std::max(1.0, d_model / heads));
  const double d_v = dimension("d_v", d_k);
  const double d_att = dimension("d_att", d_k);
  const double per_head = d_model * (2 * d_k + d_v) + d_k * d_k + 2 * d_k * d_att + d_att;
  return heads * per_head + heads * d_v * d_model;
}

}  // namespace attnviz::fuzz

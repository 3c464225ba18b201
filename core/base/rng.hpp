// Deterministic, platform-independent random numbers: the same seed gives the same numbers on
// every run, compiler and machine (no std::*_distribution, whose output is implementation-defined).
// Values are counter-based: value(stream, index) depends only on its arguments, so growing a
// matrix keeps the numbers already drawn for the cells that existed before.
#pragma once

#include <cstdint>
#include <string_view>

namespace attnviz::rng {

// SplitMix64 finalizer: a bijective mix of 64 bits.
constexpr std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// FNV-1a over bytes, then mixed: a stable 64-bit hash of a string.
constexpr std::uint64_t hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return mix(h);
}

constexpr std::uint64_t combine(std::uint64_t a, std::uint64_t b) {
  return mix(a ^ mix(b));
}

// Uniform in [-1, 1): the top 24 bits make an exactly representable float.
constexpr float uniform_symmetric(std::uint64_t bits) {
  const auto top24 = static_cast<std::uint32_t>(bits >> 40);
  return static_cast<float>(top24) * (2.0f / 16777216.0f) - 1.0f;
}

constexpr float value(std::uint64_t stream, std::uint64_t index) {
  return uniform_symmetric(combine(stream, index));
}

}  // namespace attnviz::rng

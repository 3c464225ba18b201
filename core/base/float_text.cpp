#include "core/base/float_text.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace attnviz {

namespace {

// A decimal d₁d₂…dₚ × 10^exponent with d₁ ≠ 0 (the digits of a finite, non-zero magnitude), as
// %.*e prints it: digits "15", exponent -7 is 1.5e-07.
struct Decimal {
  char digits[24] = {};
  int count = 0;
  int exponent = 0;
};

template <typename T>
T read_back(const char* text) {
  if constexpr (std::is_same_v<T, float>)
    return std::strtof(text, nullptr);
  else
    return std::strtod(text, nullptr);
}

// Pass 1: `magnitude` (finite, > 0) correctly rounded to `precision` significant digits.
Decimal rounded(double magnitude, int precision) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*e", precision - 1, magnitude);  // d.ddde±XX
  Decimal d;
  const char* p = text;
  for (; *p != 'e'; ++p)
    if (*p != '.') d.digits[d.count++] = *p;
  d.exponent = std::atoi(p + 1);
  return d;
}

// The same decimal moved by one unit in its last digit (up or down), keeping its digit count:
// 1.99 up is 2.00, 1.00 down is 9.99 one decade lower. False when it would reach 0.
bool step_last_digit(Decimal& d, bool up) {
  int i = d.count - 1;
  if (up) {
    while (i >= 0 && d.digits[i] == '9') d.digits[i--] = '0';
    if (i < 0) {  // 9.99 → 10.0: one more decade
      d.digits[0] = '1';
      std::fill(d.digits + 1, d.digits + d.count, '0');
      ++d.exponent;
      return true;
    }
    ++d.digits[i];
    return true;
  }
  while (i >= 0 && d.digits[i] == '0') d.digits[i--] = '9';
  if (i < 0) return false;
  --d.digits[i];
  if (d.digits[0] == '0') {  // 1.00 → 0.99: 9.9 one decade lower, the digit count kept
    if (d.count == 1) return false;
    std::memmove(d.digits, d.digits + 1, static_cast<std::size_t>(d.count - 1));
    d.digits[d.count - 1] = '9';
    --d.exponent;
  }
  return true;
}

// The decimal written as %e would write it, for reading back with strtod/strtof.
void scientific_text(const Decimal& d, char* out) {
  int n = 0;
  out[n++] = d.digits[0];
  if (d.count > 1) {
    out[n++] = '.';
    for (int i = 1; i < d.count; ++i) out[n++] = d.digits[i];
  }
  std::snprintf(out + n, 16, "e%d", d.exponent);
}

// Pass 2: the fewest digits that read back to `magnitude`; among the candidates of that length
// (the correctly rounded decimal and its neighbours in the last digit), the closest.
template <typename T>
Decimal shortest_decimal(T magnitude) {
  const int most = std::numeric_limits<T>::max_digits10;
  char text[48];
  for (int precision = 1; precision <= most; ++precision) {
    Decimal best;
    long double best_distance = -1;
    const Decimal nearest = rounded(static_cast<double>(magnitude), precision);
    for (int candidate = 0; candidate < 3; ++candidate) {
      Decimal d = nearest;
      if (candidate == 1 && !step_last_digit(d, false)) continue;
      if (candidate == 2 && !step_last_digit(d, true)) continue;
      scientific_text(d, text);
      if (read_back<T>(text) != magnitude) continue;
      const long double distance =
          std::fabs(std::strtold(text, nullptr) - static_cast<long double>(magnitude));
      if (best_distance < 0 || distance < best_distance) best = d, best_distance = distance;
    }
    if (best_distance >= 0) {
      while (best.count > 1 && best.digits[best.count - 1] == '0') --best.count;
      return best;
    }
  }
  return rounded(static_cast<double>(magnitude), most);  // max_digits10 always reads back
}

// Pass 3: plain (123.45, 0.00012, 100000) or scientific (1.2345e+02), whichever is shorter. A
// plain whole number is written exactly (134217728, not 134217730): every whole number of that
// many digits is as short, and the exact one is the closest.
std::string decimal_text(const Decimal& d, bool negative, double magnitude) {
  std::string plain = negative ? "-" : "";
  std::string scientific = plain;
  scientific += d.digits[0];
  if (d.count > 1) {
    scientific += '.';
    scientific.append(d.digits + 1, static_cast<std::size_t>(d.count - 1));
  }
  char exponent[16];
  std::snprintf(exponent, sizeof exponent, "e%c%02d", d.exponent < 0 ? '-' : '+',
                std::abs(d.exponent));
  scientific += exponent;
  if (d.exponent + 1 >= d.count) {
    char whole[400];  // the largest double has 309 digits
    std::snprintf(whole, sizeof whole, "%.0f", magnitude);
    plain += whole;
  } else if (d.exponent >= 0) {
    const int whole = d.exponent + 1;  // digits before the point
    for (int i = 0; i < std::max(whole, d.count); ++i) {
      if (i == whole) plain += '.';
      plain += i < d.count ? d.digits[i] : '0';
    }
  } else {
    plain += "0.";
    plain.append(static_cast<std::size_t>(-d.exponent - 1), '0');
    plain.append(d.digits, static_cast<std::size_t>(d.count));
  }
  return plain.size() <= scientific.size() ? plain : scientific;
}

template <typename T>
std::string shortest(T value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  return decimal_text(shortest_decimal(std::fabs(value)), value < 0,
                      static_cast<double>(std::fabs(value)));
}

template <typename T>
std::to_chars_result write(char* first, char* last, T value) {
  const std::string text = shortest(value);
  if (last - first < static_cast<std::ptrdiff_t>(text.size()))
    return {last, std::errc::value_too_large};
  // Not terminated, as std::to_chars: the result's ptr marks the end.
  char* end = std::copy(text.begin(), text.end(), first);
  return {end, std::errc()};
}

bool starts_with_word(const char* p, const char* last, std::string_view word) {
  if (last - p < static_cast<std::ptrdiff_t>(word.size())) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(p[i])) != word[i]) return false;
  return true;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

template <typename T>
std::from_chars_result parse(const char* first, const char* last, T& value) {
  const char* p = first;
  const bool negative = p < last && *p == '-';
  if (negative) ++p;
  // inf, infinity, nan and nan(chars)
  if (starts_with_word(p, last, "inf")) {
    p += starts_with_word(p, last, "infinity") ? 8 : 3;
    value = negative ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    return {p, std::errc()};
  }
  if (starts_with_word(p, last, "nan")) {
    p += 3;
    if (p < last && *p == '(') {
      const char* close = p + 1;
      while (close < last && (std::isalnum(static_cast<unsigned char>(*close)) || *close == '_'))
        ++close;
      if (close < last && *close == ')') p = close + 1;
    }
    value = negative ? -std::numeric_limits<T>::quiet_NaN() : std::numeric_limits<T>::quiet_NaN();
    return {p, std::errc()};
  }
  // digits [. digits] [e [+-] digits], with at least one digit before the exponent
  const char* digits_start = p;
  int digit_count = 0;
  while (p < last && is_digit(*p)) ++p, ++digit_count;
  if (p < last && *p == '.') {
    ++p;
    while (p < last && is_digit(*p)) ++p, ++digit_count;
  }
  if (digit_count == 0) return {first, std::errc::invalid_argument};
  if (p < last && (*p == 'e' || *p == 'E')) {
    const char* q = p + 1;
    if (q < last && (*q == '+' || *q == '-')) ++q;
    if (q < last && is_digit(*q)) {
      while (q < last && is_digit(*q)) ++q;
      p = q;
    }
  }
  const std::string text = (negative ? "-" : "") + std::string(digits_start, p);
  errno = 0;
  char* stop = nullptr;
  T parsed{};
  if constexpr (std::is_same_v<T, float>)
    parsed = std::strtof(text.c_str(), &stop);
  else
    parsed = std::strtod(text.c_str(), &stop);
  if (errno == ERANGE && (std::isinf(parsed) || parsed == 0))
    return {p, std::errc::result_out_of_range};
  value = parsed;
  return {p, std::errc()};
}

}  // namespace

std::to_chars_result write_shortest(char* first, char* last, float value) {
  return write(first, last, value);
}
std::to_chars_result write_shortest(char* first, char* last, double value) {
  return write(first, last, value);
}
std::string shortest_text(float value) {
  return shortest(value);
}
std::string shortest_text(double value) {
  return shortest(value);
}

std::from_chars_result parse_number(const char* first, const char* last, float& value) {
  return parse(first, last, value);
}
std::from_chars_result parse_number(const char* first, const char* last, double& value) {
  return parse(first, last, value);
}

double shortest_as_double(float value) {
  if (!std::isfinite(value)) return static_cast<double>(value);
  return std::strtod(shortest(value).c_str(), nullptr);
}

std::uint32_t float_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float float_from_bits(std::uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace attnviz

#include "core/figures/format.hpp"

#include "core/base/float_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

namespace attnviz::view {

int format_number_into(char* buffer, int size, float value, int decimals) {
  if (!std::isfinite(value))
    return std::snprintf(buffer, static_cast<std::size_t>(size), "overflow");
  const float magnitude = std::fabs(value);
  if (magnitude >= 1e5f)
    return std::snprintf(buffer, static_cast<std::size_t>(size), "%.*e",
                         decimals > 0 ? decimals - 1 : 0, static_cast<double>(value));
  const int n = std::snprintf(buffer, static_cast<std::size_t>(size), "%.*f", decimals,
                              static_cast<double>(value));
  // "-0.00" reads as a sign error to a student.
  if (n > 1 && buffer[0] == '-') {
    bool all_zero = true;
    for (int i = 1; i < n; ++i)
      if (buffer[i] != '0' && buffer[i] != '.') all_zero = false;
    if (all_zero) {
      for (int i = 0; i < n; ++i) buffer[i] = buffer[i + 1];
      return n - 1;
    }
  }
  return n;
}

int format_significant_into(char* buffer, int size, float value, int decimals, int significant) {
  const float magnitude = std::fabs(value);
  // `decimals` show `significant` digits: as format_number.
  if (!std::isfinite(value) ||
      magnitude >= std::pow(10.0f, static_cast<float>(significant - 1 - decimals)))
    return format_number_into(buffer, size, value, decimals);
  if (magnitude == 0.0f) return std::snprintf(buffer, static_cast<std::size_t>(size), "0");
  const int digits = std::max(1, significant);
  if (magnitude < 1e-4f)
    return std::snprintf(buffer, static_cast<std::size_t>(size), "%.*e", digits - 1,
                         static_cast<double>(value));
  // The decimals that show `significant` digits, from the exponent of the rounded number: 0.0018
  // is 1.8e-03, three decimals to its first digit.
  char scientific[32];
  std::snprintf(scientific, sizeof scientific, "%.*e", digits - 1, static_cast<double>(magnitude));
  const char* e = std::strchr(scientific, 'e');
  const int exponent = e ? std::atoi(e + 1) : 0;
  return std::snprintf(buffer, static_cast<std::size_t>(size), "%.*f",
                       std::max(0, -exponent + digits - 1), static_cast<double>(value));
}

std::string format_thousands(std::size_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_significant(float value, int decimals, int significant) {
  char buffer[48];
  const int n = format_significant_into(buffer, sizeof buffer, value, decimals, significant);
  return std::string(buffer, static_cast<std::size_t>(n));
}

std::string format_number(float value, int decimals) {
  char buffer[48];
  const int n = format_number_into(buffer, sizeof buffer, value, decimals);
  return std::string(buffer, static_cast<std::size_t>(n));
}

std::string format_score(float value, int decimals) {
  if (std::isinf(value) && value < 0) return "\u2212\u221E (masked)";
  return format_number(value, decimals);
}

namespace {
Result<float> refused(std::string problem) {
  return Status::error(std::move(problem));
}
Result<float> zero_with_note(const std::string& shown) {
  return Result<float>(0.0f, {shown + " is below the smallest float (1.4e-45): it is 0"});
}
}  // namespace

Result<float> parse_typed_number(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  const std::string shown =
      "\"" + std::string(text.substr(0, 40)) + (text.size() > 40 ? "\xe2\x80\xa6" : "") + "\"";
  std::string number;
  if (text.substr(0, 3) == "\xe2\x88\x92") {  // U+2212 MINUS SIGN
    number = "-";
    text.remove_prefix(3);
  }
  number += text;
  if (number.find('.') == std::string::npos && std::count(number.begin(), number.end(), ',') == 1)
    number[number.find(',')] = '.';  // 1,5: a decimal comma
  if (number.empty()) return refused("type a number");
  const char* start = number.data() + (number[0] == '+' ? 1 : 0);
  const char* end = number.data() + number.size();
  double value = 0.0;
  const auto [stop, error] = parse_number(start, end, value);
  if (error == std::errc::result_out_of_range) {  // past a double: too large, or (a negative
                                                  // exponent) too small
    if (number.find("e-") != std::string::npos || number.find("E-") != std::string::npos)
      return zero_with_note(shown);
    return refused(shown +
                   " is too large: a float reaches \xc2\xb1"
                   "3.4e38");
  }
  if (error != std::errc() || stop != end) return refused(shown + " is not a number");
  if (std::isnan(value)) return refused("NaN is not a number a weight can hold");
  if (std::isinf(value)) return refused(shown + " is infinite: a weight must be finite");
  if (!std::isfinite(value) ||
      std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max()))
    return refused(shown +
                   " is too large: a float reaches \xc2\xb1"
                   "3.4e38");
  const float as_float = static_cast<float>(value);
  if (as_float == 0.0f && value != 0.0) return zero_with_note(shown);
  return as_float;
}

}  // namespace attnviz::view

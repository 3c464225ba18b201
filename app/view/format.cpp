#include "app/view/format.hpp"

#include <cmath>
#include <cstdio>

namespace attnviz::view {

int format_number_into(char* buffer, int size, float value, int decimals) {
  if (!std::isfinite(value)) return std::snprintf(buffer, static_cast<std::size_t>(size), "overflow");
  const float magnitude = std::fabs(value);
  if (magnitude >= 1e5f)
    return std::snprintf(buffer, static_cast<std::size_t>(size), "%.*e", decimals > 0 ? decimals - 1 : 0,
                         static_cast<double>(value));
  const int n = std::snprintf(buffer, static_cast<std::size_t>(size), "%.*f", decimals, static_cast<double>(value));
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

std::string format_number(float value, int decimals) {
  char buffer[48];
  const int n = format_number_into(buffer, sizeof buffer, value, decimals);
  return std::string(buffer, static_cast<std::size_t>(n));
}

std::string format_score(float value, int decimals) {
  if (std::isinf(value) && value < 0) return "\u2212\u221E (masked)";
  return format_number(value, decimals);
}

}  // namespace attnviz::view

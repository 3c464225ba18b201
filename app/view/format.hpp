// Numbers as the app prints them: never "nan" or "inf" passed off as a number.
#pragma once

#include <string>

namespace attnviz::view {

// "0.74", "-1.20", "1.2e+38"; "overflow" for ±inf or NaN produced by overflow; "masked" for a
// masked score (-inf where `masked_is_minus_infinity`).
std::string format_number(float value, int decimals = 2);
std::string format_score(float value, int decimals = 2);  // -inf -> "−∞ (masked)"

// Writes into a fixed buffer (no allocation, for per-cell drawing); returns the length.
int format_number_into(char* buffer, int size, float value, int decimals = 2);

}  // namespace attnviz::view

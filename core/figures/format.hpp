// Numbers as the app prints them: never "nan" or "inf" passed off as a number; and as a user
// types them.
#pragma once

#include "core/base/status.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace attnviz::view {

// The number a person reads for an index: of a head, a query, a key, a token, a row, a column or
// a dimension. The app and its figures count from 1, as they count lessons and steps ("head 1 of
// 2", "query 1: the", W_Q's columns 1 to d_k); files and command-line options (a scenario's
// "view", a lesson's "head", --head, --query, --step) count from 0, as the engine does.
constexpr int shown_number(long long index) {
  return static_cast<int>(index) + 1;
}

// "0.74", "-1.20", "1.2e+38"; "overflow" for ±inf or NaN produced by overflow; "masked" for a
// masked score (-inf where `masked_is_minus_infinity`).
std::string format_number(float value, int decimals = 2);
std::string format_score(float value, int decimals = 2);  // -inf -> "−∞ (masked)"

// A count with its thousands separated: 124439808 -> "124,439,808" (a model's parameters).
std::string format_thousands(std::size_t value);

// Writes into a fixed buffer (no allocation, for per-cell drawing); returns the length.
int format_number_into(char* buffer, int size, float value, int decimals = 2);

// As format_number with `decimals`, but a number those decimals would show with fewer than
// `significant` digits keeps that many: 0.0018 and 3.1e-06, not 0.00 (the weights of 256 keys
// are a few thousandths each), 0.050. 0 is "0".
std::string format_significant(float value, int decimals = 2, int significant = 2);
int format_significant_into(char* buffer, int size, float value, int decimals = 2,
                            int significant = 2);

// A number typed into a weight: "0.5", "-1e-3", "+2", " 3 ", "−0.5" (a typographic minus) or
// "1,5" (a decimal comma, where there is no point). Either the value or why there is none, in
// words for the user: "\"abc\" is not a number", "NaN is not a number a weight can hold",
// "1e39 is too large: a float reaches ±3.4e38"; with the value, at most one warning, what the
// user may not expect ("3e-50 is below the smallest float (1.4e-45): it is 0").
Result<float> parse_typed_number(std::string_view text);

}  // namespace attnviz::view

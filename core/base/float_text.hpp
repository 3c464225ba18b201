// Floating-point numbers to text and back, owned by the project: the same characters as
// std::to_chars and the same reading as std::from_chars (general format), which the browser
// build's standard library (Emscripten 3.1.6's libc++) lacks for float and double.
//   write_shortest  the shortest decimal that reads back to the same value, plain or scientific,
//                   whichever is shorter (plain on a tie): 0.1f is "0.1", 1e20f is "1e+20";
//                   "inf", "-inf", "nan", "-0" as to_chars writes them
//   parse_number    an optional '-', then digits with an optional '.' and exponent, or "inf",
//                   "infinity", "nan" (any case); no '+', no spaces, no hexadecimal. The text
//                   read ends where the number does (result.ptr), as from_chars: invalid_argument
//                   when no number starts at `first`, result_out_of_range (value unchanged) when
//                   it is too large for the type or too small to be told from 0
// Both go through the C library's "C"-locale conversions (the program never calls setlocale),
// with the shortest text found by trying each precision and its neighbours in the last digit.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace attnviz {

// Writes into [first, last); returns the end of what was written, or {last,
// errc::value_too_large} when it does not fit (32 characters always do).
std::to_chars_result write_shortest(char* first, char* last, float value);
std::to_chars_result write_shortest(char* first, char* last, double value);
std::string shortest_text(float value);
std::string shortest_text(double value);

std::from_chars_result parse_number(const char* first, const char* last, float& value);
std::from_chars_result parse_number(const char* first, const char* last, double& value);

// The float as the shortest decimal that reads back to it, held as the double of that decimal
// (0.1f becomes 0.1, not 0.10000000149011612), so that a JSON writer prints it short.
double shortest_as_double(float value);

// The bits of a float, and a float from its bits (std::bit_cast, which the browser build lacks).
std::uint32_t float_bits(float value);
float float_from_bits(std::uint32_t bits);

}  // namespace attnviz

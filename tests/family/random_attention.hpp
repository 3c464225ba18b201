// A toy family of models for the tests (tests/family/random_attention.cpp): "random:SEED".
#pragma once

#include "core/pipeline/run.hpp"

#include <string_view>

namespace attnviz::testing {

inline constexpr std::string_view kRandomModelPrefix = "random:";

// True: the family is registered (as the program started). Calling it keeps the file linked in.
bool random_family_registered();

}  // namespace attnviz::testing

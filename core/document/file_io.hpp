// Reading and writing whole files, with clear messages and without ever leaving a
// half-written file behind.
#pragma once

#include "core/base/status.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace attnviz {

// The contents of a file (or of standard input for "-") of at most max_bytes, or why not.
Result<std::string> read_file(const std::string& path, std::size_t max_bytes);

// Writes a temporary file in the target's folder, flushes it to disk, then renames it over the
// target: a crash or a full disk leaves either the old file or the new one, never a mix.
// On failure the old file is untouched and the message says why.
Status write_file_atomic(const std::string& path, std::string_view contents);

}  // namespace attnviz

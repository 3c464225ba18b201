// Reading and writing whole files, with clear messages, without ever leaving a half-written
// file behind, and without ever replacing what a path points at.
#pragma once

#include "core/base/status.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace attnviz {

// The contents of a file (or of standard input for "-") of at most max_bytes, or why not.
Result<std::string> read_file(const std::string& path, std::size_t max_bytes);

// Writes `contents` to `path` the way every save and export of AttnViz does (docs/formats.md,
// "How AttnViz writes a file"):
//  - "-" is standard output; /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are
//    written to that descriptor, so they reach the stream it is (a pipe, a terminal, a file
//    opened by the shell), at its position.
//  - Symbolic links are followed (a chain too; a dangling link creates the file it names): the
//    link stays a link and the file it names gets the contents.
//  - A regular file, or a path that does not exist yet: a temporary file is written in the
//    folder of the final target, flushed to disk and renamed over it, so a crash or a full disk
//    leaves either the old file or the new one, never a mix. An existing file keeps its
//    permission bits (and, where the process may, its owner); a new one gets 0666 less the
//    umask. A file with several hard links gets a new inode: the other names keep the old
//    contents.
//  - A character or block device, a named pipe or a socket is opened and written to directly:
//    never renamed over, unlinked or truncated.
//  - A folder, a missing or read-only folder, a full disk: an error naming the path; no
//    temporary file is left behind and the old file is unchanged.
Status write_file(const std::string& path, std::string_view contents);

// Whether write_file(path, ...) could write there now, without writing or creating anything:
// the errors write_file would give for a folder, a missing folder, a path through a file, a
// closed descriptor. For a command that produces its output late (the app's --screenshot after
// its frames) to refuse a path at once. A folder that cannot be written to is found only by
// writing.
Status check_writable(const std::string& path);

}  // namespace attnviz

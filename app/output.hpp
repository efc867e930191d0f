#pragma once
// Where a command's report goes: stdout, or a file written atomically (--out FILE).
#include <functional>
#include <ostream>
#include <string>

namespace tapegrad::app {

/// Writes `text` to `path` so that a reader (or a run interrupted at any moment) sees either the old file or
/// the whole new one, never part of it: a temporary file in the same directory, flushed to disk, then
/// renamed over `path`. UsageError naming --out and the path when any step fails; no temporary file is
/// left behind.
void write_atomically(const std::string& path, const std::string& text);

/// Runs `command` with stdout as its stream when `out_file` is empty; otherwise with a buffer that is written
/// to `out_file` atomically once the command has returned. A command that throws writes nothing, so an
/// existing report stays as it was. Returns the command's exit code.
int run_with_output(const std::string& out_file, std::ostream& stdout_stream,
                    const std::function<int(std::ostream&)>& command);

} // namespace tapegrad::app

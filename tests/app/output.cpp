// --out FILE: reports are written atomically (temporary file in the same directory, then rename).
#include "../support.hpp"

#include <output.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace tapegrad;
using namespace tapegrad::app;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh empty directory under the system's temporary directory.
fs::path scratch_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tapegrad-test-output-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::size_t files_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

} // namespace

TEST_CASE("write_atomically writes the whole text, replaces an older file and leaves no temporary file") {
  const fs::path dir = scratch_dir("write");
  const fs::path file = dir / "report.json";
  const std::string long_text(100000, 'x');
  write_atomically(file.string(), long_text);
  CHECK(read(file) == long_text);
  write_atomically(file.string(), "short\n");
  CHECK(read(file) == "short\n"); // replaced, not overwritten in place (no tail of the old text)
  CHECK(files_in(dir) == 1);
  CHECK((fs::status(file).permissions() & fs::perms::owner_read) != fs::perms::none);
  fs::remove_all(dir);
}

TEST_CASE("write_atomically into a missing directory is a UsageError naming --out and the path") {
  const fs::path dir = scratch_dir("missing");
  const std::string target = (dir / "no-such-dir" / "r.txt").string();
  CHECK_THROWS_WITH_AS(write_atomically(target, "x"),
                       doctest::Contains(("--out " + target + ": cannot create a temporary file in").c_str()),
                       UsageError);
  CHECK_THROWS_AS(write_atomically(dir.string(), "x"), UsageError); // a directory cannot be replaced by a file
  CHECK(fs::is_directory(dir));
  CHECK(files_in(dir) == 0); // no temporary left behind
  fs::remove_all(dir);
}

TEST_CASE("run_with_output: a command that fails half-way leaves the existing report untouched") {
  const fs::path dir = scratch_dir("interrupted");
  const fs::path file = dir / "report.txt";
  std::ostringstream terminal;
  CHECK(run_with_output(file.string(), terminal, [](std::ostream& out) {
          out << "complete report\n";
          return 1; // a failed verdict still writes its report
        }) == 1);
  CHECK(read(file) == "complete report\n");
  CHECK(terminal.str().empty());
  CHECK_THROWS_AS(run_with_output(file.string(), terminal,
                                  [](std::ostream& out) -> int {
                                    out << "half a rep";
                                    throw UsageError("interrupted");
                                  }),
                  UsageError);
  CHECK(read(file) == "complete report\n");
  CHECK(files_in(dir) == 1);
  // Without --out the command writes to the stream it is given (stdout).
  CHECK(run_with_output("", terminal, [](std::ostream& out) {
          out << "to stdout";
          return 0;
        }) == 0);
  CHECK(terminal.str() == "to stdout");
  fs::remove_all(dir);
}

#include "output.hpp"

#include <tapegrad/autodiff/error.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tapegrad::app {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
  throw UsageError("--out " + path + ": " + what + ": " + std::strerror(error));
}

} // namespace

void write_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  if (path.empty()) throw UsageError("--out: the file name is empty");
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = ".";
  name += target.filename().string();
  name += ".tmp.XXXXXX"; // (appended piecewise: g++ 12 warns falsely on a + chain here, -Wrestrict)
  std::string temporary = (dir / name).string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) fail(path, "cannot create a temporary file in " + dir.string(), errno);
  const auto abandon = [&](const std::string& what) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    fail(path, what, error);
  };
  // mkstemp makes the file private (0600); a report is an ordinary file: 0644 less the umask.
  const ::mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0644 & ~mask) != 0) abandon("cannot set the permissions of " + temporary);
  for (std::size_t done = 0; done < text.size();) {
    const ::ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("cannot write " + temporary);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) abandon("cannot flush " + temporary + " to disk");
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, "cannot close " + temporary, error);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, "cannot rename " + temporary + " to it", error);
  }
}

int run_with_output(const std::string& out_file, std::ostream& stdout_stream,
                    const std::function<int(std::ostream&)>& command) {
  if (out_file.empty()) return command(stdout_stream);
  std::ostringstream buffer;
  const int rc = command(buffer);
  write_atomically(out_file, buffer.str());
  return rc;
}

} // namespace tapegrad::app

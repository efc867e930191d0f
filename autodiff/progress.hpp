#pragma once
// A progress bar on stderr for long checks: shown only when stderr is a terminal, only once the work has
// run for about a second, and never when switched off (--quiet). Safe to advance from several threads.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace tapegrad {

class Progress {
public:
  /// `total` units of work described by `what`; `enabled` false makes every call a no-op.
  Progress(std::string what, std::size_t total, bool enabled)
      : what_(std::move(what)), total_(total), enabled_(enabled && ::isatty(STDERR_FILENO) == 1),
        start_(std::chrono::steady_clock::now()) {}
  ~Progress() {
    if (shown_) std::fputs("\r\033[K", stderr); // erase the bar: the report follows on stdout
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::size_t units = 1) {
    const std::size_t done = done_ += units;
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - start_).count();
    if (seconds < 1.0) return;
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock || now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    const double fraction = total_ ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
    const int width = 30, filled = static_cast<int>(fraction * width);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(width, '.');
    const double left = fraction > 0 ? seconds * (1 - fraction) / fraction : 0;
    std::fprintf(stderr, "\r%s [%s] %3.0f%% %zu/%zu, %.0f s, about %.0f s left\033[K", what_.c_str(), bar.c_str(),
                 100 * fraction, done, total_, seconds, left);
    std::fflush(stderr);
  }
  std::size_t done() const { return done_; }

private:
  std::string what_;
  std::size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_{};
  std::atomic<std::size_t> done_{0};
  std::mutex mutex_;
  bool shown_ = false;
};

} // namespace tapegrad

#pragma once
// A small fork-join loop for the checker: finite differences over many coordinates are independent, each a
// full re-evaluation of the graph, so they spread over the cores. No pool lives between calls: a check runs
// for milliseconds to hours, and starting two threads costs microseconds.

#include "real.hpp"

#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tapegrad {

/// The cores this process may use (at least 1).
inline unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

/// Calls body(worker, item) for every item in [0, n), on min(threads, n) threads (threads 0: every core).
/// Items are handed out one at a time in order; `worker` in [0, threads) lets a body keep per-thread
/// scratch. The first exception thrown by any body is rethrown here after every thread has stopped.
/// Every worker thread runs at the MPFR default precision of the calling thread (which a check sets from its
/// options), set explicitly when the thread starts: whether Boost keeps that default per process (1.74, as
/// Debian 12 has it) or per thread (later versions, Boost PR #318), a new thread computes at the caller's
/// digits, not at the library's initial default.
template <class Body> void parallel_for(std::size_t n, unsigned threads, Body&& body) {
  if (threads == 0) threads = hardware_threads();
  const unsigned workers = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i)
      body(0u, i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto run = [&](unsigned worker) {
    for (std::size_t i; !stop && (i = next++) < n;) {
      try {
        body(worker, i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        stop = true;
      }
    }
  };
  std::vector<std::thread> pool;
  const unsigned digits = mpfr_real::default_precision();
  for (unsigned w = 1; w < workers; ++w)
    pool.emplace_back([&run, w, digits] {
      // Written only where it differs (a per-thread default): a per-process one is not written concurrently.
      if (mpfr_real::default_precision() != digits) mpfr_real::default_precision(digits);
      run(w);
      // MPFR keeps per-thread caches (constants such as log 2, exp's tables) that a thread must free
      // itself before it ends; without this every check leaked them (found by LeakSanitizer).
      mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    });
  run(0);
  for (std::thread& t : pool)
    t.join();
  if (error) std::rethrow_exception(error);
}

} // namespace tapegrad

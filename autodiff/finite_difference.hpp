#pragma once
// Central finite differences over every coordinate of one input of a scalar function of matrices.
//
// A stencil of order p has truncation error ~ h^p and rounding error ~ eps / h; the step that balances
// them is h = eps^(1/(p+1)) (times max(1, |x|)), giving an error ~ eps^(p/(p+1)) relative to the function's
// scale. These are the numbers tolerances are derived from.

#include "parallel.hpp"
#include "progress.hpp"
#include "real.hpp"

#include <algorithm>

#include <cassert>
#include <cstddef>
#include <vector>

namespace tapegrad {

enum class Stencil {
  second_order, ///< D(h) = (f(x+h) - f(x-h)) / 2h
  richardson,   ///< (4 D(h/2) - D(h)) / 3: two second-order steps extrapolated, fourth order
  sixth_order,  ///< (-f(x-3h) + 9f(x-2h) - 45f(x-h) + 45f(x+h) - 9f(x+2h) + f(x+3h)) / 60h
};

constexpr int stencil_order(Stencil s) { return s == Stencil::second_order ? 2 : s == Stencil::richardson ? 4 : 6; }

/// The step that balances truncation and rounding for this stencil in T, at |x| <= 1.
template <Real T> T default_step(Stencil s) {
  using std::pow;
  return pow(epsilon<T>(), T(1) / T(stencil_order(s) + 1));
}

/// The error the stencil is expected to reach at its default step, relative to the function's scale:
/// eps^(p/(p+1)). A tolerance is a fixed multiple of this, chosen before any run.
template <Real T> T expected_stencil_error(Stencil s) {
  using std::pow;
  const T p(stencil_order(s));
  return pow(epsilon<T>(), p / (p + T(1)));
}

/// The step for coordinate value x: `factor` times default_step(s) times max(1, |x|).
template <Real T> T step_at(const T& x, Stencil s, const T& factor = T(1)) {
  using std::abs;
  return factor * default_step<T>(s) * (abs(x) > T(1) ? T(abs(x)) : T(1));
}

/// d f / d inputs[k] by central differences, coordinate by coordinate. `f` takes the inputs (all of them,
/// with input k's one coordinate moved) and returns a T. The step is step_at(x, s, factor). A coordinate
/// that is not finite (a -inf score) is a constant, not a variable: its derivative is reported as 0.
/// Coordinates are spread over `threads` threads (0: every core), each with its own copy of the inputs, so
/// `f` must be safe to call concurrently (a graph recorded on a fresh tape per call is); `progress`, when
/// given, advances by one per coordinate.
template <Real T, class F> Matrix<T> central_difference(F&& f, const std::vector<Matrix<T>>& inputs, std::size_t k,
                                                        Stencil s = Stencil::sixth_order, const T& factor = T(1),
                                                        unsigned threads = 1, Progress* progress = nullptr) {
  const Eigen::Index rows = inputs.at(k).rows(), cols = inputs.at(k).cols();
  Matrix<T> g(rows, cols);
  const std::size_t n = static_cast<std::size_t>(rows * cols);
  const unsigned workers = static_cast<unsigned>(std::min<std::size_t>(threads ? threads : hardware_threads(), n));
  std::vector<std::vector<Matrix<T>>> scratch(std::max(1u, workers), inputs); // one copy of the inputs each
  parallel_for(n, workers, [&](unsigned worker, std::size_t c) {
    std::vector<Matrix<T>>& moved = scratch[worker];
    Matrix<T>& x = moved[k];
    const Eigen::Index i = static_cast<Eigen::Index>(c) / cols, j = static_cast<Eigen::Index>(c) % cols;
    const T x0 = x(i, j);
    if (progress) progress->advance();
    if (!is_finite(x0)) {
      g(i, j) = T(0);
      return;
    }
    const T h = step_at(x0, s, factor);
    const auto at = [&](const T& m) -> T { // f with the coordinate moved by m steps
      x(i, j) = x0 + m * h;
      return f(static_cast<const std::vector<Matrix<T>>&>(moved));
    };
    if (s == Stencil::second_order) {
      g(i, j) = (at(T(1)) - at(T(-1))) / (T(2) * h);
    } else if (s == Stencil::richardson) {
      const T half = T(1) / T(2);
      const T d_h = (at(T(1)) - at(T(-1))) / (T(2) * h);
      const T d_half = (at(half) - at(-half)) / h;
      g(i, j) = (T(4) * d_half - d_h) / T(3);
    } else {
      g(i, j) = (T(45) * (at(T(1)) - at(T(-1))) - T(9) * (at(T(2)) - at(T(-2))) + (at(T(3)) - at(T(-3)))) / (T(60) * h);
    }
    x(i, j) = x0;
  });
  return g;
}

/// max |a - b| / max |b|: the worst error relative to the largest reference entry (absolute when the
/// reference is all zero). Shapes must match.
template <Real T> T max_rel_error(const Matrix<T>& a, const Matrix<T>& b) {
  assert(a.rows() == b.rows() && a.cols() == b.cols());
  using std::abs;
  T worst(0), scale(0);
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      const T e = abs(a(i, j) - b(i, j));
      if (!(e <= worst)) worst = e; // NaN is the worst error
      if (abs(b(i, j)) > scale) scale = abs(b(i, j));
    }
  return scale > T(0) ? T(worst / scale) : worst;
}

} // namespace tapegrad

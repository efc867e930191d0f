#pragma once
// Shared test helpers: the scalar types every op test runs on, tolerances derived from T's epsilon, seeded
// random matrices, and the op-gradient check (tape VJP against central differences in the same T).

#include <tapegrad/autodiff/finite_difference.hpp>
#include <tapegrad/autodiff/print.hpp>
#include <tapegrad/tapegrad.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

// Every op test runs on double and on a 50-digit type; the 50-digit run is the stricter one.
#define TAPEGRAD_TEST_TYPES double, tapegrad::float50

namespace tapegrad::test {

/// Exact arithmetic done in T (a handful of roundings): 128 eps.
template <Real T> T exact_tolerance() { return T(128) * epsilon<T>(); }

/// The bound each issue states for gradients against central differences: 1e-8 in double, 1e-30 in 50
/// digits. Our own tolerance must be at least this tight.
template <Real T> T stated_fd_bound() {
  using std::pow;
  return digits10<T>() >= 50 ? T(1) / pow(T(10), 30) : T(1) / T(100000000);
}

/// Tolerance of a sixth-order central difference at its default step: 1000 times eps^(6/7), fixed before
/// any run (double: 4e-11; 50 digits: 7e-41).
template <Real T> T fd_tolerance() { return T(1000) * expected_stencil_error<T>(Stencil::sixth_order); }

/// CHECKs max_rel_error(actual, expected) <= tol and prints the numbers.
template <Real T>
void check_close(const std::string& what, const Matrix<T>& actual, const Matrix<T>& expected, const T& tol) {
  REQUIRE(actual.rows() == expected.rows());
  REQUIRE(actual.cols() == expected.cols());
  const T err = max_rel_error(actual, expected);
  MESSAGE(what << " [" << scalar_name<T>() << "]: max rel error " << to_string(err, 3) << " <= tolerance "
               << to_string(tol, 3));
  CHECK(err <= tol);
}

/// rows x cols, entry k (in storage order) ((k + salt) mod period - period / 2) / divisor: small dyadic numbers,
/// exact in every binary T, a pattern that does not repeat within `period` entries. With divisor a power of 2
/// and sums short enough, products and sums of them stay exact too, so any order of summation gives the same
/// bits and results can be compared with ==.
template <Real T>
Matrix<T> exact_entries(Eigen::Index rows, Eigen::Index cols, long period, long divisor, long salt = 0) {
  Matrix<T> m(rows, cols);
  for (Eigen::Index k = 0; k < m.size(); ++k)
    m.data()[k] = T((static_cast<long>(k) + salt) % period - period / 2) / T(divisor);
  return m;
}

/// Seeded random matrices with entries k/8, k drawn uniformly from [lo, hi]: exact in every binary T, so
/// every precision sees the same problem. The seed is printed when the generator is made.
class RandomMatrices {
public:
  explicit RandomMatrices(std::uint64_t seed) : rng_(seed) { MESSAGE("random seed " << seed); }
  template <Real T> Matrix<T> make(Eigen::Index rows, Eigen::Index cols, int lo = -9, int hi = 9) {
    std::uniform_int_distribution<int> k(lo, hi);
    Matrix<T> m(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i)
      for (Eigen::Index j = 0; j < cols; ++j)
        m(i, j) = T(k(rng_)) / T(8);
    return m;
  }

  /// A tensor of `shape` with the same entries k/8.
  template <Real T> Tensor<T> tensor(const Shape& shape, int lo = -9, int hi = 9) {
    return Tensor<T>(shape, make<T>(shape.rows(), shape.cols(), lo, hi));
  }

private:
  std::mt19937_64 rng_;
};

template <Real T> using Build = std::function<Var<T>(const std::vector<Var<T>>&)>;

/// Records `inputs` as leaves of a fresh tape and applies `build`.
template <Real T> Var<T> record(Tape<T>& tape, const std::vector<Matrix<T>>& inputs, const Build<T>& build) {
  std::vector<Var<T>> vars;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    vars.push_back(tape.input(inputs[k], "in" + std::to_string(k)));
  return build(vars);
}

/// The op's VJP on every input against a sixth-order central difference of J = sum(op(inputs) .* W), with
/// W a fixed non-symmetric upstream gradient (so backward(out, seed) is exercised with a real seed).
template <Real T>
void check_op_gradient(const std::string& op, const std::vector<Matrix<T>>& inputs, const Build<T>& build) {
  Tape<T> tape;
  const Var<T> out = record(tape, inputs, build);
  Matrix<T> W(out.rows(), out.cols());
  for (Eigen::Index i = 0; i < W.rows(); ++i)
    for (Eigen::Index j = 0; j < W.cols(); ++j)
      W(i, j) = T(static_cast<long>(1 + 2 * i + 3 * j * (j + 1))) / T(5);
  tape.backward(out, W);

  const auto J = [&](const std::vector<Matrix<T>>& x) -> T {
    Tape<T> t;
    return record(t, x, build).value().cwiseProduct(W).sum();
  };
  const T tol = fd_tolerance<T>();
  CHECK(tol <= stated_fd_bound<T>());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Matrix<T> numeric = central_difference<T>(J, inputs, k);
    check_close(op + ": d/d input " + std::to_string(k) + ", tape vs central differences", tape.grad(tape.var(k)),
                numeric, tol);
  }
}

/// check_op_gradient for operands of any rank: the op's VJP on every input against a sixth-order central
/// difference of J = sum(op(inputs) .* W), W of the result's shape with distinct entries, every entry of every
/// input moved (in T: the 50-digit run is the strict one).
template <Real T>
void check_tensor_gradient(const std::string& op, const std::vector<Tensor<T>>& inputs, const Build<T>& build) {
  const auto record_tensors = [&](Tape<T>& tape, const std::vector<Matrix<T>>& x) {
    std::vector<Var<T>> vars;
    for (std::size_t k = 0; k < x.size(); ++k)
      vars.push_back(tape.input(x[k], inputs[k].shape(), "in" + std::to_string(k)));
    return build(vars);
  };
  std::vector<Matrix<T>> x;
  for (const Tensor<T>& t : inputs)
    x.push_back(t.matrix());
  Tape<T> tape;
  const Var<T> out = record_tensors(tape, x);
  Tensor<T> W = Tensor<T>::zeros(out.shape());
  for (Eigen::Index e = 0; e < W.numel(); ++e)
    W[e] = T(static_cast<long>(1 + 2 * e + 3 * (e % 5) * (e % 3))) / T(5);
  tape.backward(out, W);
  const auto J = [&](const std::vector<Matrix<T>>& at) -> T {
    Tape<T> t;
    return record_tensors(t, at).value().cwiseProduct(W.matrix()).sum();
  };
  const T tol = fd_tolerance<T>();
  CHECK(tol <= stated_fd_bound<T>());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    REQUIRE(tape.var(k).shape() == inputs[k].shape());
    const Matrix<T> numeric = central_difference<T>(J, x, k);
    check_close(op + " (result " + shape_string(out.shape()) + "): d/d input " + std::to_string(k) + " (" +
                    shape_string(inputs[k].shape()) + "), tape vs central differences",
                tape.grad(tape.var(k)), numeric, tol);
  }
}

/// Every pair of operand shapes broadcasting allows for a 2 x 3 result (equal, a row, a column, a scalar, on
/// either side, and a column with a row): the binary elementwise ops are checked on each.
inline std::vector<std::pair<std::pair<int, int>, std::pair<int, int>>> broadcast_patterns() {
  return {{{2, 3}, {2, 3}}, {{2, 3}, {1, 3}}, {{2, 3}, {2, 1}}, {{2, 3}, {1, 1}}, {{1, 3}, {2, 3}},
          {{2, 1}, {2, 3}}, {{1, 1}, {2, 3}}, {{2, 1}, {1, 3}}, {{1, 3}, {2, 1}}};
}

/// check_op_gradient of the binary op `build` on every broadcast pattern, with random inputs of `random`
/// (entries k/8 with lo <= k <= hi for the second operand: a divisor keeps away from 0 with lo >= 1).
template <Real T> void check_broadcast_gradients(const std::string& op, RandomMatrices& random, const Build<T>& build,
                                                 int lo = -9, int hi = 9) {
  for (const auto& [a, b] : broadcast_patterns()) {
    const std::string what = op + " of " + std::to_string(a.first) + "x" + std::to_string(a.second) + " and " +
                             std::to_string(b.first) + "x" + std::to_string(b.second);
    check_op_gradient<T>(what, {random.make<T>(a.first, a.second), random.make<T>(b.first, b.second, lo, hi)}, build);
  }
}

} // namespace tapegrad::test

#pragma once
// Graphs whose output is a matrix, not a number: the Jacobian (one backward sweep per output entry, seeded with
// that entry's unit matrix) and its check, every (output entry, input entry) pair against finite differences in
// R. Summing a non-scalar output first would let errors of opposite sign cancel; here none can hide.

#include "../../ops/layout.hpp"
#include "../../ops/slice.hpp"
#include "check_gradient.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

/// d out / d input for each of `inputs`: one row per entry of `out` (row-major), one column per entry of the input
/// (row-major), by one backward sweep of `tape` per output entry seeded with that entry's unit matrix. Leaves the
/// tape's gradients zeroed (it calls zero_grad() before each sweep and after the last).
template <Real T>
std::vector<Matrix<T>> jacobians(Tape<T>& tape, const Var<T>& out, const std::vector<Var<T>>& inputs) {
  const Eigen::Index m = out.rows(), n = out.cols();
  std::vector<Matrix<T>> J;
  for (const Var<T>& input : inputs)
    J.emplace_back(m * n, input.rows() * input.cols());
  Matrix<T> seed = Matrix<T>::Zero(m, n);
  for (Eigen::Index e = 0; e < m * n; ++e) {
    tape.zero_grad();
    seed(e / n, e % n) = T(1);
    tape.backward(out, seed);
    seed(e / n, e % n) = T(0);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const Matrix<T>& g = inputs[k].grad();
      for (Eigen::Index c = 0; c < g.size(); ++c)
        J[k](e, c) = g(c / g.cols(), c % g.cols());
    }
  }
  tape.zero_grad();
  return J;
}

/// d out / d input alone (jacobians() of one input).
template <Real T> Matrix<T> jacobian(Tape<T>& tape, const Var<T>& out, const Var<T>& input) {
  return std::move(jacobians(tape, out, {input}).front());
}

/// "out(1, 2)": how the checks of a Jacobian name an output entry (`output` the output's name), by its multi-index
/// in the output's shape (a matrix's (row, column); "out()" for rank 0).
inline std::string output_entry_name(const Shape& shape, Eigen::Index flat, const std::string& output = "out") {
  return output + entry_string(shape, flat);
}

/// The check of a graph `f` whose output may have any shape: for each output entry, the graph followed by the
/// selection of that entry (reshape to one dim, select: whose backward is f's, seeded with the entry's unit tensor)
/// checked as any graph is (the tape against finite differences in R, dual numbers, every node's VJP), its checks'
/// graph named output_entry_name(shape, entry, output). Every (output entry, input entry) pair is compared (an entry
/// that is not finite, a masked -inf, is skipped with a warning: its finite differences are NaN); worst_check() names
/// the worst, worst_pair() the worst of the tape against finite differences.
template <Real T, Real R, class F>
CheckReport check_jacobian(F f, const std::vector<Matrix<T>>& inputs, const std::vector<std::string>& names,
                           const CheckOptions& opt = {}, const std::string& output = "out") {
  Tape<T> shape_tape;
  const Var<T> out = record_output(shape_tape, f, inputs, names);
  CheckReport report;
  const Shape shape = out.shape();
  for (Eigen::Index e = 0; e < shape.numel(); ++e) {
    const std::string entry = output_entry_name(shape, e, output);
    const T& value = out.value().data()[e];
    if (!is_finite(value)) { // a masked -inf: its differences are NaN, its derivative undefined
      report.warnings.push_back(entry + " is " + to_string(value, 6) +
                                ": not checked (finite differences of an infinite or NaN value are undefined)");
      continue;
    }
    const auto g = [f, e, entry](auto& tape, const auto& in) {
      return select(reshape(f(tape, in), {-1}), 0, static_cast<long>(e), entry);
    };
    report.append(check_gradient<T, R>(g, inputs, names, opt), entry);
  }
  return report;
}

/// The worst check of `report` among those `take` accepts (worse() in report.hpp: failures first, NaN first
/// among them, then error over threshold; the first of equals); nullptr when there is none.
template <class Take> const CheckResult* worst_of(const CheckReport& report, Take take) {
  const CheckResult* worst = nullptr;
  for (const CheckResult& c : report.checks)
    if (take(c) && (!worst || worse(c, *worst))) worst = &c;
  return worst;
}

/// The worst check of `report`; nullptr for an empty report.
inline const CheckResult* worst_check(const CheckReport& report) {
  return worst_of(report, [](const CheckResult&) { return true; });
}

/// The worst (output entry, input entry) pair of a check_jacobian report: the worst of its checks of the tape
/// against finite differences (its graph names the output entry, its input and worst index the input entry);
/// nullptr when there is none.
inline const CheckResult* worst_pair(const CheckReport& report) {
  return worst_of(report, [](const CheckResult& c) { return c.kind == CheckKind::tape_vs_finite_differences; });
}

} // namespace tapegrad

#pragma once
#include "../autodiff/operands.hpp"
#include "../autodiff/vector_exp.hpp"

namespace tapegrad {

/// exp(a), elementwise.                                   a, result: m x n
///   forward  result[i][j] = exp(a[i][j])
///   VJP      da[i][j] += grad[i][j] result[i][j]      (d/dx exp(x) = exp(x): the saved result)
template <Real T> Var<T> exp(const Var<T>& a, std::string label = {}) {
  Matrix<T> result = a.tape().buffer(a.rows(), a.cols());
  result = a.value();
  exp_in_place(result.data(), static_cast<std::size_t>(result.size())); // vectorised for double
  return a.tape().record(
      "Exp", {a}, std::move(result), [](Backprop<T>& bp) { bp.accumulate(0, bp.grad().cwiseProduct(bp.result())); },
      [](const std::vector<Var<T>>& in) { return exp(in[0]); }, std::move(label));
}

} // namespace tapegrad

#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// log(a), natural, elementwise.                          a, result: m x n
///   forward  result[i][j] = log(a[i][j])       (log 0 = -inf; log of a negative entry = NaN, as IEEE)
///   VJP      da[i][j] += grad[i][j] / a[i][j]         (d/dx log(x) = 1/x)
template <Real T> Var<T> log(const Var<T>& a, std::string label = {}) {
  Matrix<T> result = a.tape().buffer(a.rows(), a.cols());
  result.noalias() = a.value().unaryExpr([](const T& x) -> T {
    using std::log;
    return log(x);
  });
  return a.tape().record(
      "Log", {a}, std::move(result), [](Backprop<T>& bp) { bp.accumulate(0, bp.grad().cwiseQuotient(bp.input(0))); },
      [](const std::vector<Var<T>>& in) { return log(in[0]); }, std::move(label));
}

} // namespace tapegrad

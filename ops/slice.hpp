#pragma once
// Slices of rows or columns, and columns concatenated: what splits attention into heads, joins them again,
// and takes the first T rows of a position table.
#include "../autodiff/operands.hpp"

#include <span>
#include <vector>

namespace tapegrad {
namespace detail {

/// Refuses a slice [begin, begin + count) outside [0, extent): ShapeError naming op, operand and shape.
template <Real T> void check_slice(std::string_view op, const Var<T>& a, long begin, long count, Eigen::Index extent,
                                   std::string_view what) {
  if (begin < 0 || count < 1 || begin > extent || count > extent - begin)
    throw ShapeError(std::string(op) + "(" + a.name() + ", begin " + std::to_string(begin) + ", count " +
                     std::to_string(count) + "): " + a.name() + " is " + shape_string(a.rows(), a.cols()) +
                     "; a slice needs count >= 1 and " + std::string(what) + " begin..begin+count-1 within 0.." +
                     std::to_string(extent - 1));
}

} // namespace detail

/// slice_rows(a, begin, count): rows begin .. begin+count-1.      a: m x n, result: count x n
///   forward  result[i][j] = a[begin + i][j]
///   VJP      da[begin + i][j] += grad[i][j]; the other rows of a get nothing
template <Real T> Var<T> slice_rows(const Var<T>& a, long begin, long count, std::string label = {}) {
  detail::check_slice("slice_rows", a, begin, count, a.rows(), "rows");
  Matrix<T> result = a.tape().buffer(count, a.cols());
  result = a.value().middleRows(begin, count);
  return a.tape().record(
      "SliceRows", {a}, std::move(result),
      [begin, count](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          da.setZero();
          da.middleRows(begin, count) = bp.grad();
        });
      },
      [begin, count](const std::vector<Var<T>>& in) { return slice_rows(in[0], begin, count); }, std::move(label));
}

/// slice_cols(a, begin, count): columns begin .. begin+count-1.   a: m x n, result: m x count
///   forward  result[i][j] = a[i][begin + j]
///   VJP      da[i][begin + j] += grad[i][j]; the other columns of a get nothing
template <Real T> Var<T> slice_cols(const Var<T>& a, long begin, long count, std::string label = {}) {
  detail::check_slice("slice_cols", a, begin, count, a.cols(), "columns");
  Matrix<T> result = a.tape().buffer(a.rows(), count);
  result = a.value().middleCols(begin, count);
  return a.tape().record(
      "SliceCols", {a}, std::move(result),
      [begin, count](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          da.setZero();
          da.middleCols(begin, count) = bp.grad();
        });
      },
      [begin, count](const std::vector<Var<T>>& in) { return slice_cols(in[0], begin, count); }, std::move(label));
}

/// concat_cols(a_0, ..., a_k): side by side.     a_p: m x n_p, result: m x (n_0 + ... + n_k)
///   forward  result[i][c_p + j] = a_p[i][j],   c_p = n_0 + ... + n_(p-1)
///   VJP      da_p[i][j] += grad[i][c_p + j]
template <Real T> Var<T> concat_cols(std::span<const Var<T>> parts, std::string label = {}) {
  if (parts.empty()) throw ShapeError("concat_cols(" + label + "): needs at least one operand");
  Tape<T>& tape = parts[0].tape();
  Eigen::Index cols = 0;
  for (const Var<T>& p : parts) {
    common_tape("concat_cols", parts[0], p);
    if (p.rows() != parts[0].rows())
      shape_mismatch("concat_cols", parts[0], p, "every operand needs the same number of rows");
    cols += p.cols();
  }
  tape.check_entries(parts[0].rows(), cols, [&] { return "concat_cols(" + parts[0].name() + ", ...): the result"; });
  Matrix<T> result = tape.buffer(parts[0].rows(), cols);
  Eigen::Index at = 0;
  for (const Var<T>& p : parts) {
    result.middleCols(at, p.cols()) = p.value();
    at += p.cols();
  }
  return tape.record(
      "ConcatCols", parts, std::move(result),
      [n = parts.size()](Backprop<T>& bp) {
        Eigen::Index at = 0;
        for (std::size_t p = 0; p < n; ++p) {
          const Eigen::Index c = bp.input(p).cols();
          bp.accumulate(p, bp.grad().middleCols(at, c));
          at += c;
        }
      },
      [](const std::vector<Var<T>>& in) { return concat_cols(std::span<const Var<T>>(in)); }, std::move(label));
}

template <Real T> Var<T> concat_cols(const std::vector<Var<T>>& parts, std::string label = {}) {
  return concat_cols(std::span<const Var<T>>(parts), std::move(label));
}

} // namespace tapegrad

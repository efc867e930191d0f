#pragma once
// Slices of rows or columns, and columns concatenated: what splits attention into heads, joins them again,
// and takes the first T rows of a position table.
#include "../autodiff/operands.hpp"

#include <span>
#include <vector>

namespace tapegrad {
namespace detail {

/// Refuses a slice [begin, begin + count) outside [0, extent): ShapeError naming op, operand and shape.
template <class A>
void check_slice(std::string_view op, const A& a, long begin, long count, Eigen::Index extent, std::string_view what) {
  if (begin < 0 || count < 1 || begin > extent || count > extent - begin)
    throw ShapeError(std::string(op) + "(" + a.name() + ", begin " + std::to_string(begin) + ", count " +
                     std::to_string(count) + "): " + a.name() + " is " + shape_string(a.rows(), a.cols()) +
                     "; a slice needs count >= 1 and " + std::string(what) + " begin..begin+count-1 within 0.." +
                     std::to_string(extent - 1));
}

inline constexpr ParamSpec slice_params[] = {{"begin", ParamType::integer, {}, "the first index kept"},
                                             {"count", ParamType::integer, {}, "how many are kept (>= 1)"}};

} // namespace detail

/// slice_rows(a, begin, count): rows begin .. begin+count-1.      a: m x n, result: count x n
///   forward  result[i][j] = a[begin + i][j]
///   VJP      da[begin + i][j] += grad[i][j]; the other rows of a get nothing
struct SliceRowsOp {
  static constexpr OpInfo info{.name = "slice_rows",
                               .call = "slice_rows(a, begin, count)",
                               .node = "SliceRows",
                               .file = "slice.hpp",
                               .params = detail::slice_params,
                               .formula = "result[i][j] = a[begin + i][j]",
                               .shapes = "a: m x n -> count x n"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    detail::check_slice("slice_rows", in[0], p.integer("begin"), p.integer("count"), in[0].rows(), "rows");
    return {p.integer("count"), in[0].cols()};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SliceRowsOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  const long begin = p.integer("begin"), count = s.rows;
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  result = in[0].value().middleRows(begin, count);
  return tape.template record<SliceRowsOp>(
      in, std::move(result),
      [begin, count](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          da.setZero();
          da.middleRows(begin, count) = bp.grad();
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SliceRowsOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> slice_rows(const Var<T>& a, long begin, long count, std::string label = {}) {
  return SliceRowsOp::apply<T>(operands(a), Params<T>().set("begin", begin).set("count", count), std::move(label));
}

/// slice_cols(a, begin, count): columns begin .. begin+count-1.   a: m x n, result: m x count
///   forward  result[i][j] = a[i][begin + j]
///   VJP      da[i][begin + j] += grad[i][j]; the other columns of a get nothing
struct SliceColsOp {
  static constexpr OpInfo info{.name = "slice_cols",
                               .call = "slice_cols(a, begin, count)",
                               .node = "SliceCols",
                               .file = "slice.hpp",
                               .params = detail::slice_params,
                               .formula = "result[i][j] = a[i][begin + j]",
                               .shapes = "a: m x n -> m x count"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    detail::check_slice("slice_cols", in[0], p.integer("begin"), p.integer("count"), in[0].cols(), "columns");
    return {in[0].rows(), p.integer("count")};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SliceColsOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  const long begin = p.integer("begin"), count = s.cols;
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  result = in[0].value().middleCols(begin, count);
  return tape.template record<SliceColsOp>(
      in, std::move(result),
      [begin, count](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& da) {
          da.setZero();
          da.middleCols(begin, count) = bp.grad();
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SliceColsOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> slice_cols(const Var<T>& a, long begin, long count, std::string label = {}) {
  return SliceColsOp::apply<T>(operands(a), Params<T>().set("begin", begin).set("count", count), std::move(label));
}

/// concat_cols(a_0, ..., a_k): side by side.     a_p: m x n_p, result: m x (n_0 + ... + n_k)
///   forward  result[i][c_p + j] = a_p[i][j],   c_p = n_0 + ... + n_(p-1)
///   VJP      da_p[i][j] += grad[i][c_p + j]
struct ConcatColsOp {
  static constexpr OpInfo info{.name = "concat_cols",
                               .call = "concat_cols({a, b, ...})",
                               .node = "ConcatCols",
                               .file = "slice.hpp",
                               .arity = 1,
                               .variadic = true,
                               .formula = "result[i][c_p + j] = a_p[i][j], c_p = n_0 + ... + n_(p-1)",
                               .shapes = "a_p: m x n_p -> m x (n_0 + ... + n_k)"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    Eigen::Index cols = 0;
    for (const A& p : in) {
      if (p.rows() != in[0].rows())
        shape_mismatch("concat_cols", in[0], p, "every operand needs the same number of rows");
      cols += p.cols();
    }
    return {in[0].rows(), cols};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> ConcatColsOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  if (in.empty()) throw ShapeError("concat_cols(" + label + "): needs at least one operand");
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  tape.check_entries(s.rows, s.cols, [&] { return "concat_cols(" + in[0].name() + ", ...): the result"; });
  Matrix<T> result = tape.buffer(s.rows, s.cols);
  Eigen::Index at = 0;
  for (const Var<T>& v : in) {
    result.middleCols(at, v.cols()) = v.value();
    at += v.cols();
  }
  return tape.template record<ConcatColsOp>(
      in, std::move(result),
      [n = in.size()](Backprop<T>& bp) {
        Eigen::Index at = 0;
        for (std::size_t k = 0; k < n; ++k) {
          const Eigen::Index c = bp.input(k).cols();
          bp.accumulate(k, bp.grad().middleCols(at, c));
          at += c;
        }
      },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, ConcatColsOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> concat_cols(std::span<const Var<T>> parts, std::string label = {}) {
  return ConcatColsOp::apply<T>(parts, {}, std::move(label));
}

template <Real T> Var<T> concat_cols(const std::vector<Var<T>>& parts, std::string label = {}) {
  return concat_cols(std::span<const Var<T>>(parts), std::move(label));
}

} // namespace tapegrad

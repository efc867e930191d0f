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
  const long begin = p.integer("begin"), count = s.rows();
  Matrix<T> result = tape.buffer(s.rows(), s.cols());
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
  const long begin = p.integer("begin"), count = s.cols();
  Matrix<T> result = tape.buffer(s.rows(), s.cols());
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

namespace detail {

/// The shape of a concatenation along rows (stacked) or columns (side by side), or a ShapeError naming the op
/// and the operand whose other axis differs.
template <class A> Shape concat_shape(std::string_view op, std::span<const A> in, bool stack_rows) {
  if (in.empty()) throw ShapeError(std::string(op) + ": needs at least one operand");
  Eigen::Index along = 0;
  for (const A& p : in) {
    if ((stack_rows ? p.cols() : p.rows()) != (stack_rows ? in[0].cols() : in[0].rows()))
      shape_mismatch(op, in[0], p,
                     stack_rows ? "every operand needs the same number of columns"
                                : "every operand needs the same number of rows");
    along += stack_rows ? p.rows() : p.cols();
  }
  return stack_rows ? Shape{along, in[0].cols()} : Shape{in[0].rows(), along};
}

/// Records concatenation op `Op` (concat_rows or concat_cols): each operand's block copied in, and in the VJP
/// the matching block of the gradient added back into it.
template <class Op, Real T>
Var<T> record_concat(std::span<const Var<T>> in, const Params<T>& p, std::string label, bool stack_rows) {
  const std::string op(Op::info.name);
  if (in.empty()) throw ShapeError(op + "(" + label + "): needs at least one operand");
  Tape<T>& tape = common_tape(Op::info, in);
  const Shape s = Op::shape(in, p);
  tape.check_entries(s.rows(), s.cols(), [&] { return op + "(" + in[0].name() + ", ...): the result"; });
  Matrix<T> result = tape.buffer(s.rows(), s.cols());
  Eigen::Index at = 0;
  for (const Var<T>& v : in) {
    if (stack_rows)
      result.middleRows(at, v.rows()) = v.value();
    else
      result.middleCols(at, v.cols()) = v.value();
    at += stack_rows ? v.rows() : v.cols();
  }
  return tape.template record<Op>(
      in, std::move(result),
      [n = in.size(), stack_rows](Backprop<T>& bp) {
        Eigen::Index at = 0;
        for (std::size_t k = 0; k < n; ++k) {
          const Eigen::Index c = stack_rows ? bp.input(k).rows() : bp.input(k).cols();
          if (stack_rows)
            bp.accumulate(k, bp.grad().middleRows(at, c));
          else
            bp.accumulate(k, bp.grad().middleCols(at, c));
          at += c;
        }
      },
      std::move(label));
}

} // namespace detail

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
    return detail::concat_shape("concat_cols", in, false);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> ConcatColsOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return detail::record_concat<ConcatColsOp>(in, p, std::move(label), false);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, ConcatColsOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> concat_cols(std::span<const Var<T>> parts, std::string label = {}) {
  return ConcatColsOp::apply<T>(parts, {}, std::move(label));
}

template <Real T> Var<T> concat_cols(const std::vector<Var<T>>& parts, std::string label = {}) {
  return concat_cols(std::span<const Var<T>>(parts), std::move(label));
}

/// concat_rows(a_0, ..., a_k): stacked top to bottom.     a_p: m_p x n, result: (m_0 + ... + m_k) x n
///   forward  result[r_p + i][j] = a_p[i][j],   r_p = m_0 + ... + m_(p-1)
///   VJP      da_p[i][j] += grad[r_p + i][j]
struct ConcatRowsOp {
  static constexpr OpInfo info{.name = "concat_rows",
                               .call = "concat_rows({a, b, ...})",
                               .node = "ConcatRows",
                               .file = "slice.hpp",
                               .arity = 1,
                               .variadic = true,
                               .formula = "result[r_p + i][j] = a_p[i][j], r_p = m_0 + ... + m_(p-1)",
                               .shapes = "a_p: m_p x n -> (m_0 + ... + m_k) x n"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return detail::concat_shape("concat_rows", in, true);
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> ConcatRowsOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return detail::record_concat<ConcatRowsOp>(in, p, std::move(label), true);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, ConcatRowsOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> concat_rows(std::span<const Var<T>> parts, std::string label = {}) {
  return ConcatRowsOp::apply<T>(parts, {}, std::move(label));
}

template <Real T> Var<T> concat_rows(const std::vector<Var<T>>& parts, std::string label = {}) {
  return concat_rows(std::span<const Var<T>>(parts), std::move(label));
}

} // namespace tapegrad

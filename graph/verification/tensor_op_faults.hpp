#pragma once
// The classic slips of code written for tensors: a VJP that writes where it must add (embedding, expand), that
// sums a broadcast bias over one batch entry, that applies a permutation where its inverse is due, that takes a
// transpose's gradient for a reshape's, that works along the wrong dim, that forgets a transpose of a batched
// matmul, plus two derivative slips (tanh, mul). Each is a fault as graph/verification/op_fault_base.hpp defines
// them; op_faults.hpp lists them with the others.

#include "op_fault_base.hpp"

#include <array>
#include <set>
#include <string>
#include <vector>

namespace tapegrad {

namespace detail {
/// Where these faults are defined, as their descriptors say.
inline constexpr std::string_view tensor_fault_file = "../graph/verification/tensor_op_faults.hpp";
} // namespace detail

/// embedding's VJP ASSIGNS each looked-up row's gradient instead of adding it: a token that occurs twice keeps
/// only its last occurrence's gradient.
struct EmbeddingWriteFault {
  using Op = EmbeddingOp;
  static constexpr OpFaultInfo fault{21, "embedding backward writing a repeated token's row instead of adding",
                                     &EmbeddingOp::info,
                                     "dweight[v] = grad[p] for each position p of v instead of the sum over them",
                                     "a common hand-written scatter slip (index assignment where index_add is due)"};
  static constexpr bool any_rank = true; ///< written for any shape of indices
  static constexpr OpInfo info = detail::faulty_op(EmbeddingOp::info, "Embedding (rows written)",
                                                   "dweight[indices[p]] = grad[p]", detail::tensor_fault_file);
  template <Real T> static std::string invisible(std::span<const Tensor<T>>, const Params<T>& p) {
    const Tensor<long>& idx = p.ints("indices");
    std::set<long> seen;
    for (Eigen::Index e = 0; e < idx.numel(); ++e)
      if (!seen.insert(idx[e]).second) return {};
    return "no index occurs twice in its indices, so writing each row once is adding it once";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<EmbeddingWriteFault>(in, p, std::move(label),
                                                     [idx = p.ints_shared("indices")](Backprop<T>& bp) {
                                                       bp.accumulate_with(0, [&](Matrix<T>& dw) {
                                                         dw.setZero();
                                                         for (Eigen::Index e = 0; e < idx->numel(); ++e)
                                                           dw.row((*idx)[e]) = bp.grad().row(e);
                                                       });
                                                     });
  }
};

/// add's VJP, written for matrices and run on a batch: a bias of rank <= 2 broadcast over a result of rank >= 3
/// gets the gradient of batch entry 0 only (the result's first matrix, summed over its rows as fault 11's slip is
/// not), where it must be summed over every batch entry too.
struct BiasGradientFirstBatchFault {
  using Op = AddOp;
  static constexpr OpFaultInfo fault{
      22, "broadcast bias gradient from batch entry 0 only", &AddOp::info,
      "db = sum_to(grad[0, ..., 0, :, :]) (the leading dims at index 0) instead of sum_to(grad) over every dim",
      "2-D bias code run on a batch (a common slip)"};
  static constexpr bool any_rank = true;
  static constexpr OpInfo info = detail::faulty_op(AddOp::info, "Add (bias from batch entry 0)",
                                                   "a + b; db = sum_to(grad[0, ..., 0])", detail::tensor_fault_file);
  /// Whether an operand of shape x, in a result of shape r, is a matrix (or less) repeated over batch dims.
  static bool over_batch(const Shape& x, const Shape& r) {
    return x.rank() <= 2 && r.rank() >= 3 && r.take_front(r.rank() - 2).numel() > 1;
  }
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>&) {
    Shape r;
    if (!broadcast_shapes(in[0].shape(), in[1].shape(), r)) return "its operands do not broadcast";
    if (over_batch(in[0].shape(), r) || over_batch(in[1].shape(), r)) return {};
    return "no operand of rank <= 2 is broadcast over the batch dims of a result of rank >= 3 (" +
           shape_string(in[0].shape()) + " and " + shape_string(in[1].shape()) + ")";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<BiasGradientFirstBatchFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      const Shape& r = bp.result_shape();
      for (std::size_t k = 0; k < 2; ++k) {
        if (!over_batch(bp.input_shape(k), r)) {
          accumulate_broadcast(bp, k, bp.grad());
          continue;
        }
        const Shape last{r[r.rank() - 2], r[r.rank() - 1]};
        const Matrix<T> first = Eigen::Map<const Matrix<T>>(bp.grad().data(), last.rows(), last.cols());
        bp.accumulate(k, sum_to(first, last, bp.input_shape(k)));
      }
    });
  }
};

/// expand's VJP ASSIGNS each read of an entry instead of adding: an entry repeated n times gets one read's
/// gradient, not the sum of n.
struct ExpandWriteFault {
  using Op = ExpandOp;
  static constexpr OpFaultInfo fault{23, "expand backward writing instead of summing the repeats", &ExpandOp::info,
                                     "da[s] = grad[o] for each read o of entry s instead of the sum over them",
                                     "a common hand-written slip (a repeat's gradient not reduced)"};
  static constexpr bool any_rank = true;
  static constexpr OpInfo info =
      detail::faulty_op(ExpandOp::info, "Expand (writes)", "da[map(o)] = grad[o]", detail::tensor_fault_file);
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>& p) {
    const ShapeOperand a(in[0].shape(), "a");
    const Shape out = ExpandOp::shape(std::span<const ShapeOperand>(&a, 1), p);
    if (out.numel() != in[0].numel()) return {};
    return "nothing is repeated (" + shape_string(in[0].shape()) + " to " + shape_string(out) +
           "), so writing is adding once";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    const StridedMap map = ExpandOp::map(in[0].shape(), ExpandOp::shape(in, p));
    return detail::record_fault<ExpandWriteFault>(in, p, std::move(label), [map](Backprop<T>& bp) {
      bp.accumulate_with(0, [&](Matrix<T>& da) {
        da.setZero();
        const T* g = bp.grad().data();
        map.run([&](Eigen::Index o, Eigen::Index s) { da.data()[s] = g[o]; });
      });
    });
  }
};

/// permute's VJP applies the permutation again instead of its inverse: right for a swap of two dims (its own
/// inverse), wrong for a cycle of three.
struct PermuteNotInvertedFault {
  using Op = PermuteOp;
  static constexpr OpFaultInfo fault{24, "permute backward applying dims instead of their inverse", &PermuteOp::info,
                                     "da = permute(grad, dims) (its entries in order) instead of permute(grad, "
                                     "argsort(dims))",
                                     "a common hand-written slip (the inverse permutation forgotten)"};
  static constexpr bool any_rank = true;
  static constexpr OpInfo info = detail::faulty_op(PermuteOp::info, "Permute (not inverted)",
                                                   "da (flat) = permute(grad, dims) (flat)", detail::tensor_fault_file);
  /// The slip's map: entry o of da (flat) is read at slip(o) of grad, which has shape `result`.
  static StridedMap slip(const Shape& result, const std::vector<std::size_t>& dims) {
    return PermuteOp::map(result, dims);
  }
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>& p) {
    const std::vector<std::size_t> dims = PermuteOp::order(ShapeOperand(in[0].shape(), "a"), p);
    const StridedMap forward = PermuteOp::map(in[0].shape(), dims);
    std::vector<Eigen::Index> right(static_cast<std::size_t>(in[0].numel())); // da[s] reads grad[right[s]]
    forward.run([&](Eigen::Index o, Eigen::Index s) { right[static_cast<std::size_t>(s)] = o; });
    bool same = true;
    slip(forward.out, dims).run([&](Eigen::Index o, Eigen::Index s) {
      same = same && right[static_cast<std::size_t>(o)] == s;
    });
    if (!same) return {};
    return "dims " + list_string(dims) + " on " + shape_string(in[0].shape()) +
           ": applying them reads the gradient as their inverse does (a swap is its own inverse; so is any order of "
           "dims of size 1)";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    const std::vector<std::size_t> dims = PermuteOp::order(in[0], p);
    const StridedMap map = slip(PermuteOp::shape(in, p), dims);
    return detail::record_fault<PermuteNotInvertedFault>(in, p, std::move(label), [map](Backprop<T>& bp) {
      bp.accumulate_with(0, [&](Matrix<T>& da) {
        const T* g = bp.grad().data();
        map.run([&](Eigen::Index o, Eigen::Index s) { da.data()[o] = g[s]; });
      });
    });
  }
};

/// softmax's VJP runs along the dim before the one the forward normalised (dim - 1, cyclically): the slip of a
/// backward that hard-codes dim=1 where the forward used dim=-1, or the other way round.
struct SoftmaxWrongDimFault {
  using Op = SoftmaxRowsOp;
  static constexpr OpFaultInfo fault{
      25, "softmax backward along the wrong dim", &SoftmaxRowsOp::info,
      "ds = a (g - sum(a g)) with the sum along dim - 1 instead of along dim",
      "a common hand-written slip (a dim hard-coded where the forward was given another)"};
  static constexpr bool any_rank = true;
  static constexpr OpInfo info = detail::faulty_op(SoftmaxRowsOp::info, "SoftmaxRows (wrong dim)",
                                                   "ds = a (g - sum(a g)) along dim - 1", detail::tensor_fault_file);
  /// Invisible where there is no other dim, or where both dims have size 1 (both VJPs are 0 there). Coincidences
  /// of values (a result that is 0 everywhere, every key masked) are not looked for.
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>& p) {
    const Shape& s = in[0].shape();
    if (s.rank() <= 1) return "its operand has one dim, the one softmax normalises along";
    const std::size_t d = op_dim("softmax", ShapeOperand(s, "a"), p), wrong = (d + s.rank() - 1) % s.rank();
    if (s[d] > 1 || s[wrong] > 1) return {};
    return "dims " + std::to_string(wrong) + " and " + std::to_string(d) + " of its operand (" + shape_string(s) +
           ") have size 1, where both VJPs are 0";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    const std::size_t rank = in[0].shape().rank(), d = op_dim("softmax", in[0], p), wrong = (d + rank - 1) % rank;
    return detail::record_fault<SoftmaxWrongDimFault>(in, p, std::move(label), [wrong](Backprop<T>& bp) {
      bp.accumulate_with(0, [&](Matrix<T>& ds) {
        rows_along(
            bp.result_shape(), wrong, ds,
            [](Matrix<T>& out, const Matrix<T>& a, const Matrix<T>& g) { softmax_rows_vjp(out, a, g); }, bp.result(),
            bp.grad());
      });
    });
  }
};

/// transpose's VJP as a reshape's: the gradient's entries passed on in their own order, not swapped back.
struct TransposeAsReshapeFault {
  using Op = TransposeOp;
  static constexpr OpFaultInfo fault{26, "transpose backward as a reshape (entries not swapped back)",
                                     &TransposeOp::info, "da (flat) = grad (flat) instead of transpose(grad)",
                                     "a common slip (view where transpose is due)"};
  static constexpr bool any_rank = true;
  static constexpr OpInfo info =
      detail::faulty_op(TransposeOp::info, "Transpose (as reshape)", "da (flat) = grad", detail::tensor_fault_file);
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>& p) {
    const ShapeOperand a(in[0].shape(), "a");
    if (!reads_in_order(TransposeOp::map(a, p))) return {};
    const auto [d0, d1] = TransposeOp::swapped(a, p);
    if (d0 == d1) return "dim0 and dim1 are the same dim: nothing is swapped";
    return "transposing " + shape_string(in[0].shape()) +
           " moves no entry (a swapped dim has size 1), so it is a reshape";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<TransposeAsReshapeFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      const Shape& a = bp.input_shape(0);
      bp.accumulate(0, Eigen::Map<const Matrix<T>>(bp.grad().data(), a.rows(), a.cols()));
    });
  }
};

/// matmul's VJP without the transposes: da = grad b, db = a grad, which has the right shape exactly when the
/// operand is square (in its last two dims), so it runs without a shape error there.
struct MatMulNoTransposeFault {
  using Op = MatMulOp;
  static constexpr OpFaultInfo fault{27, "matmul backward without the transpose of a square operand", &MatMulOp::info,
                                     "da = grad b where b is square, db = a grad where a is square, instead of "
                                     "grad b^T and a^T grad",
                                     "a common hand-written slip (shapes agree when an operand is square)"};
  static constexpr bool any_rank = true;
  static constexpr OpInfo info = detail::faulty_op(
      MatMulOp::info, "MatMul (no transpose)", "da = grad b, db = a grad (square operands)", detail::tensor_fault_file);
  /// Where the slip applies: both operands of rank >= 2 with the same batch dims (no broadcast, no vector).
  static bool applies(const Shape& a, const Shape& b) {
    return a.rank() >= 2 && b.rank() >= 2 && a.take_front(a.rank() - 2) == b.take_front(b.rank() - 2);
  }
  static bool square(const Shape& x) { return x[x.rank() - 2] == x[x.rank() - 1]; }
  static std::string refusal(std::span<const Shape> s) {
    if (applies(s[0], s[1])) return {};
    return "the slip is written for operands of rank >= 2 with the same batch dims (" + shape_string(s[0]) + " and " +
           shape_string(s[1]) + ")";
  }
  /// Whether x is square in its last two dims and some batch entry of it is not symmetric: where the missing
  /// transpose changes something.
  template <Real T> static bool asymmetric(const Tensor<T>& x) {
    if (!square(x.shape())) return false;
    const Eigen::Index n = x.shape()[x.rank() - 1];
    for (Eigen::Index at = 0; at < x.numel(); at += n * n)
      for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j < i; ++j)
          if (x[at + i * n + j] != x[at + j * n + i]) return true;
    return false;
  }
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>&) {
    const Shape &a = in[0].shape(), &b = in[1].shape();
    if (!applies(a, b)) return refusal(std::array{a, b});
    if (asymmetric(in[0]) || asymmetric(in[1])) return {};
    if (square(a) || square(b))
      return std::string(square(a) && square(b) ? "its square operands are" : "its square operand is") +
             " symmetric (" + shape_string(a) + " and " + shape_string(b) + "), where x and x^T agree";
    return "neither operand is square (" + shape_string(a) + " and " + shape_string(b) +
           "), so grad b and a grad would not even have the operands' shapes";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<MatMulNoTransposeFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      const Shape &sa = bp.input_shape(0), &sb = bp.input_shape(1);
      constexpr Transposed N = Transposed::no, Tr = Transposed::yes;
      const Eigen::Index m = sa[sa.rank() - 2], n = sa[sa.rank() - 1], q = sb[sb.rank() - 1];
      const Eigen::Index batch = sa.take_front(sa.rank() - 2).numel();
      const T *a = bp.input(0).data(), *b = bp.input(1).data(), *g = bp.grad().data();
      bp.accumulate_with(0, [&](Matrix<T>& da) { // each slice written once (applies() wants equal batch dims)
        for (Eigen::Index e = 0; e < batch; ++e)
          product_into(da.data() + e * m * n, Into::assign, g + e * m * q, N, b + e * n * q, n == q ? N : Tr, m, q, n);
      });
      bp.accumulate_with(1, [&](Matrix<T>& db) {
        for (Eigen::Index e = 0; e < batch; ++e)
          product_into(db.data() + e * n * q, Into::assign, a + e * m * n, m == n ? N : Tr, g + e * m * q, N, n, m, q);
      });
    });
  }
};

/// tanh's derivative as 1 - tanh instead of 1 - tanh^2.
struct TanhDerivativeFault {
  using Op = TanhOp;
  static constexpr OpFaultInfo fault{28, "tanh backward as 1 - tanh instead of 1 - tanh^2", &TanhOp::info,
                                     "da = g (1 - t) instead of g (1 - t^2)", "a common hand-written slip"};
  static constexpr bool any_rank = true;
  static constexpr OpInfo info =
      detail::faulty_op(TanhOp::info, "Tanh (1 - t)", "da = g (1 - t)", detail::tensor_fault_file);
  /// Invisible only where every entry is 0 or +inf (t = 0 or 1, where 1 - t = 1 - t^2).
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>&) {
    for (Eigen::Index e = 0; e < in[0].numel(); ++e)
      if (in[0][e] != T(0) && in[0][e] != infinity<T>()) return {};
    return "every entry of its operand is 0 or +inf (tanh 0 or 1), where 1 - t and 1 - t^2 agree";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<TanhDerivativeFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      bp.accumulate_with(0, [&](Matrix<T>& da) {
        const T *g = bp.grad().data(), *t = bp.result().data();
        for (Eigen::Index e = 0; e < da.size(); ++e)
          da.data()[e] = T(g[e] * T(T(1) - t[e]));
      });
    });
  }
};

/// mul's VJP multiplies the gradient by the operand's own value instead of the other operand's.
struct MulOwnOperandFault {
  using Op = HadamardOp;
  static constexpr OpFaultInfo fault{29, "mul backward by the operand itself instead of the other", &HadamardOp::info,
                                     "da = g a, db = g b instead of da = g b, db = g a", "a common hand-written slip"};
  static constexpr bool any_rank = true;
  static constexpr OpInfo info =
      detail::faulty_op(HadamardOp::info, "Hadamard (own operand)", "da = g a, db = g b", detail::tensor_fault_file);
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>&) {
    Shape r;
    if (!broadcast_shapes(in[0].shape(), in[1].shape(), r)) return "its operands do not broadcast";
    if (expand_to(in[0].matrix(), in[0].shape(), r) != expand_to(in[1].matrix(), in[1].shape(), r)) return {};
    return "its two operands are equal (" + shape_string(in[0].shape()) + " and " + shape_string(in[1].shape()) +
           ", repeated to " + shape_string(r) + "), so each one's partner is itself";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<MulOwnOperandFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      const Matrix<T>& g = bp.grad();
      for (std::size_t k = 0; k < 2; ++k)
        with_expanded(bp.input(k), bp.input_shape(k), bp.result_shape(),
                      [&](const auto& x) { accumulate_broadcast(bp, k, g.binaryExpr(x, ZeroSafeProduct{})); });
    });
  }
};

} // namespace tapegrad

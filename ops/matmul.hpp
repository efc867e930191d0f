#pragma once
#include "../autodiff/operands.hpp"
#include "transpose.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <type_traits>
#include <vector>

namespace tapegrad {

/// a b in plain loops, i-k-j order over row-major storage (each a[i][k] once, rows of b streamed). For
/// multiprecision types this beats Eigen's GEMM, whose blocking and packing pay only for native types
/// (bench/matmul.cpp measures both).
template <Real T> void matmul_loops(Matrix<T>& c, const Matrix<T>& a, const Matrix<T>& b) {
  assert(a.cols() == b.rows() && c.rows() == a.rows() && c.cols() == b.cols());
  c.setZero();
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index k = 0; k < a.cols(); ++k) {
      const T& aik = a(i, k);
      for (Eigen::Index j = 0; j < b.cols(); ++j)
        if constexpr (std::is_same_v<T, mpfr_real>) // one fused multiply-add, no temporary number per term
          mpfr_fma(c(i, j).backend().data(), aik.backend().data(), b(k, j).backend().data(), c(i, j).backend().data(),
                   MPFR_RNDN);
        else
          c(i, j) += aik * b(k, j);
    }
}
template <Real T> Matrix<T> matmul_loops(const Matrix<T>& a, const Matrix<T>& b) {
  Matrix<T> c(a.rows(), b.cols());
  matmul_loops(c, a, b);
  return c;
}

/// Whether a product's operand is used as it is or transposed.
enum class Transposed { no, yes };

/// c (m x p) = op(a) op(b) (Into::assign: c's old entries are never read) or += (Into::add), in raw row-major
/// storage: a is m x n (n x m stored, when transposed), b n x p (p x n stored), c has leading dimension p. float
/// and double go to BLAS's gemm with beta = 0 or 1 when the build uses BLAS, so adding a product into c needs no
/// temporary (assigning one still costs a pass over c: Eigen's `c = a b` zeroes c before it adds, and so does
/// OpenBLAS's gemm for beta = 0), except products as small as those Eigen evaluates coefficient by coefficient
/// (n + m + p < 20) and matrix-vector products (m or p is 1: Eigen hands those to gemv), which Eigen's maps take;
/// i-k-j loops for the other types.
template <Real T> void product_into(T* c, Into into, const T* a, Transposed ta, const T* b, Transposed tb,
                                    Eigen::Index m, Eigen::Index n, Eigen::Index p) {
  if (m == 0 || p == 0) return;
  if (n == 0) { // an empty sum
    if (into == Into::assign) std::fill(c, c + m * p, T(0));
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
#ifdef EIGEN_USE_BLAS
    constexpr Eigen::Index int_max = std::numeric_limits<int>::max();
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>)
      if (n + m + p >= EIGEN_GEMM_TO_COEFFBASED_THRESHOLD && m > 1 && p > 1 && m <= int_max && n <= int_max &&
          p <= int_max) {
        // Row-major c is column-major c^T = op(b)^T op(a)^T: b's storage read as column-major is b^T (or, stored
        // transposed, op(b) itself, so 'T'), likewise a's.
        const char tb_char = tb == Transposed::no ? 'N' : 'T', ta_char = ta == Transposed::no ? 'N' : 'T';
        const int M = static_cast<int>(p), N = static_cast<int>(m), K = static_cast<int>(n);
        const int ldb = static_cast<int>(tb == Transposed::no ? p : n),
                  lda = static_cast<int>(ta == Transposed::no ? n : m);
        const T one = 1, beta = into == Into::assign ? T(0) : T(1);
        if constexpr (std::is_same_v<T, double>)
          dgemm_(&tb_char, &ta_char, &M, &N, &K, &one, b, &ldb, a, &lda, &beta, c, &M);
        else
          sgemm_(&tb_char, &ta_char, &M, &N, &K, &one, b, &ldb, a, &lda, &beta, c, &M);
        return;
      }
#endif
    using Map = Eigen::Map<Matrix<T>>;
    using ConstMap = Eigen::Map<const Matrix<T>>;
    Map C(c, m, p);
    const ConstMap A(a, ta == Transposed::no ? m : n, ta == Transposed::no ? n : m);
    const ConstMap B(b, tb == Transposed::no ? n : p, tb == Transposed::no ? p : n);
    const auto write = [&](const auto& product) {
      if (into == Into::assign)
        C.noalias() = product;
      else
        C.noalias() += product;
    };
    if (ta == Transposed::no && tb == Transposed::no)
      write(A * B);
    else if (ta == Transposed::no)
      write(A * B.transpose());
    else if (tb == Transposed::no)
      write(A.transpose() * B);
    else
      write(A.transpose() * B.transpose());
  } else {
    const auto at = [&](Eigen::Index i, Eigen::Index k) -> const T& {
      return ta == Transposed::no ? a[i * n + k] : a[k * m + i];
    };
    const auto bt = [&](Eigen::Index k, Eigen::Index j) -> const T& {
      return tb == Transposed::no ? b[k * p + j] : b[j * n + k];
    };
    if (into == Into::assign) std::fill(c, c + m * p, T(0));
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index k = 0; k < n; ++k) {
        const T& aik = at(i, k);
        for (Eigen::Index j = 0; j < p; ++j)
          c[i * p + j] += aik * bt(k, j);
      }
  }
}

/// c = op(a) op(b) with the fastest kernel measured for T: product_into for float and double (BLAS's gemm when
/// the build uses it), plain loops otherwise. c must be shaped already and must not alias a or b.
template <Real T> void product(Matrix<T>& c, const Matrix<T>& a, Transposed ta, const Matrix<T>& b, Transposed tb) {
  assert(c.rows() == (ta == Transposed::no ? a.rows() : a.cols()));
  assert(c.cols() == (tb == Transposed::no ? b.cols() : b.rows()));
  assert((ta == Transposed::no ? a.cols() : a.rows()) == (tb == Transposed::no ? b.rows() : b.cols()));
  if constexpr (std::is_floating_point_v<T>) { // BLAS's gemm with beta = 0 when the build uses it, else Eigen's
    product_into(c.data(), Into::assign, a.data(), ta, b.data(), tb, c.rows(),
                 ta == Transposed::no ? a.cols() : a.rows(), c.cols());
  } else {
    if (ta == Transposed::no && tb == Transposed::no)
      matmul_loops(c, a, b);
    else { // the loops read rows of a and of b: transposed operands are copied first (O(n^2) beside O(n^3))
      Matrix<T> at, bt;
      if (ta == Transposed::yes) at = a.transpose();
      if (tb == Transposed::yes) bt = b.transpose();
      matmul_loops(c, ta == Transposed::yes ? at : a, tb == Transposed::yes ? bt : b);
    }
  }
}

/// Whether the build hands float and double products to BLAS (CMake defines EIGEN_USE_BLAS when it links OpenBLAS).
#ifdef EIGEN_USE_BLAS
inline constexpr bool products_use_blas = true;
#else
inline constexpr bool products_use_blas = false;
#endif

/// Whether product() with a work matrix makes c (rows x cols, `inner` the dimension summed over) as the
/// transpose of c^T = op(b)^T op(a)^T. Eigen hands a row-major product to BLAS as the column-major c^T, so
/// a result with few rows is a dgemm with a small n, which OpenBLAS (its Haswell kernels on this machine)
/// runs slower than the same product with m and n swapped: bench_matmul BM_WideProduct (a^T b, medians of 3,
/// one run, the tiled transposed copy included) 738 against 655 us at attention's d(loss)/d(K^T), 64 x 512
/// with inner 512; 3053 against 2545 at 64 x 1024 x 1024; 81.7 against 51.9 at 16 x 256 x 256. The copy costs
/// one pass over c, so the swap pays only for a long product: in a sweep of rows 8 to 128, columns 128 to
/// 2048 and inner 64 to 512 it won wherever rows <= 64, columns >= 2 rows and inner >= 128, and lost or tied
/// elsewhere (inner 64, rows 128, near-square results). Fewer than 8 rows was not measured, nor float: the
/// rule is for double through BLAS only, never for another type or Eigen's own GEMM.
template <Real T> constexpr bool transposed_is_faster(Eigen::Index rows, Eigen::Index cols, Eigen::Index inner) {
  return products_use_blas && std::is_same_v<T, double> && rows >= 8 && rows <= 64 && cols >= 2 * rows && inner >= 128;
}

/// c = op(a) op(b) as above, or, where transposed_is_faster says so, c^T made in `work` (resized as needed,
/// overwritten: it must hold nothing the caller needs) and transposed into c. UsageError if `work` is c, a
/// or b (resizing it would free an operand).
template <Real T>
void product(Matrix<T>& c, const Matrix<T>& a, Transposed ta, const Matrix<T>& b, Transposed tb, Matrix<T>& work) {
  if (&work == &c || &work == &a || &work == &b)
    throw UsageError("product: the work matrix is also the result or an operand");
  const Eigen::Index inner = ta == Transposed::no ? a.cols() : a.rows();
  if (!transposed_is_faster<T>(c.rows(), c.cols(), inner)) return product(c, a, ta, b, tb);
  constexpr auto flip = [](Transposed t) { return t == Transposed::no ? Transposed::yes : Transposed::no; };
  work.resize(c.cols(), c.rows());
  product(work, b, flip(tb), a, flip(ta));
  transpose_tiled(c, work);
}

template <Real T> void product(Matrix<T>& c, const Matrix<T>& a, const Matrix<T>& b) {
  product(c, a, Transposed::no, b, Transposed::no);
}
template <Real T> Matrix<T> product(const Matrix<T>& a, const Matrix<T>& b) {
  Matrix<T> c(a.rows(), b.cols());
  product(c, a, b);
  return c;
}

/// How matmul sees its operands (torch.matmul): the matrices multiplied (m x n times n x p) and the batch dims
/// they are repeated over. A rank-1 left operand (n) is 1 x n with that dim dropped from the result, a rank-1
/// right one (n) n x 1 likewise; the leading dims of each broadcast to the batch.
struct MatMulLayout {
  Shape a_batch, b_batch, batch, out;
  Eigen::Index m = 1, n = 1, p = 1;
  bool matrices = false; ///< both operands rank 2: the plain matrix product

  template <class A> static MatMulLayout of(const A& a, const A& b) {
    const Shape &sa = a.shape(), &sb = b.shape();
    if (sa.rank() == 0 || sb.rank() == 0)
      shape_mismatch("matmul", a, b, "both operands need rank >= 1 (a rank-0 value is a scale: use scale or mul)");
    MatMulLayout l;
    l.matrices = sa.rank() == 2 && sb.rank() == 2;
    l.m = sa.rank() == 1 ? 1 : sa[sa.rank() - 2];
    l.n = sa[sa.rank() - 1];
    const Eigen::Index nb = sb.rank() == 1 ? sb[0] : sb[sb.rank() - 2];
    l.p = sb.rank() == 1 ? 1 : sb[sb.rank() - 1];
    if (l.n != nb)
      shape_mismatch("matmul", a, b,
                     sa.rank() <= 2 && sb.rank() <= 2
                         ? "columns of the left must equal rows of the right"
                         : "the left's last dim must equal the right's second to last (its only one, for rank 1)");
    l.a_batch = sa.rank() > 2 ? sa.take_front(sa.rank() - 2) : Shape{};
    l.b_batch = sb.rank() > 2 ? sb.take_front(sb.rank() - 2) : Shape{};
    if (!broadcast_shapes(l.a_batch, l.b_batch, l.batch))
      shape_mismatch("matmul", a, b, "the batch dims (all but the last two) must broadcast");
    l.out = l.batch;
    if (sa.rank() > 1) l.out.push_back(l.m);
    if (sb.rank() > 1) l.out.push_back(l.p);
    return l;
  }
  /// f(c, a, b) with the offsets of each batch entry's slices of the result and of the operands.
  template <class F> void each(F&& f) const {
    BroadcastWalk<2>(batch, {a_batch, b_batch}).run([&](Eigen::Index o, Eigen::Index ia, Eigen::Index ib) {
      f(o * m * p, ia * m * n, ib * n * p);
    });
  }
};

/// matmul(a, b): the matrix product, torch.matmul on any ranks.   a: m x n, b: n x p, result: m x p
///   forward  result[i][j] = sum_k a[i][k] b[k][j]           (for each batch index, the batch dims broadcast)
///   VJP      da[i][k] += sum_j grad[i][j] b[k][j]     da += grad b^T
///            db[k][j] += sum_i a[i][k] grad[i][j]     db += a^T grad
///            (summed over the batch entries an operand was repeated over)
/// A rank-1 left operand is a row (1 x n), a rank-1 right one a column (n x 1), their dim dropped from the result:
/// two vectors give their dot product, rank 0.
struct MatMulOp {
  static constexpr OpInfo info{.name = "matmul",
                               .call = "matmul(a, b)",
                               .node = "MatMul",
                               .file = "matmul.hpp",
                               .arity = 2,
                               .formula = "result[i][j] = sum_k a[i][k] b[k][j], per batch index",
                               .shapes =
                                   "a: m x n, b: n x p -> m x p; batch dims broadcast; a rank-1 side's dim is dropped"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    return MatMulLayout::of(in[0], in[1]).out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
  /// The product of operands that are not both matrices: batches, vectors.
  template <Real T>
  static Var<T> apply_batched(std::span<const Var<T>> in, const Params<T>& p, std::string label, const MatMulLayout& l);
};

template <Real T> Var<T> MatMulOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const MatMulLayout l = MatMulLayout::of(in[0], in[1]);
  const Shape& s = l.out;
  tape.check_entries(s.rows(), s.cols(),
                     [&] { return "matmul(" + in[0].name() + ", " + in[1].name() + "): the result"; });
  if (!l.matrices) return apply_batched(in, p, std::move(label), l);
  Matrix<T> result = tape.buffer(s.rows(), s.cols());
  constexpr Transposed N = Transposed::no, Tr = Transposed::yes;
  product(result, in[0].value(), N, in[1].value(), N, tape.work());
  return tape.template record<MatMulOp>(
      in, s, std::move(result),
      [](Backprop<T>& bp) {
        const Matrix<T>& a = bp.input(0);
        const Matrix<T>& b = bp.input(1);
        const Matrix<T>& g = bp.grad();
        if constexpr (std::is_floating_point_v<T>) {
          // gemm writes into the adjoint (beta = 0 for the first contribution, 1 after), unless the transposed
          // product is faster
          if (transposed_is_faster<T>(a.rows(), a.cols(), g.cols()))
            bp.accumulate_with(0, [&](Matrix<T>& da) { product(da, g, N, b, Tr, bp.work()); });
          else
            bp.accumulate_in_place(0, [&](Matrix<T>& da, Into into) {
              product_into(da.data(), into, g.data(), N, b.data(), Tr, a.rows(), g.cols(), a.cols());
            });
          if (transposed_is_faster<T>(b.rows(), b.cols(), g.rows()))
            bp.accumulate_with(1, [&](Matrix<T>& db) { product(db, a, Tr, g, N, bp.work()); });
          else
            bp.accumulate_in_place(1, [&](Matrix<T>& db, Into into) {
              product_into(db.data(), into, a.data(), Tr, g.data(), N, b.rows(), g.rows(), b.cols());
            });
        } else { // written straight into the adjoint when it is the first contribution: no product temporary
          bp.accumulate_with(0, [&](Matrix<T>& da) { product(da, g, N, b, Tr); });
          bp.accumulate_with(1, [&](Matrix<T>& db) { product(db, a, Tr, g, N); });
        }
      },
      std::move(label));
}

template <Real T>
Var<T> MatMulOp::apply_batched(std::span<const Var<T>> in, const Params<T>&, std::string label, const MatMulLayout& l) {
  Tape<T>& tape = in[0].tape();
  constexpr Transposed N = Transposed::no, Tr = Transposed::yes;
  Matrix<T> result = tape.buffer(l.out);
  const T *a = in[0].value().data(), *b = in[1].value().data();
  l.each([&](Eigen::Index c, Eigen::Index ia, Eigen::Index ib) { // every slice of the result written once
    product_into(result.data() + c, Into::assign, a + ia, N, b + ib, N, l.m, l.n, l.p);
  });
  return tape.template record<MatMulOp>(
      in, l.out, std::move(result),
      [l](Backprop<T>& bp) {
        const T *a = bp.input(0).data(), *b = bp.input(1).data(), *g = bp.grad().data();
        // An operand repeated over batch entries (broadcast) has a slice that several products add into: the
        // first assigns when the contribution does, the others add.
        const auto slices = [](Into into, Eigen::Index count) {
          return std::vector<unsigned char>(into == Into::assign ? static_cast<std::size_t>(count) : 0, 0);
        };
        const auto slice_into = [](std::vector<unsigned char>& written, Into into, Eigen::Index slice) {
          if (into == Into::add || written[static_cast<std::size_t>(slice)]) return Into::add;
          written[static_cast<std::size_t>(slice)] = 1;
          return Into::assign;
        };
        assert(l.m > 0 && l.n > 0 && l.p > 0 && l.batch.numel() > 0); // values are never empty
        bp.accumulate_in_place(0, [&](Matrix<T>& da, Into into) {     // each batch entry's grad b^T
          auto written = slices(into, l.a_batch.numel());
          l.each([&](Eigen::Index c, Eigen::Index ia, Eigen::Index ib) {
            product_into(da.data() + ia, slice_into(written, into, ia / (l.m * l.n)), g + c, N, b + ib, Tr, l.m, l.p,
                         l.n);
          });
        });
        bp.accumulate_in_place(1, [&](Matrix<T>& db, Into into) { // each batch entry's a^T grad
          auto written = slices(into, l.b_batch.numel());
          l.each([&](Eigen::Index c, Eigen::Index ia, Eigen::Index ib) {
            product_into(db.data() + ib, slice_into(written, into, ib / (l.n * l.p)), a + ia, Tr, g + c, N, l.n, l.m,
                         l.p);
          });
        });
      },
      std::move(label));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, MatMulOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> matmul(const Var<T>& a, const Var<T>& b, std::string label = {}) {
  return MatMulOp::apply<T>(operands(a, b), {}, std::move(label));
}

} // namespace tapegrad

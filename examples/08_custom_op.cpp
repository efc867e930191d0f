// Check your own backward: an op defined outside tapegrad, once, generically, checked like a built-in one.
//
// The op is fused scaled dot-product attention, the kernel people most often write a backward for by hand:
//   O = softmax_rows(Q K^T / sqrt(d)) V,   Q: T x d, K: T x d, V: T x dv, O: T x dv
// with the backward every fused kernel implements (P the weights, G = dO):
//   dV = P^T G,   dP = G V^T,   dS = P o (dP - rowsum(dP o P)),   dQ = s dS K,   dK = s dS^T Q,   s = 1/sqrt(d)
// It is defined twice from one template: once right, and once with a slip seen in real kernels, the scale s
// left out of dK (dQ and dV stay right). The same definition runs on Tape<double> (the engine), on the
// 50-digit reference's Tape<mpfr_real> and on Tape<Dual<double>> (forward mode): nothing in it is double.
//
// The example records a small attention block around the op (X W_q, X W_k, X W_v, the fused op, a weighted
// sum), checks both versions with check_gradient (the tape against finite differences in 50 digits, dual
// numbers, and each node's VJP alone), prints both reports, and exits 0 only when the right op passes every
// check and the wrong one fails with the per-node check naming the fused node and nothing else.
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/tapegrad.hpp>

#include <cstddef>
#include <iostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

using namespace tapegrad;

/// The two versions of the op: the right backward, and one whose dK misses the scale.
enum class Backward { right, scale_missing_in_dK };

/// An op is a struct with a descriptor `info`, `shape` (the result's shape, or a ShapeError naming the
/// operands) and `apply` (the forward, recording the node with its VJP). `apply` is what the per-node check
/// replays the node with, on any tape.
template <Backward B> struct FusedAttentionOp {
  static constexpr OpInfo info{.name = B == Backward::right ? "fused_attention" : "fused_attention_slip",
                               .call = "fused_attention(Q, K, V)",
                               .node = B == Backward::right ? "FusedAttention" : "FusedAttentionSlip",
                               .file = "examples/08_custom_op.cpp",
                               .arity = 3,
                               .formula = "result = softmax_rows(Q K^T / sqrt(d)) V",
                               .shapes = "Q: T x d, K: T x d, V: T x dv -> T x dv",
                               .dual = "exp, sqrt"};

  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>&) {
    const A &Q = in[0], &K = in[1], &V = in[2];
    if (Q.cols() != K.cols() || K.rows() != V.rows() || Q.cols() == 0 || K.rows() == 0)
      throw ShapeError(std::string(info.name) + "(" + Q.name() + ", " + K.name() + ", " + V.name() + "): " + Q.name() +
                       " is " + shape_string(Q.rows(), Q.cols()) + ", " + K.name() + " is " +
                       shape_string(K.rows(), K.cols()) + " and " + V.name() + " is " +
                       shape_string(V.rows(), V.cols()) +
                       "; Q and K need the same number d > 0 of columns, K and V the same number > 0 of rows");
    return {Q.rows(), V.cols()};
  }

  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    using std::exp;
    using std::sqrt;
    Tape<T>& tape = common_tape(info, in);
    shape(in, p);
    const Matrix<T>&Q = in[0].value(), &K = in[1].value(), &V = in[2].value();
    const T s = T(1) / sqrt(T(static_cast<long>(Q.cols())));
    // P = softmax_rows(s Q K^T), each row's max taken out before exp.
    Matrix<T> P = (Q * K.transpose()) * s;
    for (Eigen::Index i = 0; i < P.rows(); ++i) {
      const T mx = P.row(i).maxCoeff();
      for (Eigen::Index j = 0; j < P.cols(); ++j)
        P(i, j) = exp(P(i, j) - mx);
      P.row(i) /= P.row(i).sum();
    }
    Matrix<T> O = P * V;
    return tape.template record<FusedAttentionOp>(
        in, std::move(O),
        [P = std::move(P), s](Backprop<T>& bp) {
          const Matrix<T>& G = bp.grad();
          const Matrix<T>&q = bp.input(0), &k = bp.input(1), &v = bp.input(2);
          const Matrix<T> dP = G * v.transpose();
          Matrix<T> dS(P.rows(), P.cols());
          for (Eigen::Index i = 0; i < P.rows(); ++i) {
            const T D = P.row(i).dot(dP.row(i));
            for (Eigen::Index j = 0; j < P.cols(); ++j)
              dS(i, j) = P(i, j) * (dP(i, j) - D);
          }
          bp.accumulate(0, (dS * k) * s);
          if constexpr (B == Backward::right)
            bp.accumulate(1, (dS.transpose() * q) * s);
          else
            bp.accumulate(1, dS.transpose() * q); // the slip: s left out
          bp.accumulate(2, P.transpose() * G);
        },
        std::move(label), p);
  }
};

template <Backward B, Real T>
Var<T> fused_attention(const Var<T>& Q, const Var<T>& K, const Var<T>& V, std::string label = {}) {
  return FusedAttentionOp<B>::template apply<T>(operands(Q, K, V), {}, std::move(label));
}

/// The graph, generic in its scalar: Q, K, V projected from X, the fused op, and a weighted sum of its
/// result (C fixed, so the op's upstream gradient is not all ones).
template <Backward B> auto attention_block() {
  return [](auto&, const auto& in) {
    const auto &X = in[0], &Wq = in[1], &Wk = in[2], &Wv = in[3], &C = in[4];
    const auto O = fused_attention<B>(matmul(X, Wq, "Q"), matmul(X, Wk, "K"), matmul(X, Wv, "V"),
                                      B == Backward::right ? "attention" : "attention (slip)");
    return sum(hadamard(O, C), "loss");
  };
}

/// A matrix of entries ((k + offset) mod 11) / 7 - 0.7 + ((k + offset) mod 3) / 5, k the row-major index: small,
/// of both signs, no two neighbours equal.
Matrix<double> entries(Eigen::Index rows, Eigen::Index cols, int offset) {
  Matrix<double> m(rows, cols);
  for (Eigen::Index k = 0; k < m.size(); ++k)
    m.data()[k] = double((k + offset) % 11) / 7.0 - 0.7 + double((k + offset) % 3) / 5.0;
  return m;
}

/// Each failing check in full, and a count: what a user's own program might print (CheckResult is data).
void print(const CheckReport& report) {
  std::size_t failed = 0;
  for (const CheckResult& c : report.checks) {
    failed += !c.passed;
    if (!c.passed)
      std::cout << "  FAIL  " << c.name << "  " << c.input << ": rel " << c.max_rel_error << " > " << c.threshold
                << " at (" << c.worst_row << ", " << c.worst_col << "): reference " << c.numeric << ", tape "
                << c.analytic << "\n";
  }
  const CheckResult* worst = worst_check(report);
  std::cout << "  " << report.checks.size() << " checks, " << failed << " failed; worst: " << worst->name << " "
            << worst->input << ", rel " << worst->max_rel_error << (worst->passed ? " <= " : " > ") << worst->threshold
            << "\n";
}

int main() {
  const std::vector<Matrix<double>> inputs = {entries(4, 3, 0), entries(3, 4, 1), entries(3, 4, 2), entries(3, 2, 3),
                                              entries(4, 2, 4)};
  const std::vector<std::string> names = {"X", "Wq", "Wk", "Wv", "C"};
  CheckOptions opt;
  opt.reference_digits = 50;
  opt.wrt = {0, 1, 2, 3}; // C is data

  CheckReport right, slip;
  right.append(check_gradient<double, mpfr_real>(attention_block<Backward::right>(), inputs, names, opt),
               "fused attention, right backward");
  slip.append(check_gradient<double, mpfr_real>(attention_block<Backward::scale_missing_in_dK>(), inputs, names, opt),
              "fused attention, dK without the scale");
  std::cout << "The right backward:\n";
  print(right);
  std::cout << "\nThe backward with the slip:\n";
  print(slip);

  // The slip must fail, and the per-node check must blame the fused node and no other.
  bool blamed_fused = false, blamed_other = false;
  for (const CheckResult& c : slip.checks)
    if (c.kind == CheckKind::node_vjp && !c.passed) {
      const bool fused = c.node_name.find("attention (slip)") != std::string::npos;
      blamed_fused = blamed_fused || fused;
      blamed_other = blamed_other || !fused;
    }
  std::cout << "\nright backward: " << (right.passed() ? "every check passes" : "FAILS")
            << "\nslip: " << (slip.passed() ? "PASSES (it should not)" : "fails") << "; the per-node check blames "
            << (blamed_fused ? "the fused node" : "NOT the fused node") << (blamed_other ? " and OTHERS" : " alone")
            << "\n";
  return right.passed() && !slip.passed() && blamed_fused && !blamed_other ? 0 : 1;
}

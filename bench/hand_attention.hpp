#pragma once
// Single-head attention forward and backward written by hand, no tape: the yardstick the tape is measured
// against (what a careful person would write for one fixed graph). It uses the same kernels as the tape's ops
// (tapegrad::product, straight to OpenBLAS when the build uses it, and softmax_rows_value, the softmax op's
// forward with libmvec's vector exp), so the ratio of the two is the tape's own overhead, not a difference of kernels.
// Bench only.
#include <tapegrad/ops/matmul.hpp>
#include <tapegrad/ops/softmax_rows.hpp>

namespace tapegrad::bench {

/// What HandAttention::run does: everything, or only its 15 products (the elementwise work skipped, its
/// results left from an earlier full run): the fastest the products of attention can go at these shapes.
enum class Work { all, products_only };

struct HandAttention {
  Matrix<double> Q, K, V, S, A, O, dA, dS, dQ, dK, dV, dX, dWq, dWk, dWv;
  double J = 0;

  void run(const Matrix<double>& X, const Matrix<double>& Wq, const Matrix<double>& Wk, const Matrix<double>& Wv,
           const Matrix<double>& G, Work work = Work::all) {
    const bool all = work == Work::all;
    constexpr Transposed N = Transposed::no, Tr = Transposed::yes;
    const double c = 1 / std::sqrt(static_cast<double>(Wq.cols()));
    const Eigen::Index T = X.rows();
    Q.resize(T, Wq.cols());
    K.resize(T, Wk.cols());
    V.resize(T, Wv.cols());
    S.resize(T, T);
    O.resize(T, Wv.cols());
    product(Q, X, N, Wq, N);
    product(K, X, N, Wk, N);
    product(V, X, N, Wv, N);
    product(S, Q, N, K, Tr);
    if (all) S *= c;
    A.resize(S.rows(), S.cols());
    if (all) softmax_rows_value(A, S); // the tape's softmax kernel
    product(O, A, N, V, N);
    if (all) J = O.cwiseProduct(G).sum();
    // backward: dO = G
    dA.resize(T, T);
    dV.resize(T, Wv.cols());
    dQ.resize(T, Wq.cols());
    dK.resize(T, Wk.cols());
    dWq.resize(Wq.rows(), Wq.cols());
    dWk.resize(Wk.rows(), Wk.cols());
    dWv.resize(Wv.rows(), Wv.cols());
    dX.resize(T, X.cols());
    product(dA, G, N, V, Tr);
    product(dV, A, Tr, G, N);
    dS.resize(T, T);
    for (Eigen::Index i = 0; i < T && all; ++i) {
      const double dot = A.row(i).dot(dA.row(i));
      dS.row(i).array() = c * A.row(i).array() * (dA.row(i).array() - dot); // 1/sqrt(d) folded in here
    }
    product(dQ, dS, N, K, N);
    product(dK, dS, Tr, Q, N);
    product(dWq, X, Tr, dQ, N);
    product(dWk, X, Tr, dK, N);
    product(dWv, X, Tr, dV, N);
    product(dX, dQ, N, Wq, Tr);
    dX.noalias() += dK * Wk.transpose();
    dX.noalias() += dV * Wv.transpose();
  }
};

} // namespace tapegrad::bench

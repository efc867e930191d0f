#pragma once
// Single-head attention forward and backward written by hand with Eigen products, no tape: the yardstick the
// tape is measured against (what a careful person would write for one fixed graph). Bench only.
#include <tapegrad/autodiff/real.hpp>

namespace tapegrad::bench {

struct HandAttention {
  Matrix<double> Q, K, V, S, A, O, dA, dS, dQ, dK, dV, dX, dWq, dWk, dWv;
  double J = 0;

  void run(const Matrix<double>& X, const Matrix<double>& Wq, const Matrix<double>& Wk, const Matrix<double>& Wv,
           const Matrix<double>& G) {
    const double c = 1 / std::sqrt(static_cast<double>(Wq.cols()));
    Q.noalias() = X * Wq;
    K.noalias() = X * Wk;
    V.noalias() = X * Wv;
    S.noalias() = (Q * K.transpose()) * c;
    A.resize(S.rows(), S.cols());
    for (Eigen::Index i = 0; i < S.rows(); ++i) {
      const double mx = S.row(i).maxCoeff();
      A.row(i) = (S.row(i).array() - mx).exp();
      A.row(i) /= A.row(i).sum();
    }
    O.noalias() = A * V;
    J = O.cwiseProduct(G).sum();
    // backward: dO = G
    dA.noalias() = G * V.transpose();
    dV.noalias() = A.transpose() * G;
    dS = A.cwiseProduct(dA - (A.cwiseProduct(dA).rowwise().sum()).replicate(1, A.cols()));
    dQ.noalias() = (dS * K) * c;
    dK.noalias() = (dS.transpose() * Q) * c;
    dWq.noalias() = X.transpose() * dQ;
    dWk.noalias() = X.transpose() * dK;
    dWv.noalias() = X.transpose() * dV;
    dX.noalias() = dQ * Wq.transpose();
    dX.noalias() += dK * Wk.transpose();
    dX.noalias() += dV * Wv.transpose();
  }
};

} // namespace tapegrad::bench

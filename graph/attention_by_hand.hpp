#pragma once
// Single-head attention, forward and backward, written by hand in explicit index loops: no Eigen products,
// no ops/, no tape. It follows REFERENCE.md line by line; every adjoint sits under a comment holding the
// forward statement it reverses. It is the independent second opinion the tape is checked against.

#include "../autodiff/real.hpp"

#include <vector>

namespace tapegrad {

template <Real T> struct AttentionByHand {
  // forward
  Matrix<T> Q, K, V, S, A, O;
  T J{0};
  // backward: d J / d(each)
  Matrix<T> dO, dA, dS, dQ, dK, dV, dX, dWq, dWk, dWv;
};

/// From Q, K, V (each perturbed alone by a local check) and the probe's G.
template <Real T> AttentionByHand<T> attention_local_by_hand(const Matrix<T>& Q, const Matrix<T>& K, const Matrix<T>& V,
                                                             const Matrix<T>& G) {
  using std::exp;
  using std::sqrt;
  const Eigen::Index n = Q.rows(), d = Q.cols(), r = V.cols(); // n positions ("T" in the chapter)
  const T inv_sqrt_d = T(1) / sqrt(T(static_cast<long>(d)));
  AttentionByHand<T> h;
  h.Q = Q;
  h.K = K;
  h.V = V;

  // ---- forward ----
  // S[i][j] = sum_a Q[i][a] K[j][a] / sqrt(d)
  h.S = Matrix<T>::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) {
      T s(0);
      for (Eigen::Index a = 0; a < d; ++a)
        s += Q(i, a) * K(j, a);
      h.S(i, j) = s * inv_sqrt_d;
    }
  // A[i][j] = exp(S[i][j] - max_k S[i][k]) / sum_k exp(S[i][k] - max_k S[i][k])
  h.A = Matrix<T>::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    T mx = h.S(i, 0);
    for (Eigen::Index k = 1; k < n; ++k)
      if (h.S(i, k) > mx) mx = h.S(i, k);
    T z(0);
    for (Eigen::Index k = 0; k < n; ++k)
      z += exp(h.S(i, k) - mx);
    for (Eigen::Index j = 0; j < n; ++j)
      h.A(i, j) = exp(h.S(i, j) - mx) / z;
  }
  // O[i][l] = sum_j A[i][j] V[j][l]
  h.O = Matrix<T>::Zero(n, r);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index l = 0; l < r; ++l)
      for (Eigen::Index j = 0; j < n; ++j)
        h.O(i, l) += h.A(i, j) * V(j, l);
  // J = sum_{i,l} O[i][l] G[i][l]
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index l = 0; l < r; ++l)
      h.J += h.O(i, l) * G(i, l);

  // ---- backward ----
  // forward was: J = sum_{i,l} O[i][l] G[i][l]; so dO[i][l] = G[i][l]
  h.dO = G;
  // forward was: O[i][l] = sum_j A[i][j] V[j][l]; so dA[i][j] = sum_l dO[i][l] V[j][l]  (dA = G V^T)
  //                                             and dV[j][l] = sum_i A[i][j] dO[i][l]  (dV = A^T G)
  h.dA = Matrix<T>::Zero(n, n);
  h.dV = Matrix<T>::Zero(n, r);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index l = 0; l < r; ++l) {
        h.dA(i, j) += h.dO(i, l) * V(j, l);
        h.dV(j, l) += h.A(i, j) * h.dO(i, l);
      }
  // forward was: A[i][j] = exp(S[i][j]) / sum_k exp(S[i][k]); Jacobian A[i][j] (delta_jk - A[i][k]), so
  //   dS[i][j] = A[i][j] (dA[i][j] - sum_k A[i][k] dA[i][k])          (each row of dS sums to 0)
  h.dS = Matrix<T>::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    T dot(0);
    for (Eigen::Index k = 0; k < n; ++k)
      dot += h.A(i, k) * h.dA(i, k);
    for (Eigen::Index j = 0; j < n; ++j)
      h.dS(i, j) = h.A(i, j) * (h.dA(i, j) - dot);
  }
  // forward was: S[i][j] = sum_a Q[i][a] K[j][a] / sqrt(d); so
  //   dQ[i][a] = sum_j dS[i][j] K[j][a] / sqrt(d)     (dQ = dS K / sqrt(d))
  //   dK[j][a] = sum_i dS[i][j] Q[i][a] / sqrt(d)     (dK = dS^T Q / sqrt(d): the transpose)
  h.dQ = Matrix<T>::Zero(n, d);
  h.dK = Matrix<T>::Zero(n, d);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index a = 0; a < d; ++a) {
        h.dQ(i, a) += h.dS(i, j) * K(j, a) * inv_sqrt_d;
        h.dK(j, a) += h.dS(i, j) * Q(i, a) * inv_sqrt_d;
      }
  return h;
}

/// From X and the projections: Q = X Wq, K = X Wk, V = X Wv, then the local attention above.
template <Real T> AttentionByHand<T> attention_by_hand(const Matrix<T>& X, const Matrix<T>& Wq, const Matrix<T>& Wk,
                                                       const Matrix<T>& Wv, const Matrix<T>& G) {
  const Eigen::Index n = X.rows(), D = X.cols();
  // forward: P[i][c] = sum_b X[i][b] W[b][c] for each projection
  const auto project = [&](const Matrix<T>& W) {
    Matrix<T> P = Matrix<T>::Zero(n, W.cols());
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index c = 0; c < W.cols(); ++c)
        for (Eigen::Index b = 0; b < D; ++b)
          P(i, c) += X(i, b) * W(b, c);
    return P;
  };
  AttentionByHand<T> h = attention_local_by_hand(project(Wq), project(Wk), project(Wv), G);

  // backward of P = X W, for each of the three projections:
  //   dW[b][c] += sum_i X[i][b] dP[i][c]    (dW = X^T dP)
  //   dX[i][b] += sum_c dP[i][c] W[b][c]    (dX = dP W^T; X feeds Q, K and V: the three ADD)
  h.dX = Matrix<T>::Zero(n, D);
  const auto reverse_projection = [&](const Matrix<T>& W, const Matrix<T>& dP, Matrix<T>& dW) {
    dW = Matrix<T>::Zero(W.rows(), W.cols());
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index b = 0; b < D; ++b)
        for (Eigen::Index c = 0; c < W.cols(); ++c) {
          dW(b, c) += X(i, b) * dP(i, c);
          h.dX(i, b) += dP(i, c) * W(b, c);
        }
  };
  reverse_projection(Wq, h.dQ, h.dWq);
  reverse_projection(Wk, h.dK, h.dWk);
  reverse_projection(Wv, h.dV, h.dWv);
  return h;
}

} // namespace tapegrad

#pragma once
// Attention, forward and backward, written by hand in explicit index loops: no Eigen products, no ops/, no
// tape. It follows REFERENCE.md line by line and extends it to heads, masks, the key/value cache offset,
// dropout, positions and an output projection; every adjoint sits under a comment holding the forward
// statement it reverses. It is the independent second opinion the tape is checked against.
//
// Shapes: m queries, n keys (m <= n when earlier positions are cached), H heads.
//   Q: m x d, K: n x d, V: n x r; head h uses columns [h d/H, (h+1) d/H) of Q and K, [h r/H, (h+1) r/H) of V.
//   Wo: r x Do (optional; without it O = C), G: m x Do (or m x r).

#include "../models/attention_config.hpp"

#include <vector>

namespace tapegrad {

template <Real T> struct AttentionByHand {
  // forward
  Matrix<T> Xp, Q, K, V;           // Xp = X + P[0:n] (X when there is no position table)
  std::vector<Matrix<T>> S, A, Ad; // per head: scores / sqrt(d/H), weights (0 where masked), after dropout
  Matrix<T> C, O;                  // C: the heads side by side (m x r); O = C Wo (O = C without Wo)
  T J{0};
  // backward: d J / d(each)
  std::vector<Matrix<T>> dAd, dA, dS;
  Matrix<T> dO, dC, dWo, dQ, dK, dV, dX, dP, dWq, dWk, dWv;
};

/// From Q, K, V (each perturbed alone by a local check), the output projection Wo (may be empty) and the
/// probe's G.
template <Real T> AttentionByHand<T> attention_local_by_hand(const Matrix<T>& Q, const Matrix<T>& K, const Matrix<T>& V,
                                                             const Matrix<T>& Wo, const Matrix<T>& G,
                                                             const AttentionConfig& config) {
  using std::exp;
  using std::sqrt;
  const Eigen::Index m = Q.rows(), n = K.rows(), d = Q.cols(), r = V.cols();
  config.validate(m, n, d, r);
  const int H = config.heads;
  const Eigen::Index dh = d / H, rh = r / H;
  const T inv_sqrt_dh = T(1) / sqrt(T(static_cast<long>(dh)));
  const std::vector<DropoutMask> drop = config.dropout_masks(m, n);
  // the dropout factor of entry (i, j) of head h: 1/(1-p) where kept, 0 where dropped, 1 without dropout
  const auto dropped = [&](int h, Eigen::Index i, Eigen::Index j) -> T {
    if (drop.empty()) return T(1);
    return drop[h].keep(i, j) ? T(1) / (T(1) - T(drop[h].p)) : T(0);
  };
  const bool project = Wo.size() > 0;
  const Eigen::Index Do = project ? Wo.cols() : r;
  AttentionByHand<T> h;
  h.Q = Q;
  h.K = K;
  h.V = V;

  // ---- forward ----
  h.C = Matrix<T>::Zero(m, r);
  for (int hd = 0; hd < H; ++hd) {
    const Eigen::Index q0 = hd * dh, v0 = hd * rh;
    // S[i][j] = sum_{a in head} Q[i][a] K[j][a] / sqrt(d/H)
    Matrix<T> S = Matrix<T>::Zero(m, n);
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index j = 0; j < n; ++j) {
        T s(0);
        for (Eigen::Index a = q0; a < q0 + dh; ++a)
          s += Q(i, a) * K(j, a);
        S(i, j) = s * inv_sqrt_dh;
      }
    // A[i][j] = exp(S[i][j] - mx_i) / sum_{k seen} exp(S[i][k] - mx_i) where query i sees key j, 0 elsewhere;
    // mx_i = max over seen keys; a query that sees no key has A[i][.] = 0
    Matrix<T> A = Matrix<T>::Zero(m, n);
    for (Eigen::Index i = 0; i < m; ++i) {
      bool any = false;
      T mx(0);
      for (Eigen::Index k = 0; k < n; ++k)
        if (config.sees(i, k) && (!any || S(i, k) > mx)) {
          mx = S(i, k);
          any = true;
        }
      if (!any) continue;
      T z(0);
      for (Eigen::Index k = 0; k < n; ++k)
        if (config.sees(i, k)) z += exp(S(i, k) - mx);
      for (Eigen::Index j = 0; j < n; ++j)
        if (config.sees(i, j)) A(i, j) = exp(S(i, j) - mx) / z;
    }
    // Ad[i][j] = A[i][j] * dropout factor
    Matrix<T> Ad(m, n);
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index j = 0; j < n; ++j)
        Ad(i, j) = A(i, j) * dropped(hd, i, j);
    // C[i][l] = sum_j Ad[i][j] V[j][l] for the head's columns l
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index l = v0; l < v0 + rh; ++l)
        for (Eigen::Index j = 0; j < n; ++j)
          h.C(i, l) += Ad(i, j) * V(j, l);
    h.S.push_back(std::move(S));
    h.A.push_back(std::move(A));
    h.Ad.push_back(std::move(Ad));
  }
  // O[i][c] = sum_l C[i][l] Wo[l][c]   (O = C without Wo)
  h.O = Matrix<T>::Zero(m, Do);
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index c = 0; c < Do; ++c) {
      if (!project) {
        h.O(i, c) = h.C(i, c);
        continue;
      }
      for (Eigen::Index l = 0; l < r; ++l)
        h.O(i, c) += h.C(i, l) * Wo(l, c);
    }
  // J = sum_{i,c} O[i][c] G[i][c]
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index c = 0; c < Do; ++c)
      h.J += h.O(i, c) * G(i, c);

  // ---- backward ----
  // forward was: J = sum_{i,c} O[i][c] G[i][c]; so dO[i][c] = G[i][c]
  h.dO = G;
  // forward was: O[i][c] = sum_l C[i][l] Wo[l][c]; so dC[i][l] = sum_c dO[i][c] Wo[l][c]   (dC = dO Wo^T)
  //                                               and dWo[l][c] = sum_i C[i][l] dO[i][c]  (dWo = C^T dO)
  h.dC = Matrix<T>::Zero(m, r);
  if (project) {
    h.dWo = Matrix<T>::Zero(r, Do);
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index l = 0; l < r; ++l)
        for (Eigen::Index c = 0; c < Do; ++c) {
          h.dC(i, l) += h.dO(i, c) * Wo(l, c);
          h.dWo(l, c) += h.C(i, l) * h.dO(i, c);
        }
  } else {
    h.dC = h.dO;
  }
  h.dQ = Matrix<T>::Zero(m, d);
  h.dK = Matrix<T>::Zero(n, d);
  h.dV = Matrix<T>::Zero(n, r);
  for (int hd = 0; hd < H; ++hd) {
    const Eigen::Index q0 = hd * dh, v0 = hd * rh;
    const Matrix<T>&A = h.A[hd], &Ad = h.Ad[hd];
    // forward was: C[i][l] = sum_j Ad[i][j] V[j][l]; so dAd[i][j] = sum_l dC[i][l] V[j][l]
    //                                                and dV[j][l] += sum_i Ad[i][j] dC[i][l]
    Matrix<T> dAd = Matrix<T>::Zero(m, n);
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index l = v0; l < v0 + rh; ++l) {
          dAd(i, j) += h.dC(i, l) * V(j, l);
          h.dV(j, l) += Ad(i, j) * h.dC(i, l);
        }
    // forward was: Ad[i][j] = A[i][j] * dropout factor; so dA[i][j] = dAd[i][j] * the same factor
    Matrix<T> dA(m, n);
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index j = 0; j < n; ++j)
        dA(i, j) = dAd(i, j) * dropped(hd, i, j);
    // forward was: A[i][j] = exp(S[i][j]) / sum_k exp(S[i][k]) over seen keys; Jacobian A_ij (delta_jk - A_ik)
    //   dS[i][j] = A[i][j] (dA[i][j] - sum_k A[i][k] dA[i][k])   (0 where masked: A is 0 there)
    Matrix<T> dS(m, n);
    for (Eigen::Index i = 0; i < m; ++i) {
      T dot(0);
      for (Eigen::Index k = 0; k < n; ++k)
        dot += A(i, k) * dA(i, k);
      for (Eigen::Index j = 0; j < n; ++j)
        dS(i, j) = A(i, j) * (dA(i, j) - dot);
    }
    // forward was: S[i][j] = sum_{a in head} Q[i][a] K[j][a] / sqrt(d/H); so
    //   dQ[i][a] += sum_j dS[i][j] K[j][a] / sqrt(d/H)     (dQ = dS K / sqrt(d/H))
    //   dK[j][a] += sum_i dS[i][j] Q[i][a] / sqrt(d/H)     (dK = dS^T Q / sqrt(d/H): the transpose)
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index a = q0; a < q0 + dh; ++a) {
          h.dQ(i, a) += dS(i, j) * K(j, a) * inv_sqrt_dh;
          h.dK(j, a) += dS(i, j) * Q(i, a) * inv_sqrt_dh;
        }
    h.dAd.push_back(std::move(dAd));
    h.dA.push_back(std::move(dA));
    h.dS.push_back(std::move(dS));
  }
  return h;
}

/// The chapter's single head, no mask, no Wo.
template <Real T> AttentionByHand<T> attention_local_by_hand(const Matrix<T>& Q, const Matrix<T>& K, const Matrix<T>& V,
                                                             const Matrix<T>& G) {
  return attention_local_by_hand(Q, K, V, Matrix<T>(), G, AttentionConfig{});
}

/// From X, the position table P (may be empty; else at least n rows), the projections and Wo (may be empty):
///   Xp = X + P[0:n],  queries = the last m = n - offset rows of Xp,  Q = Xq Wq,  K = Xp Wk,  V = Xp Wv,
/// then the local attention above.
template <Real T> AttentionByHand<T> attention_by_hand(const Matrix<T>& X, const Matrix<T>& P, const Matrix<T>& Wq,
                                                       const Matrix<T>& Wk, const Matrix<T>& Wv, const Matrix<T>& Wo,
                                                       const Matrix<T>& G, const AttentionConfig& config) {
  const Eigen::Index n = X.rows(), D = X.cols();
  const Eigen::Index first = config.offset; // the first query row
  if (first < 0 || first >= n)
    throw ShapeError("attention_by_hand: offset " + std::to_string(first) + " with X " + shape_string(n, D) +
                     "; the cached positions must leave at least one query row (0 <= offset < rows of X)");
  // forward: Xp[i][b] = X[i][b] + P[i][b]
  Matrix<T> Xp = X;
  if (P.size() > 0)
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index b = 0; b < D; ++b)
        Xp(i, b) += P(i, b);
  // forward: Y[i][c] = sum_b Xp[first0 + i][b] W[b][c] over rows i of the projection's input
  const auto project = [&](const Matrix<T>& W, Eigen::Index first0) {
    Matrix<T> Y = Matrix<T>::Zero(n - first0, W.cols());
    for (Eigen::Index i = 0; i < n - first0; ++i)
      for (Eigen::Index c = 0; c < W.cols(); ++c)
        for (Eigen::Index b = 0; b < D; ++b)
          Y(i, c) += Xp(first0 + i, b) * W(b, c);
    return Y;
  };
  AttentionByHand<T> h = attention_local_by_hand(project(Wq, first), project(Wk, 0), project(Wv, 0), Wo, G, config);
  h.Xp = Xp;

  // backward of Y = Xp[first0:] W, for each of the three projections:
  //   dW[b][c] += sum_i Xp[first0 + i][b] dY[i][c]    (dW = Xq^T dY)
  //   dXp[first0 + i][b] += sum_c dY[i][c] W[b][c]    (Xp feeds Q, K and V: the three ADD)
  Matrix<T> dXp = Matrix<T>::Zero(n, D);
  const auto reverse_projection = [&](const Matrix<T>& W, Eigen::Index first0, const Matrix<T>& dY, Matrix<T>& dW) {
    dW = Matrix<T>::Zero(W.rows(), W.cols());
    for (Eigen::Index i = 0; i < n - first0; ++i)
      for (Eigen::Index b = 0; b < D; ++b)
        for (Eigen::Index c = 0; c < W.cols(); ++c) {
          dW(b, c) += Xp(first0 + i, b) * dY(i, c);
          dXp(first0 + i, b) += dY(i, c) * W(b, c);
        }
  };
  reverse_projection(Wq, first, h.dQ, h.dWq);
  reverse_projection(Wk, 0, h.dK, h.dWk);
  reverse_projection(Wv, 0, h.dV, h.dWv);
  // forward was: Xp = X + P[0:n]; so dX = dXp, and dP = dXp in rows 0..n-1, 0 in the rows beyond
  h.dX = dXp;
  if (P.size() > 0) {
    h.dP = Matrix<T>::Zero(P.rows(), P.cols());
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index b = 0; b < D; ++b)
        h.dP(i, b) = dXp(i, b);
  }
  return h;
}

/// The chapter's attention from X: single head, no mask, no positions, no Wo.
template <Real T> AttentionByHand<T> attention_by_hand(const Matrix<T>& X, const Matrix<T>& Wq, const Matrix<T>& Wk,
                                                       const Matrix<T>& Wv, const Matrix<T>& G) {
  return attention_by_hand(X, Matrix<T>(), Wq, Wk, Wv, Matrix<T>(), G, AttentionConfig{});
}

} // namespace tapegrad

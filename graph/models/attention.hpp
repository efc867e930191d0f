#pragma once
// Attention composed from ops, with every node labelled as in the chapter.
//
// The chapter's single head:
//   Q = X Wq,  K = X Wk,  V = X Wv                 X: T x D, Wq, Wk: D x d, Wv: D x r
//   S = Q K^T / sqrt(d)                            (1/sqrt(d) made in T)
//   A = softmax_rows(S)                            each row normalised: one query at a time
//   O = A V
//   J = sum(O hadamard G)                          the probe objective, G: T x r fixed
//
// The next chapters' attention (AttentionConfig): positions, a key/value cache, H heads, masks, dropout and
// an output projection:
//   Xp = X + P[0:n]                                X: n x D, P: (>= n) x D, a learnable position table
//   Xq = Xp[offset:n]                              the m = n - offset queries after `offset` cached positions
//   Q = Xq Wq,  K = Xp Wk,  V = Xp Wv
//   per head h (columns split in H equal parts):
//     S_h = Q_h K_h^T / sqrt(d/H),  M_h = masks(S_h),  A_h = softmax_rows(M_h),  Ad_h = dropout(A_h),
//     O_h = Ad_h V_h
//   C = [O_1 ... O_H],  O = C Wo                   Wo: r x Do

#include "../../ops/ops.hpp"
#include "attention_config.hpp"

#include <string>
#include <type_traits>
#include <vector>

namespace tapegrad {

/// The named nodes of one attention head (M is S after the masks, Ad is A after dropout; each the same
/// node as the one before when there is no mask or no dropout).
template <Real T> struct HeadNodes { Var<T> Q, K, V, Kt, S0, S, M, A, Ad, O; };

/// One head from its Q, K, V on a tape; `suffix` ends every label ("" or "_h1").
template <Real T> HeadNodes<T> attention_head(const Var<T>& Q, const Var<T>& K, const Var<T>& V,
                                              const AttentionConfig& config, const DropoutMask* drop,
                                              const std::string& suffix) {
  using std::sqrt;
  HeadNodes<T> n{Q, K, V, {}, {}, {}, {}, {}, {}, {}};
  n.Kt = transpose(K, "Kt" + suffix);
  n.S0 = matmul(Q, n.Kt, "S0" + suffix);
  const T d(static_cast<long>(Q.cols()));
  n.S = scale(n.S0, T(1) / sqrt(d), "S" + suffix);
  n.M = n.S;
  if (config.causal) n.M = causal_mask(n.M, config.offset, (config.key_padding.empty() ? "M" : "Mc") + suffix);
  if (!config.key_padding.empty()) n.M = padding_mask(n.M, config.key_padding, "M" + suffix);
  n.A = softmax_rows(n.M, "A" + suffix, config.masked_rows);
  n.Ad = drop ? dropout(n.A, *drop, "Ad" + suffix) : n.A;
  n.O = matmul(n.Ad, V, "O" + suffix);
  return n;
}

/// The named nodes of the chapter's single-head attention.
template <Real T> struct AttentionNodes { Var<T> X, Wq, Wk, Wv, Q, K, V, Kt, S0, S, A, O; };

/// Records the chapter's attention from Q, K, V already on a tape (the local graph: S, A, O only).
template <Real T> AttentionNodes<T> attend(const Var<T>& Q, const Var<T>& K, const Var<T>& V) {
  const HeadNodes<T> h = attention_head(Q, K, V, AttentionConfig{}, nullptr, "");
  return {{}, {}, {}, {}, Q, K, V, h.Kt, h.S0, h.S, h.A, h.O};
}

/// Records the chapter's attention from X, Wq, Wk, Wv already on a tape.
template <Real T> AttentionNodes<T> attention(const Var<T>& X, const Var<T>& Wq, const Var<T>& Wk, const Var<T>& Wv) {
  AttentionNodes<T> n = attend(matmul(X, Wq, "Q"), matmul(X, Wk, "K"), matmul(X, Wv, "V"));
  n.X = X;
  n.Wq = Wq;
  n.Wk = Wk;
  n.Wv = Wv;
  return n;
}

/// The named nodes of multi-head attention.
template <Real T> struct MultiHeadNodes {
  Var<T> Xp, Xq, Q, K, V;
  std::vector<HeadNodes<T>> heads;
  Var<T> C, O; ///< the heads side by side, and C Wo (C itself without Wo)
};

/// Multi-head attention from Q (m x d), K (n x d), V (n x r) already on a tape; Wo (r x Do) may be null.
template <Real T> MultiHeadNodes<T> attend(const Var<T>& Q, const Var<T>& K, const Var<T>& V,
                                           const AttentionConfig& config,
                                           std::type_identity_t<const Var<T>*> Wo = nullptr) {
  config.validate(Q.rows(), K.rows(), Q.cols(), V.cols());
  const std::vector<DropoutMask> drop = config.dropout_masks(Q.rows(), K.rows());
  MultiHeadNodes<T> n;
  n.Q = Q;
  n.K = K;
  n.V = V;
  const long H = config.heads, dh = Q.cols() / H, rh = V.cols() / H;
  std::vector<Var<T>> outputs;
  for (long h = 0; h < H; ++h) {
    const std::string suffix = H == 1 ? "" : "_h" + std::to_string(h + 1);
    const DropoutMask* mask = drop.empty() ? nullptr : &drop[static_cast<std::size_t>(h)];
    n.heads.push_back(H == 1 ? attention_head(Q, K, V, config, mask, suffix)
                             : attention_head(slice_cols(Q, h * dh, dh, "Q" + suffix),
                                              slice_cols(K, h * dh, dh, "K" + suffix),
                                              slice_cols(V, h * rh, rh, "V" + suffix), config, mask, suffix));
    outputs.push_back(n.heads.back().O);
  }
  n.C = H == 1 ? outputs[0] : concat_cols(outputs, "C");
  n.O = Wo ? matmul(n.C, *Wo, "Y") : n.C;
  return n;
}

/// Multi-head attention from X (n x D) with positions P (null for none) and Wo (null for none): the queries
/// are the last n - config.offset rows.
template <Real T> MultiHeadNodes<T> multi_head_attention(const Var<T>& X, std::type_identity_t<const Var<T>*> P,
                                                         const Var<T>& Wq, const Var<T>& Wk, const Var<T>& Wv,
                                                         std::type_identity_t<const Var<T>*> Wo,
                                                         const AttentionConfig& config) {
  const long n = X.rows();
  if (config.offset < 0 || config.offset >= n)
    throw ShapeError("multi_head_attention(" + X.name() + "): " + X.described() + " with offset " +
                     std::to_string(config.offset) +
                     "; the cached positions must leave at least one query row (0 <= offset < rows)");
  const Var<T> Xp = P ? add(X, slice_rows(*P, 0, n, P->label() + "[0:n]"), "Xp") : X;
  const Var<T> Xq = config.offset > 0 ? slice_rows(Xp, config.offset, n - config.offset, "Xq") : Xp;
  MultiHeadNodes<T> nodes = attend(matmul(Xq, Wq, "Q"), matmul(Xp, Wk, "K"), matmul(Xp, Wv, "V"), config, Wo);
  nodes.Xp = Xp;
  nodes.Xq = Xq;
  return nodes;
}

/// The probe J = sum(O hadamard G): a scalar whose gradient at O is exactly G.
template <Real T> Var<T> probe(const Var<T>& O, const Var<T>& G) { return sum(hadamard(O, G, "OG"), "J"); }

/// The inputs of one attention problem, as matrices.
template <Real T> struct AttentionInputs {
  Matrix<T> X, Wq, Wk, Wv, G;
  Matrix<T> P{}, Wo{}; // empty: no position table, no output projection
};

/// Everything recorded for one problem: the inputs as leaves, the nodes, the probe.
template <Real T> struct AttentionProblem {
  AttentionNodes<T> nodes;
  Var<T> G, J;
};

template <Real T> AttentionProblem<T> record_attention(Tape<T>& tape, const AttentionInputs<T>& in) {
  Var<T> X = tape.input(in.X, "X");
  Var<T> Wq = tape.input(in.Wq, "Wq");
  Var<T> Wk = tape.input(in.Wk, "Wk");
  Var<T> Wv = tape.input(in.Wv, "Wv");
  Var<T> G = tape.input(in.G, "G");
  AttentionNodes<T> nodes = attention(X, Wq, Wk, Wv);
  Var<T> J = probe(nodes.O, G);
  return {nodes, G, J};
}

/// The attention graphs' builders for engine type T and its dual numbers, compiled once per type in our own
/// builds (autodiff/instances.hpp).
#define TAPEGRAD_ATTENTION_INSTANCE(prefix, T)                                                                         \
  prefix template HeadNodes<T> attention_head<T>(const Var<T>&, const Var<T>&, const Var<T>&, const AttentionConfig&,  \
                                                 const DropoutMask*, const std::string&);                              \
  prefix template MultiHeadNodes<T> attend<T>(const Var<T>&, const Var<T>&, const Var<T>&, const AttentionConfig&,     \
                                              std::type_identity_t<const Var<T>*>);
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_WITH_DUAL(TAPEGRAD_ATTENTION_INSTANCE, prefix, T)
#include "../../autodiff/instances.hpp"
#undef TAPEGRAD_ATTENTION_INSTANCE

} // namespace tapegrad

#pragma once
// A pre-norm transformer block as a graph, every op on the tape (so every gradient is checked):
//
//   N1 = layer_norm(X) g1 + c1                       gain g1 and bias c1: 1 x D rows, broadcast over positions
//   Y  = multi-head causal attention(N1; Wq, Wk, Wv, heads) Wo
//   R1 = X + Y                                       the first residual
//   N2 = layer_norm(R1) g2 + c2
//   F  = gelu(N2 W1 + b1) W2 + b2                    the MLP, width F (4 D in a transformer), biases broadcast
//   Out = R1 + F                                     the second residual
//
//   X: T x D;  Wq, Wk: D x d;  Wv: D x r;  Wo: r x D;  W1: D x F;  b1: 1 x F;  W2: F x D;  b2: 1 x D

#include "../../ops/ops.hpp"
#include "attention.hpp"

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

/// The block's parameters as Vars, in the order of transformer_block_names().
template <Real T> struct TransformerBlockParams { Var<T> g1, c1, Wq, Wk, Wv, Wo, g2, c2, W1, b1, W2, b2; };

/// The inputs of TransformerBlockLoss, in order: X, then the parameters.
inline const std::vector<std::string>& transformer_block_names() {
  static const std::vector<std::string> names{"X",  "g1", "c1", "Wq", "Wk", "Wv", "Wo",
                                              "g2", "c2", "W1", "b1", "W2", "b2"};
  return names;
}

/// The shapes of X and the parameters, in the order of transformer_block_names(), for T positions of width D
/// (d = r = D) and an MLP of width F.
inline std::vector<std::pair<int, int>> transformer_block_shapes(int T, int D, int F) {
  return {{T, D}, {1, D}, {1, D}, {D, D}, {D, D}, {D, D}, {D, D}, {1, D}, {1, D}, {D, F}, {1, F}, {F, D}, {1, D}};
}

/// The parameters from Vars in the order of transformer_block_names() without X (12 of them).
template <Real T> TransformerBlockParams<T> transformer_block_params(std::span<const Var<T>> p) {
  if (p.size() != transformer_block_names().size() - 1)
    throw UsageError("transformer_block_params: " + std::to_string(transformer_block_names().size() - 1) +
                     " parameters (g1, c1, Wq, Wk, Wv, Wo, g2, c2, W1, b1, W2, b2), got " + std::to_string(p.size()));
  return {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]};
}

/// The block's output (T x D) from X and the parameters already on a tape; `heads` must divide d and r.
template <Real T> Var<T> transformer_block(const Var<T>& X, const TransformerBlockParams<T>& p, int heads) {
  AttentionConfig config;
  config.heads = heads;
  config.causal = true;
  const Var<T> n1 = add(hadamard(layer_norm(X, "LN1"), p.g1, "LN1 g1"), p.c1, "N1");
  const MultiHeadNodes<T> att =
      attend(matmul(n1, p.Wq, "Q"), matmul(n1, p.Wk, "K"), matmul(n1, p.Wv, "V"), config, &p.Wo);
  const Var<T> r1 = add(X, att.O, "R1");
  const Var<T> n2 = add(hadamard(layer_norm(r1, "LN2"), p.g2, "LN2 g2"), p.c2, "N2");
  const Var<T> h = gelu(add(matmul(n2, p.W1, "N2 W1"), p.b1, "Z1"), "H");
  const Var<T> f = add(matmul(h, p.W2, "H W2"), p.b2, "F");
  return add(r1, f, "Out");
}

/// The block's loss as a graph the checker takes: J = sum(Out hadamard G), G a fixed probe (its gradient at Out
/// is exactly G). Inputs in the order of transformer_block_names().
struct TransformerBlockLoss {
  int heads = 2;
  Matrix<double> probe; ///< G, T x D (exact in every precision: made of dyadic rationals)
  template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& in) const {
    if (in.size() != transformer_block_names().size())
      throw UsageError("TransformerBlockLoss: " + std::to_string(transformer_block_names().size()) +
                       " inputs (X and the parameters), got " + std::to_string(in.size()));
    const Var<U> out =
        transformer_block(in[0], transformer_block_params(std::span<const Var<U>>(in).subspan(1)), heads);
    return sum(hadamard(out, tape.input(probe.template cast<U>(), "G"), "Out G"), "J");
  }
};

} // namespace tapegrad

#pragma once
// Single-head self-attention composed from ops, with every node labelled as in the chapter.
//
//   Q = X Wq,  K = X Wk,  V = X Wv                 X: T x D, Wq, Wk: D x d, Wv: D x r
//   S = Q K^T / sqrt(d)                            (1/sqrt(d) made in T)
//   A = softmax_rows(S)                            each row normalised: one query at a time
//   O = A V
//   J = sum(O hadamard G)                          the probe objective, G: T x r fixed

#include "../ops/ops.hpp"

namespace tapegrad {

/// The named nodes of one attention graph on a tape.
template <Real T> struct AttentionNodes { Var<T> X, Wq, Wk, Wv, Q, K, V, Kt, S0, S, A, O; };

/// Records attention from Q, K, V already on a tape (the local graph: S, A, O only).
template <Real T> AttentionNodes<T> attend(const Var<T>& Q, const Var<T>& K, const Var<T>& V) {
  using std::sqrt;
  AttentionNodes<T> n{{}, {}, {}, {}, Q, K, V, {}, {}, {}, {}, {}};
  n.Kt = transpose(K, "Kt");
  n.S0 = matmul(Q, n.Kt, "S0");
  const T d(static_cast<long>(Q.cols()));
  n.S = scale(n.S0, T(1) / sqrt(d), "S");
  n.A = softmax_rows(n.S, "A");
  n.O = matmul(n.A, V, "O");
  return n;
}

/// Records attention from X, Wq, Wk, Wv already on a tape.
template <Real T> AttentionNodes<T> attention(const Var<T>& X, const Var<T>& Wq, const Var<T>& Wk, const Var<T>& Wv) {
  AttentionNodes<T> n = attend(matmul(X, Wq, "Q"), matmul(X, Wk, "K"), matmul(X, Wv, "V"));
  n.X = X;
  n.Wq = Wq;
  n.Wk = Wk;
  n.Wv = Wv;
  return n;
}

/// The probe J = sum(O hadamard G): a scalar whose gradient at O is exactly G.
template <Real T> Var<T> probe(const Var<T>& O, const Var<T>& G) { return sum(hadamard(O, G, "OG"), "J"); }

/// The inputs of one attention problem, as matrices.
template <Real T> struct AttentionInputs { Matrix<T> X, Wq, Wk, Wv, G; };

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

} // namespace tapegrad

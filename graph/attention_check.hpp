#pragma once
// The attention graph checked three ways (tape, hand-written backward, finite differences in a higher
// precision), plus dual numbers, every node's VJP, and the saturation guard:
//   - locally: Q, K, V each perturbed alone (the local graph from Q, K, V);
//   - through the projections: X, Wq, Wk, Wv (the full graph from X).
// The two are different functions and are never compared with each other: a local dQ is checked only
// against differences of the local graph.

#include "../autodiff/check.hpp"
#include "attention.hpp"
#include "attention_by_hand.hpp"
#include "saturation.hpp"

#include <random>
#include <string>

namespace tapegrad {

/// J = probe(attend(Q, K, V), G) with inputs {Q, K, V, G}.
struct LocalAttentionGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return probe(attend(in[0], in[1], in[2]).O, in[3]);
  }
};

/// J = probe(attention(X, Wq, Wk, Wv), G) with inputs {X, Wq, Wk, Wv, G}.
struct FullAttentionGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return probe(attention(in[0], in[1], in[2], in[3]).O, in[4]);
  }
};

/// A seeded asymmetric attention problem: X is n x D, Wq and Wk D x d, Wv D x r, G n x r; entries k/32 with
/// k in [-16, 16] (exact in every T; small enough that softmax is far from saturation).
template <Real T> AttentionInputs<T> random_attention(std::uint64_t seed, int n, int D, int d, int r) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> k(-16, 16);
  const auto make = [&](int rows, int cols) {
    Matrix<T> m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i)
      m.data()[i] = T(k(rng)) / T(32);
    return m;
  };
  AttentionInputs<T> in;
  in.X = make(n, D);
  in.Wq = make(D, d);
  in.Wk = make(D, d);
  in.Wv = make(D, r);
  in.G = make(n, r);
  return in;
}

/// Every check of one attention problem, engine T against reference R. `name` labels the problem.
template <Real T, Real R>
CheckReport check_attention(const std::string& name, const AttentionInputs<T>& in, const CheckOptions& opt) {
  CheckReport report;

  // Locally: Q, K, V are the inputs, each perturbed alone.
  const Matrix<T> Q = in.X * in.Wq, K = in.X * in.Wk, V = in.X * in.Wv;
  const AttentionByHand<T> local = attention_local_by_hand(Q, K, V, in.G);
  CheckOptions local_opt = opt;
  local_opt.wrt = {0, 1, 2};
  report.append(check_gradient<T, R>(LocalAttentionGraph{}, {Q, K, V, in.G}, {"Q", "K", "V", "G"}, local_opt,
                                     {{"hand-written", {local.dQ, local.dK, local.dV, {}}}}),
                name + ", local (Q, K, V each perturbed alone)");

  // Through the projections: X, Wq, Wk, Wv.
  const AttentionByHand<T> full = attention_by_hand(in.X, in.Wq, in.Wk, in.Wv, in.G);
  CheckOptions full_opt = opt;
  full_opt.wrt = {0, 1, 2, 3};
  report.append(check_gradient<T, R>(FullAttentionGraph{}, {in.X, in.Wq, in.Wk, in.Wv, in.G},
                                     {"X", "Wq", "Wk", "Wv", "G"}, full_opt,
                                     {{"hand-written", {full.dX, full.dWq, full.dWk, full.dWv, {}}}}),
                name + ", through the projections (X, Wq, Wk, Wv)");

  // The forward values agree too (the by-hand code is independent of ops/).
  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, in);
  CheckReport forward;
  forward.checks.push_back(
      compare<T, T>("tape vs hand-written forward", "O", p.nodes.O.value(), full.O, engine_tolerance<T>(), "none"));
  forward.checks.push_back(
      compare<T, T>("tape vs hand-written forward", "A", p.nodes.A.value(), full.A, engine_tolerance<T>(), "none"));
  report.append(std::move(forward), name + ", forward");

  for (std::string& w : saturated_softmax_rows(tape, static_cast<T>(check_threshold<T, R>(opt))))
    report.warnings.push_back(name + ": " + w);
  return report;
}

} // namespace tapegrad

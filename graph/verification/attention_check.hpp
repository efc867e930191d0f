#pragma once
// The attention graph checked three ways (tape, hand-written backward, finite differences in a higher
// precision), plus dual numbers, every node's VJP, and the saturation guard:
//   - locally: Q, K, V each perturbed alone (the local graph from Q, K, V);
//   - through the projections: X, Wq, Wk, Wv (the full graph from X).
// The two are different functions and are never compared with each other: a local dQ is checked only
// against differences of the local graph.

#include "../../autodiff/check.hpp"
#include "../models/attention.hpp"
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

/// The extended attention of AttentionConfig, locally: J = probe(attend(Q, K, V, config, Wo).O, G) with
/// inputs {Q, K, V, Wo, G}.
struct MaskedLocalAttentionGraph {
  AttentionConfig config;
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return probe(attend(in[0], in[1], in[2], config, &in[3]).O, in[4]);
  }
};

/// The extended attention from X: J = probe(multi_head_attention(X, P, Wq, Wk, Wv, Wo).O, G) with inputs
/// {X, P, Wq, Wk, Wv, Wo, G}.
struct MaskedAttentionGraph {
  AttentionConfig config;
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return probe(multi_head_attention(in[0], &in[1], in[2], in[3], in[4], &in[5], config).O, in[6]);
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

/// A seeded problem for the extended attention: m queries after `config.offset` cached positions (X has
/// n = m + offset rows), a position table with two rows more than used (their gradient must be exactly 0),
/// Wo: r x D and G: m x D. Entries k/32 as above.
template <Real T> AttentionInputs<T> random_masked_attention(std::uint64_t seed, int m, int D, int d, int r,
                                                             const AttentionConfig& config) {
  const int n = m + static_cast<int>(config.offset);
  AttentionInputs<T> in = random_attention<T>(seed, n, D, d, r);
  in.P = random_attention<T>(seed + 1, n + 2, D, r, D).X;
  in.Wo = random_attention<T>(seed + 2, r, D, 1, 1).X;
  in.G = random_attention<T>(seed + 3, m, D, 1, 1).X;
  return in;
}

/// Every check of one attention problem, engine T against reference R. `name` labels the problem. With
/// in.Wo empty it is the chapter's attention; otherwise the extended one of `config` (positions, heads,
/// masks, offset, dropout, Wo).
template <Real T, Real R> CheckReport check_attention(const std::string& name, const AttentionInputs<T>& in,
                                                      const CheckOptions& opt, const AttentionConfig& config = {}) {
  const bool extended = in.Wo.size() > 0;
  const AttentionByHand<T> full = extended ? attention_by_hand(in.X, in.P, in.Wq, in.Wk, in.Wv, in.Wo, in.G, config)
                                           : attention_by_hand(in.X, in.Wq, in.Wk, in.Wv, in.G);
  CheckReport report;

  // Locally: Q, K, V (and Wo) are the inputs, each perturbed alone.
  CheckOptions local_opt = opt;
  if (extended) {
    const AttentionByHand<T> local = attention_local_by_hand(full.Q, full.K, full.V, in.Wo, in.G, config);
    local_opt.wrt = {0, 1, 2, 3};
    report.append(check_gradient<T, R>(MaskedLocalAttentionGraph{config}, {full.Q, full.K, full.V, in.Wo, in.G},
                                       {"Q", "K", "V", "Wo", "G"}, local_opt,
                                       {{"hand-written", {local.dQ, local.dK, local.dV, local.dWo, {}}}}),
                  name + ", local (Q, K, V, Wo each perturbed alone)");
  } else {
    const AttentionByHand<T> local = attention_local_by_hand(full.Q, full.K, full.V, in.G);
    local_opt.wrt = {0, 1, 2};
    report.append(check_gradient<T, R>(LocalAttentionGraph{}, {full.Q, full.K, full.V, in.G}, {"Q", "K", "V", "G"},
                                       local_opt, {{"hand-written", {local.dQ, local.dK, local.dV, {}}}}),
                  name + ", local (Q, K, V each perturbed alone)");
  }

  // Through the projections: X (and P), Wq, Wk, Wv (and Wo).
  CheckOptions full_opt = opt;
  Tape<T> tape;
  std::vector<Var<T>> vars;
  Var<T> O, A;
  if (extended) {
    full_opt.wrt = {0, 1, 2, 3, 4, 5};
    const std::vector<Matrix<T>> inputs{in.X, in.P, in.Wq, in.Wk, in.Wv, in.Wo, in.G};
    const std::vector<std::string> names{"X", "P", "Wq", "Wk", "Wv", "Wo", "G"};
    report.append(
        check_gradient<T, R>(MaskedAttentionGraph{config}, inputs, names, full_opt,
                             {{"hand-written", {full.dX, full.dP, full.dWq, full.dWk, full.dWv, full.dWo, {}}}}),
        name + ", through the projections (X, P, Wq, Wk, Wv, Wo)");
    for (std::size_t k = 0; k < inputs.size(); ++k)
      vars.push_back(tape.input(inputs[k], names[k]));
    const MultiHeadNodes<T> nodes =
        multi_head_attention(vars[0], &vars[1], vars[2], vars[3], vars[4], &vars[5], config);
    O = nodes.O;
    A = nodes.heads[0].A;
  } else {
    full_opt.wrt = {0, 1, 2, 3};
    report.append(check_gradient<T, R>(FullAttentionGraph{}, {in.X, in.Wq, in.Wk, in.Wv, in.G},
                                       {"X", "Wq", "Wk", "Wv", "G"}, full_opt,
                                       {{"hand-written", {full.dX, full.dWq, full.dWk, full.dWv, {}}}}),
                  name + ", through the projections (X, Wq, Wk, Wv)");
    const AttentionProblem<T> p = record_attention(tape, in);
    O = p.nodes.O;
    A = p.nodes.A;
  }

  // The forward values agree too (the by-hand code is independent of ops/).
  CheckReport forward;
  shard_unit(opt, forward, [&] {
    forward.checks.push_back(
        compare<T, T>(CheckKind::forward, "hand-written", "O", O.value(), full.O, engine_tolerance<T>(), "none"));
    forward.checks.push_back(compare<T, T>(CheckKind::forward, "hand-written", extended ? A.label() : "A", A.value(),
                                           full.A[0], engine_tolerance<T>(), "none"));
  });
  report.append(std::move(forward), name + ", forward");

  for (std::string& w : saturated_softmax_rows(tape, static_cast<T>(check_threshold<T, R>(opt))))
    report.warnings.push_back(name + ": " + w);
  return report;
}

/// check_attention for engine T against the MPFR reference, compiled once per type in our own builds
/// (autodiff/instances.hpp).
#define TAPEGRAD_INSTANCE(prefix, T)                                                                                   \
  prefix template CheckReport check_attention<T, mpfr_real>(const std::string&, const AttentionInputs<T>&,             \
                                                            const CheckOptions&, const AttentionConfig&);
#include "../../autodiff/instances.hpp"

} // namespace tapegrad

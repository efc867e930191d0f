#pragma once
// Finite differences of one input: the graph as a function of input k alone (only what it reaches is
// replayed), and the sixth-order and Richardson references of that input.

#include "../finite_difference.hpp"
#include "recording.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>
#include <vector>

namespace tapegrad {

/// Finite-difference reference for input k in R: the sixth-order stencil, and the Richardson estimate
/// (second-order steps h and h/2) as an independent second opinion.
template <Real R> struct Reference {
  Matrix<R> sixth, richardson;
  std::string step; ///< the sixth-order step at |x| <= 1, and Richardson's
};

/// The graph's output as a function of input k alone, evaluated by recomputing only what input k reaches.
/// The graph is recorded once at `inputs`; an evaluation with input k moved replays, in recording order, the
/// nodes that both depend on input k and lead to the output (each op's replay, as the per-node check uses
/// it), and feeds every other node they read in as a constant holding its recorded value, which cannot
/// change when only input k moves. The result is the same number a full recording gives (the same ops on
/// the same values); the work saved is what does not depend on input k. In attention, moving Wv leaves Q,
/// K, S and the softmax alone (2 products of 5), moving Wq or Wk leaves one projection each.
/// The structure is the one recorded at `inputs`: a graph function that chooses its ops by looking at
/// values is differenced along the branch it took there.
template <Real R> class InputFunction {
public:
  template <class F>
  InputFunction(const F& f, const std::vector<Matrix<R>>& inputs, const std::vector<std::string>& names, std::size_t k)
      : out_(record_graph(base_, f, inputs, names).index()) {
    assert(k < inputs.size());
    // record_graph records input j as node j; then which nodes input k reaches, and which of those the
    // output needs.
    const std::size_t n = out_ + 1;
    std::vector<bool> reached(n, false), needed(n, false);
    reached[k] = true;
    for (std::size_t i = k + 1; i < n; ++i) // a detached value is a constant: held at its recorded value
      for (std::size_t p : base_.node(i).parents)
        if (reached[p] && !base_.node(i).op->detaches) reached[i] = true;
    needed[out_] = true;
    for (std::size_t i = n; i-- > 0;)
      if (needed[i])
        for (std::size_t p : base_.node(i).parents)
          needed[p] = true;
    role_.assign(n, Role::unused);
    for (std::size_t i = 0; i < n; ++i)
      if (reached[i] && needed[i]) {
        role_[i] = i == k ? Role::moved : Role::replayed;
        if (i != k && base_.node(i).replay == nullptr) complete_ = false; // an op recorded without a replay
        for (std::size_t p : base_.node(i).parents)
          if (!reached[p]) role_[p] = Role::constant;
      }
  }

  /// Whether every node to replay has a replay (a user's op recorded without one has not); if not, the
  /// caller records the whole graph instead.
  bool complete() const { return complete_; }

  /// The output with input k set to `xk`, recorded on `tape` (cleared). Safe to call concurrently, each
  /// call with its own tape. Only when complete().
  R operator()(Tape<R>& tape, const Matrix<R>& xk) const {
    assert(complete_);
    if (role_[out_] == Role::unused) return base_.node(out_).value(0, 0); // the output ignores input k
    std::vector<Var<R>> vars(out_ + 1), parents;
    for (std::size_t i = 0; i <= out_; ++i) {
      const auto& node = base_.node(i);
      switch (role_[i]) {
      case Role::unused:
        break;
      case Role::moved:
        vars[i] = tape.input(xk, node.shape);
        break;
      case Role::constant:
        vars[i] = tape.input(node.value, node.shape);
        break;
      case Role::replayed:
        parents.clear();
        for (std::size_t p : node.parents)
          parents.push_back(vars[p]);
        vars[i] = base_.replay(i, parents);
        break;
      }
    }
    return vars[out_].value()(0, 0);
  }

  /// How many nodes an evaluation replays (0 when the output does not depend on input k).
  std::size_t replayed() const {
    return static_cast<std::size_t>(std::count(role_.begin(), role_.end(), Role::replayed));
  }

private:
  enum class Role { unused, moved, constant, replayed };
  Tape<R> base_;
  std::size_t out_;
  std::vector<Role> role_;
  bool complete_ = true;
};

/// evaluate(), or NaN when it throws DomainError: a finite-difference point that falls outside an op's domain
/// (log of an entry <= 0, for a coordinate within a few steps of 0) gives a NaN reference there, which the
/// comparison reports as a failure with a note, instead of ending the whole check.
template <Real R, class Evaluate> R outside_domain_is_nan(Evaluate&& evaluate) {
  try {
    return evaluate();
  } catch (const DomainError&) {
    return std::numeric_limits<R>::quiet_NaN();
  }
}

/// Coordinates run on `threads` threads (0: every core); `progress` advances by one per coordinate and stencil.
template <Real R, class F> Reference<R> fd_reference(const F& f, const std::vector<Matrix<R>>& inputs,
                                                     const std::vector<std::string>& names, std::size_t k,
                                                     unsigned threads = 1, Progress* progress = nullptr) {
  const InputFunction<R> of_k(f, inputs, names, k);
  TapePool<R> tapes;
  const auto J = [&](const std::vector<Matrix<R>>& x) -> R {
    return outside_domain_is_nan<R>([&] {
      return tapes.with([&](Tape<R>& tape) -> R {
        return of_k.complete() ? of_k(tape, x[k]) : record_graph(tape, f, x, names).value()(0, 0);
      });
    });
  };
  return {central_difference<R>(J, inputs, k, Stencil::sixth_order, R(1), threads, progress),
          central_difference<R>(J, inputs, k, Stencil::richardson, R(1), threads, progress),
          "h6 = " + to_string(default_step<R>(Stencil::sixth_order), 3) +
              ", h2 = " + to_string(default_step<R>(Stencil::richardson), 3) + " (times max(1, |x|))"};
}

} // namespace tapegrad

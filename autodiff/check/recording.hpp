#pragma once
// Recording a graph function on a tape of any precision, the engine's gradient, pooled tapes, and seeded
// random directions.

#include "../tape.hpp"

#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tapegrad {

/// The graph's output, of any shape, on a fresh tape of U: the inputs recorded first, named.
template <Real U, class F> Var<U> record_output(Tape<U>& tape, const F& f, const std::vector<Matrix<U>>& inputs,
                                                const std::vector<std::string>& names) {
  std::vector<Var<U>> vars;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    vars.push_back(tape.input(inputs[k], k < names.size() ? names[k] : "in" + std::to_string(k)));
  return f(tape, vars);
}

/// The graph's output of one entry (1x1, rank 0, or any shape of sizes 1) on a fresh tape of U.
template <Real U, class F> Var<U> record_graph(Tape<U>& tape, const F& f, const std::vector<Matrix<U>>& inputs,
                                               const std::vector<std::string>& names) {
  Var<U> out = record_output(tape, f, inputs, names);
  if (out.shape().numel() != 1)
    throw UsageError("check: the graph's output " + out.name() + " is " + shape_string(out.shape()) +
                     "; a checked graph must end in a value of one entry (sum it, take a probe sum(O * G), or check "
                     "every entry with check_jacobian)");
  return out;
}

/// UsageError naming the first node of `tape` whose op detaches (its value a constant by definition, not by its
/// values) for a check whose differences move every value at once (`what`): along a direction, or of the gradient,
/// such a node would move with them. Every coordinate's own differences hold it at its recorded value instead.
template <Real U> void require_no_detach(const Tape<U>& tape, std::string_view what) {
  for (std::size_t i = 0; i < tape.size(); ++i)
    if (tape.node(i).op->detaches)
      throw UsageError(std::string(what) + ": " + tape.node_name(i) +
                       (tape.node(i).label.empty() ? "" : " (" + std::string(tape.node(i).op->node) + ")") +
                       " holds a value constant by definition, which these differences would move; check every "
                       "coordinate instead (its differences hold it at its recorded value)");
}

/// The engine's gradient w.r.t. every input, and its value.
template <Real T> struct EngineGradient {
  T value;
  std::vector<Matrix<T>> grads;
};

template <Real T, class F> EngineGradient<T> engine_gradient(const F& f, const std::vector<Matrix<T>>& inputs,
                                                             const std::vector<std::string>& names,
                                                             const TapeOptions& options = {}) {
  Tape<T> tape(options);
  const Var<T> out = record_graph(tape, f, inputs, names);
  tape.backward(out);
  EngineGradient<T> g{out.value()(0, 0), {}};
  for (std::size_t k = 0; k < inputs.size(); ++k)
    g.grads.push_back(tape.grad(tape.var(k)));
  return g;
}

/// Tapes lent to concurrent evaluations of one graph: an evaluation borrows a cleared tape and gives it back,
/// so the next recording of the same graph reuses its buffers (Tape::buffer) instead of allocating them,
/// which for MPFR numbers is a large share of an evaluation. Lives for one finite-difference sweep only.
template <Real U> class TapePool {
public:
  /// fn(Tape<U>&) on a cleared tape of the pool; returns what fn returns.
  template <class Fn> auto with(Fn&& fn) {
    std::unique_ptr<Tape<U>> tape;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        tape = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!tape) tape = std::make_unique<Tape<U>>();
    tape->clear();
    auto result = fn(*tape);
    const std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(tape));
    return result;
  }

private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Tape<U>>> free_;
};

/// Seeded random matrices shaped like `like`, entries k/8 with k in [-8, 8] (exact in any T).
template <Real T> std::vector<Matrix<T>> random_like(const std::vector<Matrix<T>>& like, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> k(-8, 8);
  std::vector<Matrix<T>> out;
  for (const Matrix<T>& m : like) {
    Matrix<T> v(m.rows(), m.cols());
    for (Eigen::Index i = 0; i < v.size(); ++i)
      v.data()[i] = T(k(rng)) / T(8);
    out.push_back(std::move(v));
  }
  return out;
}

template <Real T> T inner(const std::vector<Matrix<T>>& a, const std::vector<Matrix<T>>& b) {
  T s(0);
  for (std::size_t k = 0; k < a.size(); ++k)
    s += a[k].cwiseProduct(b[k]).sum();
  return s;
}

} // namespace tapegrad

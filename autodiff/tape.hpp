#pragma once
// The tape: a Wengert list of matrix-valued nodes in recording order, swept backwards by one loop.
//
// Recording order is a topological order (a node can only use nodes recorded before it), so backward needs
// no graph search and no recursion. Every VJP ADDS into its parents' adjoints: a value used by n nodes
// receives the sum of n contributions. Nothing here knows an op by name: ops/ records nodes through
// Tape::record with a VJP closure.

#include "error.hpp"
#include "real.hpp"

#include <spdlog/spdlog.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tapegrad {

template <Real T> class Tape;

/// A handle to one node of a tape: {tape, index, generation}. Cheap to copy. Using a Var after its tape was
/// cleared, or with another tape, is an error (UsageError), not undefined behaviour.
template <Real T> class Var {
public:
  Var() = default;

  Tape<T>& tape() const {
    check();
    return *tape_;
  }
  std::size_t index() const { return index_; }
  bool valid() const { return tape_ != nullptr; }

  const Matrix<T>& value() const { return tape().value(*this); }
  /// d(output)/d(this node) summed over every backward run since the last zero_grad; zeros if unreached.
  const Matrix<T>& grad() const { return tape().grad(*this); }
  Eigen::Index rows() const { return value().rows(); }
  Eigen::Index cols() const { return value().cols(); }
  const std::string& label() const { return tape().label(*this); }
  /// The label, or "node 7 (MatMul)" when the node has none: what error messages and listings show.
  std::string name() const { return tape().name(*this); }
  /// "Q (3x4)"
  std::string described() const { return name() + " (" + shape_string(rows(), cols()) + ")"; }

private:
  friend class Tape<T>;
  Var(Tape<T>* tape, std::size_t index, std::uint64_t generation)
      : tape_(tape), index_(index), generation_(generation) {}
  void check() const {
    if (tape_ == nullptr) throw UsageError("tapegrad: a default-constructed Var is not on any tape");
  }

  Tape<T>* tape_ = nullptr;
  std::size_t index_ = 0;
  std::uint64_t generation_ = 0;
};

/// What a VJP sees while the tape sweeps backwards through its node.
template <Real T> class Backprop {
public:
  /// The adjoint of this node's result (d output / d result), same shape as the result.
  const Matrix<T>& grad() const { return tape_.sweep_adjoint(node_); }
  /// The forward value of this node.
  const Matrix<T>& result() const { return tape_.node_value(node_); }
  /// The forward value of parent k (in the order the op passed its parents).
  const Matrix<T>& input(std::size_t k) const { return tape_.node_value(tape_.parent(node_, k)); }
  /// Adds `contribution` into the adjoint of parent k. A VJP only ever adds.
  template <class Expr> void accumulate(std::size_t k, const Expr& contribution) {
    tape_.accumulate(tape_.parent(node_, k), contribution);
  }

private:
  friend class Tape<T>;
  Backprop(Tape<T>& tape, std::size_t node) : tape_(tape), node_(node) {}
  Tape<T>& tape_;
  std::size_t node_;
};

/// Options of a tape.
struct TapeOptions {
  /// backward() on a tape still holding gradients from an earlier backward (no zero_grad() between) adds to
  /// them, which is rarely meant (stale gradients: everything doubles). By default that logs a warning
  /// (spdlog); with this set it throws UsageError instead.
  bool stale_gradients_are_errors = false;
  /// FAULT INJECTION, for demonstrations only (`tapegrad bugs`): every VJP ASSIGNS into its parents' adjoints
  /// instead of adding, so a value used by several nodes keeps only the last contribution.
  bool inject_overwrite_fault = false;
};

template <Real T> class Tape {
public:
  using Vjp = std::function<void(Backprop<T>&)>;
  /// Records the same op again on other operands (same constants): lets a checker re-evaluate one node
  /// alone, with its inputs perturbed, without knowing what the op is.
  using Replay = std::function<Var<T>(const std::vector<Var<T>>&)>;

  /// One recorded value. `op` is the node type shown in listings ("MatMul"); inputs have op "Input" and
  /// no VJP.
  struct Node {
    std::string_view op;
    std::vector<std::size_t> parents;
    Matrix<T> value;
    Matrix<T> grad;    // accumulated over backward runs; empty means zero
    Matrix<T> adjoint; // this sweep's adjoint; empty means zero; moved into grad after the sweep
    Vjp vjp;
    Replay replay;
    std::string label;
    std::size_t contributions = 0; // adjoint contributions received in the last sweep (fan-out audit)
  };

  Tape() = default;
  explicit Tape(TapeOptions options) : options_(options) {}
  Tape(const Tape&) = delete; // Vars point at their tape: it neither copies nor moves
  Tape& operator=(const Tape&) = delete;

  /// A leaf: a value the graph reads and that gradients can be asked of.
  Var<T> input(Matrix<T> value, std::string label = {}) {
    if (value.size() == 0)
      throw ShapeError("input(" + label + "): empty matrix (" + shape_string(value.rows(), value.cols()) +
                       "); every value needs at least one entry");
    return push(Node{"Input", {}, std::move(value), {}, {}, {}, {}, std::move(label)});
  }

  /// Records a node computed from `parents`. Used by ops/; every parent must be a live Var of this tape.
  /// `op` must outlive the tape (ops pass string literals).
  Var<T> record(std::string_view op, std::initializer_list<Var<T>> parents, Matrix<T> value, Vjp vjp, Replay replay,
                std::string label = {}) {
    return record(op, std::span<const Var<T>>(parents.begin(), parents.size()), std::move(value), std::move(vjp),
                  std::move(replay), std::move(label));
  }
  /// The same for ops with a variable number of parents (concat_cols).
  Var<T> record(std::string_view op, std::span<const Var<T>> parents, Matrix<T> value, Vjp vjp, Replay replay,
                std::string label = {}) {
    std::vector<std::size_t> indices;
    indices.reserve(parents.size());
    for (const Var<T>& p : parents) {
      check(p, op);
      indices.push_back(p.index_);
    }
    return push(
        Node{op, std::move(indices), std::move(value), {}, {}, std::move(vjp), std::move(replay), std::move(label)});
  }

  /// Reverse sweep from a 1 x 1 output, seeded with 1.
  void backward(const Var<T>& out) {
    check(out, "backward");
    const Matrix<T>& v = nodes_[out.index_].value;
    if (v.rows() != 1 || v.cols() != 1)
      throw UsageError("backward(" + out.name() + "): output is " + shape_string(v.rows(), v.cols()) +
                       ", not 1x1; pass a seed of that shape: backward(out, seed)");
    backward(out, Matrix<T>::Constant(1, 1, T(1)));
  }

  /// Reverse sweep from any output, seeded with d(objective)/d(out) = seed. Each call ADDS d/d(node) to
  /// every node's gradient; call zero_grad() between runs that should not add up.
  void backward(const Var<T>& out, const Matrix<T>& seed) {
    check(out, "backward");
    const std::size_t top = out.index_;
    const Matrix<T>& v = nodes_[top].value;
    if (seed.rows() != v.rows() || seed.cols() != v.cols())
      throw ShapeError("backward(" + out.name() + ", seed): " + out.name() + " is " + shape_string(v.rows(), v.cols()) +
                       " but the seed is " + shape_string(seed.rows(), seed.cols()) + "; shapes must match");
    if (swept_) {
      const std::string message = "backward(" + out.name() +
                                  "): the tape still holds gradients from an earlier backward and this one adds to "
                                  "them (stale gradients); call zero_grad() first for fresh ones";
      if (options_.stale_gradients_are_errors) throw UsageError(message);
      spdlog::warn("tapegrad: {}", message);
    }
    swept_ = true;
    for (Node& n : nodes_)
      n.contributions = 0;
    nodes_[top].adjoint = seed;
    for (std::size_t i = top + 1; i-- > 0;) {
      Node& n = nodes_[i];
      if (n.adjoint.size() == 0 || !n.vjp) continue; // unreached, or an input
      Backprop<T> bp(*this, i);
      n.vjp(bp);
    }
    for (std::size_t i = 0; i <= top; ++i) {
      Node& n = nodes_[i];
      if (n.adjoint.size() == 0) continue;
      if (n.grad.size() == 0)
        n.grad = std::move(n.adjoint);
      else
        n.grad += n.adjoint;
      n.adjoint.resize(0, 0);
    }
  }

  /// Gradient of any node, input or intermediate: zeros of its shape when no backward reached it.
  const Matrix<T>& grad(const Var<T>& v) {
    check(v, "grad");
    Node& n = nodes_[v.index_];
    if (n.grad.size() == 0) n.grad = Matrix<T>::Zero(n.value.rows(), n.value.cols());
    return n.grad;
  }

  const Matrix<T>& value(const Var<T>& v) const {
    check(v, "value");
    return nodes_[v.index_].value;
  }
  const std::string& label(const Var<T>& v) const {
    check(v, "label");
    return nodes_[v.index_].label;
  }
  std::string name(const Var<T>& v) const {
    check(v, "name");
    return node_name(v.index_);
  }
  void set_label(const Var<T>& v, std::string label) {
    check(v, "set_label");
    nodes_[v.index_].label = std::move(label);
  }

  /// Forgets every gradient; values and the recorded graph stay.
  void zero_grad() {
    swept_ = false;
    for (Node& n : nodes_)
      n.grad.resize(0, 0);
  }

  /// Forgets every node so the tape can record afresh. Vars of the old recording become invalid.
  void clear() {
    nodes_.clear();
    swept_ = false;
    ++generation_;
  }

  /// What the tape holds: nodes, and bytes in values and in gradients (the scalars' own storage, including
  /// an MPFR number's limbs). VJPs read their operands from the parents' values, so nothing else is saved
  /// per node but small constants (mask flags, targets, dropout patterns).
  struct Stats {
    std::size_t nodes = 0, value_bytes = 0, grad_bytes = 0;
  };
  Stats stats() const {
    Stats st;
    st.nodes = nodes_.size();
    for (const Node& n : nodes_) {
      st.value_bytes += matrix_bytes(n.value);
      st.grad_bytes += matrix_bytes(n.grad) + matrix_bytes(n.adjoint);
    }
    return st;
  }

  std::size_t size() const { return nodes_.size(); }
  const Node& node(std::size_t i) const {
    assert(i < nodes_.size());
    return nodes_[i];
  }
  /// The Var of node i of the current recording.
  Var<T> var(std::size_t i) {
    if (i >= nodes_.size())
      throw UsageError("var(" + std::to_string(i) + "): the tape has " + std::to_string(nodes_.size()) + " nodes");
    return Var<T>(this, i, generation_);
  }
  /// The Var of the last node labelled `label` (UsageError when no node has that label).
  Var<T> find(std::string_view label) {
    for (std::size_t i = nodes_.size(); i-- > 0;)
      if (nodes_[i].label == label) return Var<T>(this, i, generation_);
    throw UsageError("find(" + std::string(label) + "): no node of the tape is labelled '" + std::string(label) + "'");
  }

  /// The label of node i, or "node i (Op)" when it has none.
  std::string node_name(std::size_t i) const {
    const Node& n = nodes_[i];
    return n.label.empty() ? "node " + std::to_string(i) + " (" + std::string(n.op) + ")" : n.label;
  }

private:
  friend class Backprop<T>;

  Var<T> push(Node n) {
    nodes_.push_back(std::move(n));
    return Var<T>(this, nodes_.size() - 1, generation_);
  }

  /// A Var may be used only with the tape that made it, and only in the recording that made it.
  void check(const Var<T>& v, std::string_view what) const {
    if (v.tape_ == nullptr)
      throw UsageError(std::string(what) + ": operand is a default-constructed Var, not on any tape");
    if (v.tape_ != this)
      throw UsageError(std::string(what) + ": operand " + v.tape_->safe_name(v) +
                       " belongs to another tape; all operands of an op must be on one tape");
    if (v.generation_ != generation_ || v.index_ >= nodes_.size())
      throw UsageError(std::string(what) + ": operand node " + std::to_string(v.index_) +
                       " is from a recording that clear() has discarded");
  }
  std::string safe_name(const Var<T>& v) const {
    return v.generation_ == generation_ && v.index_ < nodes_.size() ? node_name(v.index_)
                                                                    : "node " + std::to_string(v.index_);
  }

  const Matrix<T>& node_value(std::size_t i) const { return nodes_[i].value; }
  const Matrix<T>& sweep_adjoint(std::size_t i) const { return nodes_[i].adjoint; }
  std::size_t parent(std::size_t node, std::size_t k) const {
    assert(k < nodes_[node].parents.size());
    return nodes_[node].parents[k];
  }
  template <class Expr> void accumulate(std::size_t i, const Expr& contribution) {
    Node& n = nodes_[i];
    assert(contribution.rows() == n.value.rows() && contribution.cols() == n.value.cols());
    // noalias: a contribution is made from the child's adjoint and the operands' values, never from this
    // node's own adjoint, so Eigen may evaluate a product straight into it (no temporary, no copy).
    if (n.adjoint.size() == 0 || options_.inject_overwrite_fault)
      n.adjoint.noalias() = contribution;
    else
      n.adjoint.noalias() += contribution;
    ++n.contributions;
  }

  static std::size_t matrix_bytes(const Matrix<T>& m) {
    std::size_t per = sizeof(T);
    if constexpr (runtime_precision<T>) // the limbs live outside the object
      if (m.size() > 0) per += (static_cast<std::size_t>(m.data()[0].precision()) * 3322 / 1000 / 64 + 1) * 8;
    return static_cast<std::size_t>(m.size()) * per;
  }

  std::vector<Node> nodes_;
  std::uint64_t generation_ = 0;
  TapeOptions options_;
  bool swept_ = false; // a backward ran since the last zero_grad() or clear()
};

} // namespace tapegrad

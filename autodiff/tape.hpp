#pragma once
// The tape: a Wengert list of tensor-valued nodes in recording order, swept backwards by one loop.
//
// Recording order is a topological order (a node can only use nodes recorded before it), so backward needs
// no graph search and no recursion. Every VJP ADDS into its parents' adjoints: a value used by n nodes
// receives the sum of n contributions. Nothing here knows an op by name: ops/ records nodes through
// Tape::record<Op> with a VJP closure; a node points at its op's descriptor (autodiff/op_info.hpp) and keeps
// its parameters, so it can be replayed and described without a word about which op it is.
//
// A node's value is a tensor of rank 0 to 8: its Shape, and its entries in a Matrix<T> viewed as
// autodiff/shape.hpp says (a matrix is itself; leading dims fold into the rows). Gradients and adjoints have
// the node's shape in the same view. An op records its result's shape with it; an op that records a bare
// matrix (a user's own op written for matrices) takes rank-2 operands only, so it never reads a tensor's
// storage view as if it were a matrix.
//
// What is not the sweep lives beside it: Var (var.hpp), what a VJP is handed (backprop.hpp), the options
// (tape_options.hpp), anomaly mode's checks (anomaly.hpp, called at two hooks: a value recorded, a VJP run),
// the bytes a value holds (storage_bytes.hpp). Fault injection is one hook, Tape::assigns(). The sweep itself
// is Tape::backward(out, seed) below, with begin_sweep() before it and merge_adjoints() after.

#include "anomaly.hpp"
#include "backprop.hpp"
#include "error.hpp"
#include "op.hpp"
#include "real.hpp"
#include "storage_bytes.hpp"
#include "tape_options.hpp"
#include "tensor.hpp"
#include "var.hpp"

#include <spdlog/spdlog.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tapegrad {

template <Real T> class Tape {
public:
  using Vjp = std::function<void(Backprop<T>&)>;
  /// Records the same op again on other operands with the node's own parameters: lets a checker
  /// re-evaluate one node alone, with its inputs perturbed, without knowing what the op is. It is the op's
  /// own apply (autodiff/op.hpp); null for an op that has none.
  using Replay = Var<T> (*)(std::span<const Var<T>>, const Params<T>&, std::string);

  /// One recorded value. `op` is its op's descriptor (&input_op for inputs, which have no VJP).
  struct Node {
    const OpInfo* op = &input_op;
    std::vector<std::size_t> parents;
    Shape shape; // the value's (and the gradient's) shape; value is its storage view
    Matrix<T> value;
    Matrix<T> grad;    // accumulated over backward runs; meaningful only when has_grad (else zero)
    Matrix<T> adjoint; // this sweep's adjoint; meaningful only when has_adjoint; merged into grad after it
    Vjp vjp;
    Replay replay = nullptr;
    Params<T> params; // the op's parameters on this node (factor, offset, ...)
    std::string label;
    std::size_t contributions = 0; // adjoint contributions received in the last sweep (fan-out audit)
    bool has_grad = false;
    bool has_adjoint = false;
    /// Whether a gradient flows into it: false for a constant and for a node computed from constants only, which
    /// receive no adjoint contributions and whose VJPs are not run (torch's requires_grad).
    bool needs_grad = true;
    std::uint64_t generation = 0; // the recording this node belongs to (its Vars hold the same number)
    bool is_input() const { return op->input; }
  };

  Tape() = default;
  explicit Tape(TapeOptions options) : options_(options) {}
  Tape(const Tape&) = delete; // Vars point at their tape: it neither copies nor moves
  Tape& operator=(const Tape&) = delete;
  ~Tape();

  /// A leaf: a value the graph reads and that gradients can be asked of. Copied into the tape (into the
  /// buffer this slot held before clear() when the shape matches). A matrix is rank 2.
  Var<T> input(const Matrix<T>& value, std::string label = {});
  /// The same, taking the matrix over without a copy.
  Var<T> input(Matrix<T>&& value, std::string label = {});
  /// A leaf of any rank.
  Var<T> input(const Tensor<T>& value, std::string label = {});

  /// A leaf no gradient is computed for (torch's requires_grad=False: a probe, a fixed weight): VJPs write nothing
  /// into it, nor into a node made from constants only, and grad() of either is a UsageError.
  Var<T> constant(const Tensor<T>& value, std::string label = {});
  Var<T> constant(const Matrix<T>& value, std::string label = {});
  /// A constant holding the entries of `storage` with `shape`, as input(storage, shape, label) does an input.
  Var<T> constant(const Matrix<T>& storage, const Shape& shape, std::string label = {});
  /// A leaf holding the entries of `storage` (any rows x cols with shape.numel() entries, row-major) with `shape`.
  Var<T> input(const Matrix<T>& storage, const Shape& shape, std::string label = {});

  /// Gives input `v` the shape `shape` of as many entries, its entries unchanged (row-major): how a graph
  /// function whose inputs arrive as matrices (the checker hands each over as one) sees them as tensors.
  /// UsageError unless v is an input that no node has used yet (its own shape again is always fine), ShapeError
  /// when the counts differ.
  void set_input_shape(const Var<T>& v, const Shape& shape);

  /// A matrix of rows x cols for the value of the next node to be recorded, contents unspecified: the buffer
  /// the node in that slot held before the last clear() when its shape matches, else a new one. So a tape
  /// that records the same graph again after clear() (a training loop, a benchmark) allocates no values.
  Matrix<T> buffer(const Shape& shape) { return buffer(shape.rows(), shape.cols()); }
  Matrix<T> buffer(Eigen::Index rows, Eigen::Index cols) {
    check_entries(rows, cols, [] { return "a value"; });
    if (size_ < nodes_.size()) {
      Matrix<T>& old = nodes_[size_].value;
      if (old.rows() == rows && old.cols() == cols) return std::move(old);
    }
    return Matrix<T>(rows, cols);
  }

  /// A work matrix for an op's temporaries, forward or VJP (product()'s transposed results), any shape,
  /// contents unspecified. Kept between uses: it is reallocated only when its size changes. One matrix that
  /// every use overwrites (matmul's forward and VJP, product() with it): hold nothing in it across an op
  /// call, record() or an accumulate_with whose fill uses it, and never pass it as an operand. A tape is used
  /// by one thread at a time (the checker's threads each record on their own tapes). release() frees it.
  Matrix<T>& work() { return work_; }

  /// Records a node of op `Op` computed from `parents`, with the parameters it was applied with: a rank-2 value
  /// (a matrix) made from rank-2 parents; a parent of another rank is a ShapeError naming the op and the parent.
  /// Used by ops written for matrices (a user's own op); every parent must be a live Var of this tape.
  template <class Op> Var<T> record(std::initializer_list<Var<T>> parents, Matrix<T> value, Vjp vjp,
                                    std::string label = {}, Params<T> params = {}) {
    return record<Op>(std::span<const Var<T>>(parents.begin(), parents.size()), std::move(value), std::move(vjp),
                      std::move(label), std::move(params));
  }
  /// The same for ops with a variable number of parents (concat_cols).
  template <class Op> Var<T> record(std::span<const Var<T>> parents, Matrix<T> value, Vjp vjp, std::string label = {},
                                    Params<T> params = {}) {
    for (const Var<T>& p : parents) {
      check(p, Op::info.name);
      if (nodes_[p.index_].shape.rank() != 2)
        throw ShapeError(std::string(function_name(Op::info)) + ": takes matrices (rank 2); its operand " + p.name() +
                         " is " + shape_string(nodes_[p.index_].shape) + " (rank " +
                         std::to_string(nodes_[p.index_].shape.rank()) + ")");
    }
    const Shape shape{value.rows(), value.cols()};
    return record<Op>(parents, shape, std::move(value), std::move(vjp), std::move(label), std::move(params));
  }
  /// Records a node of op `Op` whose value has `shape` (any rank), its entries in `value` in the storage view.
  template <class Op> Var<T> record(std::span<const Var<T>> parents, const Shape& shape, Matrix<T> value, Vjp vjp,
                                    std::string label = {}, Params<T> params = {}) {
    assert(value.rows() == shape.rows() && value.cols() == shape.cols());
    Replay replay = nullptr;
    if constexpr (requires { &Op::template apply<T>; }) {
      static_assert(std::is_convertible_v<decltype(&Op::template apply<T>), Replay>,
                    "Op::apply<T> must be Var<T>(std::span<const Var<T>>, const Params<T>&, std::string)");
      replay = &Op::template apply<T>;
    }
    for (const Var<T>& p : parents)
      check(p, Op::info.name);
    const Var<T> v = push(&Op::info, parents, std::move(value), std::move(vjp), replay, std::move(label));
    nodes_[v.index_].shape = shape;
    nodes_[v.index_].params = std::move(params);
    if (options_.detect_anomaly) anomaly::check_value(*this, v.index_);
    return v;
  }

  /// Node i's op applied again to `operands` (Vars of any tape of T) with node i's parameters; UsageError
  /// when its op has no replay. The per-node check and the finite differences evaluate nodes with it.
  Var<T> replay(std::size_t i, std::span<const Var<T>> operands) const;

  /// Refuses (LimitError) a value of rows x cols beyond TapeOptions::max_entries; `what()` names it (called
  /// only then, so the message costs nothing on the way through).
  template <class What> void check_entries(Eigen::Index rows, Eigen::Index cols, const What& what) const {
    const auto r = static_cast<std::size_t>(rows), c = static_cast<std::size_t>(cols);
    if (rows < 0 || cols < 0 || (r > 0 && c > options_.max_entries / r))
      throw LimitError(std::string(what()) + ": " + shape_string(rows, cols) + " would hold more than " +
                       std::to_string(options_.max_entries) +
                       " entries, the limit of one value (TapeOptions::max_entries); refused before allocating");
  }
  const TapeOptions& options() const { return options_; }

  /// Reverse sweep from an output of one entry (rank 0, or every size 1), seeded with 1.
  void backward(const Var<T>& out);

  /// Reverse sweep from any output, seeded with d(objective)/d(out) = seed. Each call ADDS d/d(node) to
  /// every node's gradient; call zero_grad() between runs that should not add up.
  void backward(const Var<T>& out, const Tensor<T>& seed);
  /// The same with the seed's entries in out's storage view (for a matrix output: a matrix of its shape).
  void backward(const Var<T>& out, const Matrix<T>& seed);

  /// Gradient of any node, input or intermediate: zeros of its shape when no backward reached it. UsageError for a
  /// constant and a node made from constants only (Node::needs_grad).
  const Matrix<T>& grad(const Var<T>& v);

  const Matrix<T>& value(const Var<T>& v) const {
    check(v, "value");
    return nodes_[v.index_].value;
  }
  const Shape& shape(const Var<T>& v) const {
    check(v, "shape");
    return nodes_[v.index_].shape;
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

  /// Forgets every gradient; values and the recorded graph stay (and the gradients' buffers, for reuse).
  void zero_grad() {
    swept_ = false;
    for (std::size_t i = 0; i < size_; ++i)
      nodes_[i].has_grad = false;
  }

  /// Forgets every node so the tape can record afresh; Vars of the old recording become invalid. The nodes'
  /// buffers stay for the next recording (see buffer()); release() frees them.
  void clear() { rewind(0); }

  /// Forgets the nodes recorded after the first n (their Vars become invalid) and every gradient; the first
  /// n nodes stay, values and Vars. Record the inputs once, then rewind(number of inputs) and record the
  /// graph again on each iteration: the inputs are not copied again, and the graph's buffers are reused as
  /// after clear().
  void rewind(std::size_t n);
  /// clear(), and frees every buffer the tape keeps.
  void release();

  /// What the tape holds: nodes, and bytes in values and in gradients (the scalars' own storage, including
  /// an MPFR number's limbs). VJPs read their operands from the parents' values, so nothing else is saved
  /// per node but small constants (mask flags, targets, dropout patterns).
  struct Stats {
    std::size_t nodes = 0, value_bytes = 0, grad_bytes = 0;
  };
  Stats stats() const;

  std::size_t size() const { return size_; }
  /// Node i. The reference (and those value(), grad() and label() return) stays valid while more nodes
  /// are recorded: nodes never move. clear(), rewind() and release() end it.
  const Node& node(std::size_t i) const {
    assert(i < size_);
    return nodes_[i];
  }
  /// The Var of node i of the current recording.
  Var<T> var(std::size_t i);
  /// The Var of the last node labelled `label` (UsageError when no node has that label).
  Var<T> find(std::string_view label);

  /// The label of node i, or "node i (Op)" when it has none.
  std::string node_name(std::size_t i) const;
  /// "node 7 'S' (MatMul, 3x3)", or "node 7 (MatMul, 3x3)" without a label.
  std::string node_summary(std::size_t i) const;

private:
  friend class Backprop<T>;

  /// A leaf (`leaf_op` is &input_op or &constant_op) holding the entries of `storage` with `shape`, copied.
  Var<T> leaf(const OpInfo* leaf_op, const Matrix<T>& storage, const Shape& shape, std::string&& label);
  /// A leaf; in anomaly mode it may hold -inf (a score masked by hand) but not NaN or +inf.
  Var<T> push_input(const OpInfo* leaf_op, Matrix<T>&& value, const Shape& shape, std::string&& label);

  /// A leaf's checks: at least one entry, `entries` of them for `shape`, sizes within Eigen's index range.
  void check_leaf(const OpInfo* leaf_op, Eigen::Index entries, const Shape& shape, const std::string& label) const;

  /// Appends a node, in the slot (and the parents' and label's storage) an earlier recording left.
  Var<T> push(const OpInfo* op, std::span<const Var<T>> parents, Matrix<T>&& value, Vjp&& vjp, Replay replay,
              std::string&& label);

  /// A Var may be used only with the tape that made it, and only in the recording that made it.
  void check(const Var<T>& v, std::string_view what) const {
    if (v.tape_ == nullptr)
      throw UsageError(std::string(what) + ": operand is a default-constructed Var, not on any tape");
    if (v.tape_ != this)
      throw UsageError(std::string(what) + ": operand " + v.tape_->safe_name(v) +
                       " belongs to another tape; all operands of an op must be on one tape");
    if (v.index_ >= size_ || v.generation_ != nodes_[v.index_].generation)
      throw UsageError(std::string(what) + ": operand node " + std::to_string(v.index_) +
                       " is from a recording that clear() or rewind() has discarded");
  }
  std::string safe_name(const Var<T>& v) const;

  const Matrix<T>& node_value(std::size_t i) const { return nodes_[i].value; }
  const Matrix<T>& sweep_adjoint(std::size_t i) const { return nodes_[i].adjoint; }
  std::size_t parent(std::size_t node, std::size_t k) const {
    assert(k < nodes_[node].parents.size());
    return nodes_[node].parents[k];
  }
  /// Whether the next contribution to node i's adjoint assigns: its first this sweep. The FAULT INJECTION hook:
  /// with TapeOptions::inject_overwrite_fault, or at TapeOptions::overwrite_fault_node, every contribution
  /// assigns, so earlier ones are lost.
  bool assigns(std::size_t i) const {
    const Node& n = nodes_[i];
    return !n.has_adjoint || options_.inject_overwrite_fault || i == options_.overwrite_fault_node;
  }
  /// After a contribution is written: node i holds an adjoint, and one more contribution (the fan-out audit
  /// reads Node::contributions). Not before, so a VJP that throws leaves no half-written adjoint marked held.
  void contributed(std::size_t i) {
    nodes_[i].has_adjoint = true;
    ++nodes_[i].contributions;
  }
  template <class Expr> void accumulate(std::size_t i, const Expr& contribution) {
    Node& n = nodes_[i];
    if (!n.needs_grad) return;
    assert(contribution.rows() == n.value.rows() && contribution.cols() == n.value.cols());
    // noalias: a contribution is made from the child's adjoint and the operands' values, never from this
    // node's own adjoint, so Eigen may evaluate a product straight into it (no temporary, no copy).
    if (assigns(i))
      n.adjoint.noalias() = contribution;
    else
      n.adjoint.noalias() += contribution;
    contributed(i);
  }
  template <class Fill> void accumulate_with(std::size_t i, Fill&& fill) {
    Node& n = nodes_[i];
    if (!n.needs_grad) return;
    if (assigns(i)) {
      n.adjoint.resize(n.value.rows(), n.value.cols());
      fill(n.adjoint);
    } else {
      scratch_.resize(n.value.rows(), n.value.cols());
      fill(scratch_);
      n.adjoint += scratch_;
    }
    contributed(i);
  }
  // A write that throws part way (Into::add) leaves the adjoint partly added and marked held: only a kernel's
  // allocation can throw there, and the sweep does not go on after an exception.
  template <class Write> void accumulate_in_place(std::size_t i, Write&& write) {
    Node& n = nodes_[i];
    if (!n.needs_grad) return;
    const Into into = assigns(i) ? Into::assign : Into::add;
    if (into == Into::assign) n.adjoint.resize(n.value.rows(), n.value.cols());
    assert(n.adjoint.rows() == n.value.rows() && n.adjoint.cols() == n.value.cols());
    write(n.adjoint, into);
    contributed(i);
  }

  /// The seed must have out's shape (in its storage view).
  void check_seed(const Var<T>& out, const Matrix<T>& seed) const;
  /// Before a sweep: the stale-gradient rule (TapeOptions::stale_gradients_are_errors), and every adjoint and
  /// audit counter reset.
  void begin_sweep(const Var<T>& out);
  /// After a sweep: each reached node's adjoint added into its gradient (which persists until zero_grad()).
  void merge_adjoints(std::size_t top);

  // Slots [0, size_) hold the current recording; the rest keep buffers for reuse. A deque: recording more
  // nodes never moves the ones recorded, so references to their values stay valid.
  std::deque<Node> nodes_;
  std::size_t size_ = 0;
  Matrix<T> scratch_; // accumulate_with's work matrix
  Matrix<T> work_;    // work(): ops' temporaries
  std::uint64_t generation_ = 0;
  TapeOptions options_;
  bool swept_ = false; // a backward ran since the last zero_grad() or clear()
};

// The members below are defined outside the class so that an explicit instantiation declaration holds for them
// (autodiff/instances.hpp): one compiled Tape<T> per engine type and its Dual<T> in our own builds.
template <Real T> Tape<T>::~Tape() = default;

template <Real T> Var<T> Tape<T>::input(const Matrix<T>& value, std::string label) {
  return leaf(&input_op, value, Shape{value.rows(), value.cols()}, std::move(label));
}

template <Real T> Var<T> Tape<T>::input(Matrix<T>&& value, std::string label) {
  const Shape shape{value.rows(), value.cols()};
  check_leaf(&input_op, value.size(), shape, label);
  return push_input(&input_op, std::move(value), shape, std::move(label));
}

template <Real T> Var<T> Tape<T>::input(const Tensor<T>& value, std::string label) {
  return leaf(&input_op, value.matrix(), value.shape(), std::move(label));
}

template <Real T> Var<T> Tape<T>::input(const Matrix<T>& storage, const Shape& shape, std::string label) {
  return leaf(&input_op, storage, shape, std::move(label));
}

template <Real T> Var<T> Tape<T>::constant(const Tensor<T>& value, std::string label) {
  return leaf(&constant_op, value.matrix(), value.shape(), std::move(label));
}

template <Real T> Var<T> Tape<T>::constant(const Matrix<T>& value, std::string label) {
  return leaf(&constant_op, value, Shape{value.rows(), value.cols()}, std::move(label));
}

template <Real T> Var<T> Tape<T>::constant(const Matrix<T>& storage, const Shape& shape, std::string label) {
  return leaf(&constant_op, storage, shape, std::move(label));
}

template <Real T>
Var<T> Tape<T>::leaf(const OpInfo* leaf_op, const Matrix<T>& storage, const Shape& shape, std::string&& label) {
  check_leaf(leaf_op, storage.size(), shape, label);
  Matrix<T> copy = buffer(shape);
  copy = storage.template reshaped<Eigen::RowMajor>(shape.rows(), shape.cols());
  return push_input(leaf_op, std::move(copy), shape, std::move(label));
}

template <Real T> void Tape<T>::set_input_shape(const Var<T>& v, const Shape& shape) {
  check(v, "set_input_shape");
  Node& n = nodes_[v.index_];
  if (!n.is_input()) throw UsageError("set_input_shape(" + v.name() + "): not an input");
  if (shape.numel() != n.shape.numel())
    throw ShapeError("set_input_shape(" + v.name() + "): it holds " + std::to_string(n.shape.numel()) + " entries (" +
                     shape_string(n.shape) + "), shape " + shape_string(shape) + " holds " +
                     std::to_string(shape.numel()));
  if (shape == n.shape) return; // already so: nothing changes, used or not
  for (std::size_t i = v.index_ + 1; i < size_; ++i)
    for (std::size_t p : nodes_[i].parents)
      if (p == v.index_)
        throw UsageError("set_input_shape(" + v.name() + "): " + node_name(i) + " already uses it as " +
                         shape_string(n.shape));
  n.shape = shape;
  n.value.resize(shape.rows(), shape.cols()); // as many entries: Eigen keeps them in place, row-major
  n.has_grad = false;
}

template <Real T> Var<T> Tape<T>::replay(std::size_t i, std::span<const Var<T>> operands) const {
  const Node& n = nodes_[i];
  if (operands.size() != n.parents.size())
    throw UsageError("replay: " + node_name(i) + " has " + std::to_string(n.parents.size()) + " operands, got " +
                     std::to_string(operands.size()));
  if (n.replay == nullptr)
    throw UsageError("replay: " + node_name(i) + " (" + std::string(n.op->node) + ") cannot be replayed");
  return n.replay(operands, n.params, {});
}

template <Real T> void Tape<T>::backward(const Var<T>& out) {
  check(out, "backward");
  const Shape& s = nodes_[out.index_].shape;
  if (s.numel() != 1)
    throw UsageError("backward(" + out.name() + "): output is " + shape_string(s) +
                     ", not one entry; pass a seed of that shape: backward(out, seed)");
  backward(out, Matrix<T>::Constant(1, 1, T(1)));
}

template <Real T> void Tape<T>::backward(const Var<T>& out, const Tensor<T>& seed) {
  check(out, "backward");
  const Shape& s = nodes_[out.index_].shape;
  if (!(seed.shape() == s))
    throw ShapeError("backward(" + out.name() + ", seed): " + out.name() + " is " + shape_string(s) +
                     " but the seed is " + shape_string(seed.shape()) + "; shapes must match");
  backward(out, seed.matrix());
}

// The sweep. Recording order is topological, so one pass from the output down visits every node after all of its
// consumers: its adjoint is complete when its own VJP runs.
template <Real T> void Tape<T>::backward(const Var<T>& out, const Matrix<T>& seed) {
  check(out, "backward");
  check_seed(out, seed);
  begin_sweep(out);
  const std::size_t top = out.index_;
  nodes_[top].adjoint = seed;
  nodes_[top].has_adjoint = true;
  if (options_.detect_anomaly) anomaly::check_adjoint(*this, top, top, true);
  for (std::size_t i = top + 1; i-- > 0;) {
    Node& n = nodes_[i];
    if (!n.has_adjoint || !n.vjp || !n.needs_grad) continue; // unreached, an input, or made from constants only
    Backprop<T> bp(*this, i);
    n.vjp(bp); // adds into the parents' adjoints (Backprop::accumulate)
    if (options_.detect_anomaly) anomaly::check_parents(*this, i);
  }
  merge_adjoints(top);
}

template <Real T> void Tape<T>::check_seed(const Var<T>& out, const Matrix<T>& seed) const {
  const Node& n = nodes_[out.index_];
  if (seed.rows() != n.value.rows() || seed.cols() != n.value.cols())
    throw ShapeError("backward(" + out.name() + ", seed): " + out.name() + " is " + shape_string(n.shape) +
                     (n.shape.is_matrix() ? "" : " (stored as " + shape_string(n.value.rows(), n.value.cols()) + ")") +
                     " but the seed is " + shape_string(seed.rows(), seed.cols()) + "; shapes must match");
}

template <Real T> void Tape<T>::begin_sweep(const Var<T>& out) {
  if (swept_) {
    const std::string message = "backward(" + out.name() +
                                "): the tape still holds gradients from an earlier backward and this one adds to "
                                "them (stale gradients); call zero_grad() first for fresh ones";
    if (options_.stale_gradients_are_errors) throw UsageError(message);
    spdlog::warn("tapegrad: {}", message);
  }
  swept_ = true;
  for (std::size_t i = 0; i < size_; ++i) {
    nodes_[i].contributions = 0;
    nodes_[i].has_adjoint = false; // in case an earlier sweep stopped at a throwing VJP
  }
}

template <Real T> void Tape<T>::merge_adjoints(std::size_t top) {
  for (std::size_t i = 0; i <= top; ++i) {
    Node& n = nodes_[i];
    if (!n.has_adjoint) continue;
    if (!n.has_grad)
      n.grad.swap(n.adjoint); // the old grad buffer serves as the next sweep's adjoint
    else
      n.grad += n.adjoint;
    n.has_grad = true;
    n.has_adjoint = false;
  }
}

template <Real T> const Matrix<T>& Tape<T>::grad(const Var<T>& v) {
  check(v, "grad");
  Node& n = nodes_[v.index_];
  if (!n.needs_grad)
    throw UsageError("grad(" + node_name(v.index_) + "): " +
                     (n.is_input() ? "a constant (Tape::constant)" : "made from constants (Tape::constant) only") +
                     "; no gradient is computed for it");
  if (!n.has_grad) {
    n.grad.setZero(n.value.rows(), n.value.cols());
    n.has_grad = true;
  }
  return n.grad;
}

template <Real T> void Tape<T>::rewind(std::size_t n) {
  if (n > size_)
    throw UsageError("rewind(" + std::to_string(n) + "): the tape has only " + std::to_string(size_) + " nodes");
  for (std::size_t i = 0; i < n; ++i) {
    nodes_[i].has_grad = false;
    nodes_[i].has_adjoint = false;
  }
  size_ = n;
  swept_ = false;
  ++generation_; // nodes recorded from now on; the n kept ones keep the generation their Vars hold
}

template <Real T> void Tape<T>::release() {
  clear();
  nodes_.clear();
  nodes_.shrink_to_fit();
  scratch_.resize(0, 0);
  work_.resize(0, 0);
}

template <Real T> typename Tape<T>::Stats Tape<T>::stats() const {
  Stats st;
  st.nodes = size_;
  for (std::size_t i = 0; i < size_; ++i) {
    const Node& n = nodes_[i];
    st.value_bytes += storage_bytes(n.value);
    if (n.has_grad) st.grad_bytes += storage_bytes(n.grad);
    if (n.has_adjoint) st.grad_bytes += storage_bytes(n.adjoint);
  }
  return st;
}

template <Real T> Var<T> Tape<T>::var(std::size_t i) {
  if (i >= size_) throw UsageError("var(" + std::to_string(i) + "): the tape has " + std::to_string(size_) + " nodes");
  return Var<T>(this, i, nodes_[i].generation);
}

template <Real T> Var<T> Tape<T>::find(std::string_view label) {
  for (std::size_t i = size_; i-- > 0;)
    if (nodes_[i].label == label) return Var<T>(this, i, nodes_[i].generation);
  throw UsageError("find(" + std::string(label) + "): no node of the tape is labelled '" + std::string(label) + "'");
}

template <Real T> std::string Tape<T>::node_name(std::size_t i) const {
  const Node& n = nodes_[i];
  return n.label.empty() ? "node " + std::to_string(i) + " (" + std::string(n.op->node) + ")" : n.label;
}

template <Real T> std::string Tape<T>::node_summary(std::size_t i) const {
  const Node& n = nodes_[i];
  return "node " + std::to_string(i) + (n.label.empty() ? "" : " '" + n.label + "'") + " (" + std::string(n.op->node) +
         ", " + shape_string(n.shape) + ")";
}

template <Real T>
Var<T> Tape<T>::push_input(const OpInfo* leaf_op, Matrix<T>&& value, const Shape& shape, std::string&& label) {
  const Var<T> v = push(leaf_op, {}, std::move(value), {}, nullptr, std::move(label));
  nodes_[v.index_].shape = shape;
  nodes_[v.index_].params = {};
  if (options_.detect_anomaly) anomaly::check_value(*this, v.index_);
  return v;
}

template <Real T> void Tape<T>::check_leaf(const OpInfo* leaf_op, Eigen::Index entries, const Shape& shape,
                                           const std::string& label) const {
  const auto what = [&] { return std::string(leaf_op->name) + "(" + label + ")"; };
  if (shape.numel() == 0)
    throw ShapeError(what() + ": empty (" + shape_string(shape) + "); every value needs at least one entry");
  if (entries != shape.numel())
    throw ShapeError(what() + ": shape " + shape_string(shape) + " holds " + std::to_string(shape.numel()) +
                     " entries but " + std::to_string(entries) + " were given");
  check_entries(shape.rows(), shape.cols(), what);
}

template <Real T> Var<T> Tape<T>::push(const OpInfo* op, std::span<const Var<T>> parents, Matrix<T>&& value, Vjp&& vjp,
                                       Replay replay, std::string&& label) {
  if (size_ == nodes_.size()) nodes_.emplace_back();
  Node& n = nodes_[size_];
  n.op = op;
  n.parents.clear();
  for (const Var<T>& p : parents)
    n.parents.push_back(p.index_);
  n.value.swap(value); // the slot's old buffer, if any, leaves with `value`
  n.vjp = std::move(vjp);
  n.replay = replay;
  n.label = std::move(label);
  n.contributions = 0;
  n.has_grad = false;
  n.has_adjoint = false;
  // A constant needs none; an input does; an op does when a parent does (or it has none: a value made from nothing).
  n.needs_grad = op != &constant_op && (op->input || parents.empty());
  for (const Var<T>& p : parents)
    n.needs_grad = n.needs_grad || nodes_[p.index_].needs_grad;
  n.generation = generation_;
  return Var<T>(this, size_++, generation_);
}

template <Real T> std::string Tape<T>::safe_name(const Var<T>& v) const {
  return v.index_ < size_ && v.generation_ == nodes_[v.index_].generation ? node_name(v.index_)
                                                                          : "node " + std::to_string(v.index_);
}

#define TAPEGRAD_TAPE_INSTANCE(prefix, T) prefix template class Tape<T>;
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_WITH_DUAL(TAPEGRAD_TAPE_INSTANCE, prefix, T)
#include "instances.hpp"
#undef TAPEGRAD_TAPE_INSTANCE

} // namespace tapegrad

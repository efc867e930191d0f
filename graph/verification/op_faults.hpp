#pragma once
// Classic slips in the built-in ops, on demand (what a fault is: op_fault_base.hpp). They live here, apart from
// ops/, so a normal run never pays for them: a fault is on only where a graph is recorded with it
// (FaultyFileGraph: one fault at one node of a graph file). This file holds the slips of matrix code (faults 11 to
// 20), tensor_op_faults.hpp those of tensor code (21 and up); OpFaults lists them all once, and `tapegrad bugs`
// and its tests read that list.

#include "../io/graph_build.hpp"
#include "op_fault_base.hpp"
#include "tensor_op_faults.hpp"

#include <array>
#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tapegrad {

/// add's VJP takes a broadcast bias's gradient from the first row instead of summing it over the rows
/// (burn#181): right for one row, wrong for a batch.
struct BiasGradientOneRowFault {
  using Op = AddOp;
  static constexpr OpFaultInfo fault{11, "broadcast bias gradient taken from row 0, not summed over the batch",
                                     &AddOp::info, "db = grad.row(0) instead of sum over rows of grad", "burn#181"};
  static constexpr OpInfo info = detail::faulty_op(AddOp::info, "Add (bias from row 0)", "a + b; db = grad.row(0)");
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>&) {
    const Matrix<T>&a = in[0].matrix(), &b = in[1].matrix();
    if ((a.rows() == 1) != (b.rows() == 1)) return {};
    return "no operand is broadcast over rows (" + shape_string(a.rows(), a.cols()) + " and " +
           shape_string(b.rows(), b.cols()) + ")";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<BiasGradientOneRowFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      for (std::size_t k = 0; k < 2; ++k) {
        const Matrix<T>&x = bp.input(k), &r = bp.result();
        if (x.rows() == 1 && r.rows() > 1) {
          const Matrix<T> row0 = bp.grad().row(0);
          if (x.cols() == 1 && r.cols() > 1)
            bp.accumulate(k, Matrix<T>::Constant(1, 1, row0.sum()));
          else
            bp.accumulate(k, row0);
        } else {
          accumulate_broadcast(bp, k, bp.grad());
        }
      }
    });
  }
};

/// mean's VJP divides by the number of columns instead of the number of entries each result entry averages
/// (cTensor#24).
struct MeanWrongCountFault {
  using Op = MeanOp;
  static constexpr OpFaultInfo fault{12, "mean's backward divided by the wrong count", &MeanOp::info,
                                     "da = grad / n (columns) instead of grad / N (entries averaged)", "cTensor#24"};
  static constexpr OpInfo info = detail::faulty_op(MeanOp::info, "Mean (wrong count)", "mean; da = grad / cols");
  /// The entries each result entry of mean(a) averages, for a matrix a.
  template <Real T> static Eigen::Index count(const Matrix<T>& a, const Params<T>& p) {
    const ShapeOperand s(a.rows(), a.cols());
    return a.size() / kept_shape("mean", s, p).numel();
  }
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>& p) {
    const Matrix<T>& a = in[0].matrix();
    if (count(a, p) != a.cols()) return {};
    return "each result entry averages " + std::to_string(count(a, p)) +
           " entries, as many as the operand has columns, so dividing by the columns is right here";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<MeanWrongCountFault>(in, p, std::move(label), [p](Backprop<T>& bp) {
      const Matrix<T>& a = bp.input(0);
      const T cols(static_cast<long>(a.cols()));
      const Shape kept = kept_shape("mean", ShapeOperand(a.rows(), a.cols()), p);
      const Matrix<T> g = bp.grad().template reshaped<Eigen::RowMajor>(kept.rows(), kept.cols());
      with_expanded(g, kept, Shape{a.rows(), a.cols()}, [&](const auto& e) { bp.accumulate(0, e / cols); });
    });
  }
};

/// layer_norm's VJP treats each row's mean and variance as constants: dx = g / s, the two terms through the
/// statistics dropped.
struct LayerNormConstantStatisticsFault {
  using Op = LayerNormOp;
  static constexpr OpFaultInfo fault{13, "layer_norm backward treating mean and variance as constants",
                                     &LayerNormOp::info, "dx = g / s instead of (g - mean(g) - y mean(g y)) / s",
                                     "a common hand-written layer_norm slip"};
  static constexpr OpInfo info =
      detail::faulty_op(LayerNormOp::info, "LayerNorm (constant statistics)", "layer_norm; dx = g / s");
  /// Visible wherever it applies: on a row of one entry the right dx is 0 and the slip's g / sqrt(eps). Written for
  /// the plain form (no weight or bias, the last dim): other nodes are left out, saying so.
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>& p) {
    if (in.size() > 1 || (p.has("normalized_shape") && p.integer_list("normalized_shape").size() > 1))
      return "the slip is written for layer_norm over the last dim without weight and bias";
    return {};
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    const T eps = p.number("eps");
    return detail::record_fault<LayerNormConstantStatisticsFault>(in, p, std::move(label), [eps](Backprop<T>& bp) {
      using W = detail::Wide<T>;
      const detail::RowStatistics<W> stats = detail::row_statistics<W>(bp.input(0), eps, true);
      Matrix<T> d = bp.grad();
      for (Eigen::Index i = 0; i < d.rows(); ++i)
        for (Eigen::Index j = 0; j < d.cols(); ++j)
          d(i, j) = detail::change<T>(W(detail::widen(d(i, j)) / stats.scale[static_cast<std::size_t>(i)]));
      bp.accumulate(0, d);
    });
  }
};

/// log_softmax's VJP without its softmax term: da = grad.
struct LogSoftmaxNoSoftmaxTermFault {
  using Op = LogSoftmaxOp;
  static constexpr OpFaultInfo fault{14, "log_softmax backward without its softmax term", &LogSoftmaxOp::info,
                                     "da = g instead of g - softmax(a) sum_k g_k", "a common hand-written slip"};
  static constexpr OpInfo info = detail::faulty_op(LogSoftmaxOp::info, "LogSoftmax (no softmax term)", "da = g");
  template <Real T> static std::string invisible(std::span<const Tensor<T>>, const Params<T>&) { return {}; }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<LogSoftmaxNoSoftmaxTermFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      Matrix<T> d = bp.grad();
      for (Eigen::Index e = 0; e < d.size(); ++e) // a -inf entry (masked) still carries nothing
        if (bp.result().data()[e] == -infinity<T>()) d.data()[e] = T(0);
      bp.accumulate(0, d);
    });
  }
};

/// sigmoid's VJP as s instead of s (1 - s).
struct SigmoidDerivativeAsSFault {
  using Op = SigmoidOp;
  static constexpr OpFaultInfo fault{15, "sigmoid backward as s instead of s (1 - s)", &SigmoidOp::info,
                                     "da = g s instead of g s (1 - s)", "a common hand-written slip"};
  static constexpr bool any_rank = true; ///< elementwise on the storage view (or adds nothing)
  static constexpr OpInfo info = detail::faulty_op(SigmoidOp::info, "Sigmoid (derivative s)", "da = g s");
  template <Real T> static std::string invisible(std::span<const Tensor<T>>, const Params<T>&) { return {}; }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<SigmoidDerivativeAsSFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      bp.accumulate(0, Matrix<T>(bp.grad().cwiseProduct(bp.result())));
    });
  }
};

/// relu's VJP passes the gradient where x <= 0 too.
struct ReluGradientEverywhereFault {
  using Op = ReluOp;
  static constexpr OpFaultInfo fault{16, "relu passing the gradient where x <= 0", &ReluOp::info,
                                     "da = g everywhere instead of g where x > 0", "a common hand-written slip"};
  static constexpr bool any_rank = true; ///< elementwise on the storage view (or adds nothing)
  static constexpr OpInfo info = detail::faulty_op(ReluOp::info, "Relu (passes x <= 0)", "da = g");
  /// Visible where an entry is < 0 (at 0 itself the kink guard takes over).
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>&) {
    return (in[0].matrix().array() < T(0)).any() ? std::string() : "no entry of its operand is below 0";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<ReluGradientEverywhereFault>(in, p, std::move(label),
                                                             [](Backprop<T>& bp) { bp.accumulate(0, bp.grad()); });
  }
};

/// gelu's VJP from the tanh approximation while the forward is the exact erf one: off by at most about 8.7e-4
/// absolute (relatively more only near gelu's stationary point, x about -0.75), below loose tolerances.
struct GeluTanhBackwardFault {
  using Op = GeluOp;
  static constexpr OpFaultInfo fault{
      17, "gelu backward from the tanh approximation under an exact-erf forward", &GeluOp::info,
      "da = g d/dx[x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))] instead of g (Phi(x) + x phi(x))",
      "frameworks with both gelu variants"};
  static constexpr bool any_rank = true; ///< elementwise on the storage view (or adds nothing)
  static constexpr OpInfo info = detail::faulty_op(GeluOp::info, "Gelu (tanh backward)", "da = g gelu_tanh'(x)");
  template <Real T> static std::string invisible(std::span<const Tensor<T>>, const Params<T>&) { return {}; }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<GeluTanhBackwardFault>(in, p, std::move(label), [](Backprop<T>& bp) {
      using std::sqrt;
      using std::tanh;
      const T c = sqrt(T(2) / pi<T>()), k = T(44715) / T(1000000); // 0.044715, the approximation's constant
      Matrix<T> d = bp.input(0);
      for (Eigen::Index e = 0; e < d.size(); ++e) {
        const T x = d.data()[e], t = tanh(T(c * (x + k * x * x * x)));
        d.data()[e] = T(bp.grad().data()[e] * (T(1) + t + x * (T(1) - t * t) * c * (T(1) + T(3) * k * x * x)) / T(2));
      }
      bp.accumulate(0, d);
    });
  }
};

/// dropout's VJP uses a mask drawn afresh (seed + 1) instead of the forward's (pytorch#193671).
struct DropoutFreshMaskFault {
  using Op = DropoutOp;
  static constexpr OpFaultInfo fault{18, "dropout VJP drawing a fresh mask", &DropoutOp::info,
                                     "da = g * mask(seed + 1) / (1 - p) instead of the forward's mask",
                                     "pytorch#193671"};
  static constexpr bool any_rank = true; ///< elementwise on the storage view (or adds nothing)
  static constexpr OpInfo info = detail::faulty_op(DropoutOp::info, "Dropout (fresh mask)", "da = g * new mask");
  template <Real T> static std::string invisible(std::span<const Tensor<T>>, const Params<T>& p) {
    return p.number("p") > T(0) ? std::string() : "p = 0: no entry is dropped";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    const DropoutMask fresh = dropout_mask(in[0].rows(), in[0].cols(), std::strtod(p.number_text("p").c_str(), nullptr),
                                           static_cast<std::uint64_t>(p.integer("seed")) + 1);
    const T factor = T(1) / (T(1) - p.number("p"));
    return detail::record_fault<DropoutFreshMaskFault>(in, p, std::move(label),
                                                       [keep = fresh.keep, factor](Backprop<T>& bp) {
                                                         Matrix<T> d = bp.grad();
                                                         for (Eigen::Index i = 0; i < d.rows(); ++i)
                                                           for (Eigen::Index j = 0; j < d.cols(); ++j)
                                                             d(i, j) = keep(i, j) ? T(d(i, j) * factor) : T(0);
                                                         bp.accumulate(0, d);
                                                       });
  }
};

/// A fused op whose VJP adds nothing: the silent zero gradient of a fused kernel with no backward
/// (candle#3613), here cross_entropy.
struct FusedSilentZeroFault {
  using Op = CrossEntropyOp;
  static constexpr OpFaultInfo fault{19, "fused op without a backward: a silent zero gradient", &CrossEntropyOp::info,
                                     "the VJP adds nothing (the logits' gradient stays 0)", "candle#3613"};
  static constexpr bool any_rank = true; ///< elementwise on the storage view (or adds nothing)
  static constexpr OpInfo info = detail::faulty_op(CrossEntropyOp::info, "CrossEntropy (no VJP)", "no VJP");
  template <Real T> static std::string invisible(std::span<const Tensor<T>>, const Params<T>&) { return {}; }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    return detail::record_fault<FusedSilentZeroFault>(in, p, std::move(label), [](Backprop<T>&) {});
  }
};

/// A naive softmax, exp(x - max) / sum, with no rule for a row that is entirely -inf: there max is -inf, x - max
/// is NaN, and the row is NaN; a graph that then drops that row still sends 0 * NaN = NaN into the weights the
/// row shares (pytorch#41508).
struct NaiveMaskedSoftmaxFault {
  using Op = SoftmaxRowsOp;
  static constexpr OpFaultInfo fault{
      20, "naive softmax: a fully masked row's NaN reaches shared weights", &SoftmaxRowsOp::info,
      "exp(x - max) / sum on a row of -inf (NaN) instead of zeros with zero gradient", "pytorch#41508"};
  static constexpr OpInfo info =
      detail::faulty_op(SoftmaxRowsOp::info, "SoftmaxRows (naive)", "exp(x - max) / sum, NaN on a masked row");
  /// Visible where a row is entirely -inf (elsewhere it is the right softmax).
  template <Real T> static std::string invisible(std::span<const Tensor<T>> in, const Params<T>&) {
    const Matrix<T>& a = in[0].matrix();
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      if ((a.row(i).array() == -infinity<T>()).all()) return {};
    return "no row of its operand is entirely -inf (there it is the right softmax)";
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
    Tape<T>& tape = common_tape(info, in);
    using std::exp;
    const Matrix<T>& x = in[0].value();
    Matrix<T> a(x.rows(), x.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const T mx = x.row(i).maxCoeff();
      T total(0);
      for (Eigen::Index j = 0; j < x.cols(); ++j)
        total += a(i, j) = exp(T(x(i, j) - mx));
      a.row(i) /= total;
    }
    return tape.template record<NaiveMaskedSoftmaxFault>(
        in, std::move(a),
        [](Backprop<T>& bp) { // the textbook VJP, A * (g - rowsum(A * g)), without the masked-row rule either
          const Matrix<T>& A = bp.result();
          const Matrix<T> Ag = A.cwiseProduct(bp.grad());
          bp.accumulate(0, Matrix<T>(Ag - A.cwiseProduct(Ag.rowwise().sum().replicate(1, A.cols()))));
        },
        std::move(label), p);
  }
};

/// Every op fault, in `tapegrad bugs` order.
template <class... Faults> struct OpFaultList {
  static constexpr std::size_t size = sizeof...(Faults);
  static constexpr std::array<const OpFaultInfo*, size> infos{&Faults::fault...};
  template <class F> static void for_each(F&& f) { (f.template operator()<Faults>(), ...); }
  /// f.template operator()<Fault>() for the fault numbered `id` (one of the list's).
  template <class R, class F> static R visit(int id, F&& f) {
    R result{};
    [[maybe_unused]] const bool found =
        ((id == Faults::fault.id && (result = f.template operator()<Faults>(), true)) || ...);
    assert(found && "visit: the fault is one of the list's");
    return result;
  }
  static const OpFaultInfo* find(int id) {
    for (const OpFaultInfo* info : infos)
      if (info->id == id) return info;
    return nullptr;
  }
};
using OpFaults = OpFaultList<BiasGradientOneRowFault, MeanWrongCountFault, LayerNormConstantStatisticsFault,
                             LogSoftmaxNoSoftmaxTermFault, SigmoidDerivativeAsSFault, ReluGradientEverywhereFault,
                             GeluTanhBackwardFault, DropoutFreshMaskFault, FusedSilentZeroFault,
                             NaiveMaskedSoftmaxFault, EmbeddingWriteFault, BiasGradientFirstBatchFault,
                             ExpandWriteFault, PermuteNotInvertedFault, SoftmaxWrongDimFault, TransposeAsReshapeFault,
                             MatMulNoTransposeFault, TanhDerivativeFault, MulOwnOperandFault>;

/// Where a fault can be injected into a graph: at node `node` (0-based among the nodes, named `name`), fault
/// `fault`; `invisible` says why the slip changes nothing there at the graph's point, and is empty when it can.
struct FaultSite {
  const OpFaultInfo* fault;
  std::size_t node;
  std::string name;
  std::string invisible;
};

/// Every (op fault, node) of `graph` where the fault's op is the node's, in node order and, per node, in OpFaults
/// order, each with the fault's invisible(): why its slip changes nothing at the graph's point (no bias broadcast
/// over rows, no entry of relu's operand below 0, no row of -inf for the naive softmax, a node made from real
/// constants only, ...), or empty.
template <Real T> std::vector<FaultSite> fault_sites(const FileGraph<T>& graph) {
  Tape<T> tape;
  const std::vector<Var<T>> all = graph.record(tape, graph.record_inputs(tape));
  std::vector<FaultSite> sites;
  for (std::size_t k = 0; k < graph.spec().nodes.size(); ++k) {
    const NodeSpec& n = graph.spec().nodes[k];
    std::vector<Tensor<T>> operands;
    std::vector<Shape> shapes;
    for (const std::string& arg : n.args) {
      operands.push_back(all[graph.index_of(arg)].tensor());
      shapes.push_back(all[graph.index_of(arg)].shape());
    }
    const bool has_gradient = tape.node(all[graph.index_of(n.name)].index()).needs_grad;
    OpFaults::for_each([&]<class F>() {
      if (F::fault.op != n.info) return;
      if (!has_gradient) { // its VJP never runs
        sites.push_back({&F::fault, k, n.name, "it is made from real constants only, so no gradient flows through it"});
        return;
      }
      std::string why = detail::refusal<F>(shapes, n.args);
      if (why.empty()) why = F::invisible(std::span<const Tensor<T>>(operands), graph.node_params(k));
      sites.push_back({&F::fault, k, n.name, std::move(why)});
    });
  }
  return sites;
}

/// The inputs and nodes of a graph file that more than one node the output depends on reads (an operand given
/// twice counts twice) and that have a gradient (a node made from real constants only has none), as (index among
/// graph.record()'s values, which is the tape index; name), in file order: where the overwrite fault
/// (TapeOptions::overwrite_fault_node) can show.
template <Real T> std::vector<std::pair<std::size_t, std::string>> fan_out_values(const FileGraph<T>& graph) {
  const GraphSpec& spec = graph.spec();
  // Only consumers the output depends on count: a dead one adds nothing to any gradient.
  std::set<std::string> live{spec.output};
  for (auto n = spec.nodes.rbegin(); n != spec.nodes.rend(); ++n)
    if (live.count(n->name))
      for (const std::string& a : n->args)
        live.insert(a);
  std::map<std::string, int> consumers;
  for (const NodeSpec& n : spec.nodes)
    if (live.count(n.name))
      for (const std::string& a : n.args)
        ++consumers[a];
  Tape<T> tape;
  const std::vector<Var<T>> all = graph.record(tape, graph.record_inputs(tape));
  std::vector<std::pair<std::size_t, std::string>> out;
  for (const auto& input : spec.inputs)
    if (consumers[input.first] > 1) out.emplace_back(graph.index_of(input.first), input.first);
  for (const NodeSpec& n : spec.nodes) {
    const std::size_t i = graph.index_of(n.name);
    if (consumers[n.name] > 1 && tape.node(all[i].index()).needs_grad) out.emplace_back(i, n.name);
  }
  return out;
}

/// Whether `id` numbers an op fault (11 and up) rather than one of the attention's (graph/verification/faults.hpp).
inline bool is_op_fault(int id) { return OpFaults::find(id) != nullptr; }

/// A graph file's graph with op fault `fault_id` at node `node` (0-based among the nodes, which must be of the
/// fault's op): a graph function for the checker, like FileGraph itself. Refers to `graph`.
template <Real T> class FaultyFileGraph {
public:
  FaultyFileGraph(const FileGraph<T>&& graph, std::size_t node, int fault_id) = delete; // it must outlive this
  FaultyFileGraph(const FileGraph<T>& graph, std::size_t node, int fault_id)
      : graph_(&graph), node_(node), fault_(fault_id) {
    const OpFaultInfo* f = OpFaults::find(fault_id);
    if (f == nullptr) throw UsageError("fault " + std::to_string(fault_id) + " is not an op fault");
    if (node >= graph.spec().nodes.size() || graph.spec().nodes[node].info != f->op)
      throw UsageError("fault " + std::to_string(fault_id) + " (" + std::string(f->name) + ") is for " +
                       std::string(f->op->name) + " nodes; node " + std::to_string(node) + " of " + graph.spec().file +
                       " is not one");
  }
  template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& in) const {
    return graph_->output_of(graph_->record_with(tape, in, *this));
  }
  /// FileGraph::record_with's hook: node `k` recorded with the fault, every other node as the file says.
  template <Real U> std::optional<Var<U>> operator()(std::size_t k, std::span<const Var<U>> a, const Params<U>& p,
                                                     const std::string& name) const {
    if (k != node_) return std::nullopt;
    return OpFaults::visit<Var<U>>(fault_, [&]<class F>() { return F::template apply<U>(a, p, name); });
  }

private:
  const FileGraph<T>* graph_;
  std::size_t node_;
  int fault_;
};

} // namespace tapegrad

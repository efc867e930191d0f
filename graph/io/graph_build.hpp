#pragma once
// Graph files onto a tape: the parsed GraphSpec, its decimals rounded once into T, each node recorded by
// its op's own apply (found through its descriptor in BuiltinOps: no op is named here).
// FileGraph<T> is also a graph function for the checker: it records the same graph on Tape<U> for the
// reference precision or dual numbers, with its constants (scale factors, eps) rounded to T first and
// then converted exactly, so every precision sees the same function.

#include "../../autodiff/dual.hpp"
#include "../../ops/ops.hpp"
#include "graph_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tapegrad {

/// x of type T as a U that holds T exactly (a wider type, or Dual<T>, or Dual<Dual<T>>, with derivatives 0).
template <Real U, Real T> U lift(const T& x) {
  if constexpr (std::same_as<U, Dual<T>>)
    return U(x);
  else if constexpr (is_dual<U>)
    return U(lift<decltype(U::val)>(x));
  else
    return exact_convert<U>(x);
}

template <Real T> Matrix<T> from_text(const MatrixText& m) {
  Matrix<T> out(m.rows, m.cols);
  for (long i = 0; i < m.rows; ++i)
    for (long j = 0; j < m.cols; ++j)
      out(i, j) = from_decimal<T>(m.entries[static_cast<std::size_t>(i * m.cols + j)]);
  return out;
}

/// A node's parameters in T: numbers rounded once from their exact decimal text.
template <Real T> Params<T> params_of(const NodeSpec& n) {
  Params<T> p;
  for (const ParamText& t : n.params)
    switch (t.type) {
    case ParamType::number:
      p.set(t.name, Number<T>{from_decimal<T>(t.number), t.number});
      break;
    case ParamType::integer:
      p.set(t.name, t.integer);
      break;
    case ParamType::indices:
      p.set(t.name, t.indices);
      break;
    case ParamType::flags:
      p.set(t.name, t.flags);
      break;
    }
  return p;
}

template <Real T> class FileGraph {
public:
  explicit FileGraph(GraphSpec spec) : spec_(std::move(spec)) {
    for (const auto& [name, text] : spec_.inputs) {
      names_.push_back(name);
      inputs_.push_back(from_text<T>(text));
    }
    for (const NodeSpec& n : spec_.nodes)
      params_.push_back(params_of<T>(n));
  }

  const GraphSpec& spec() const { return spec_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Matrix<T>>& inputs() const { return inputs_; }
  /// Node k's parameters (0-based among the nodes), in T.
  const Params<T>& node_params(std::size_t k) const { return params_.at(k); }
  /// The file's inputs as inputs of `tape`, labelled with their names, in file order: what record() takes.
  std::vector<Var<T>> record_inputs(Tape<T>& tape) const {
    std::vector<Var<T>> in;
    for (std::size_t k = 0; k < inputs_.size(); ++k)
      in.push_back(tape.input(inputs_[k], names_[k]));
    return in;
  }

  /// Records the nodes on `tape` after the inputs `in` (in file order), every node or only the first `nodes`;
  /// returns the Vars of inputs and recorded nodes in file order. Errors name the file and the node.
  template <Real U> std::vector<Var<U>> record(Tape<U>& tape, const std::vector<Var<U>>& in,
                                               std::size_t nodes = std::numeric_limits<std::size_t>::max()) const {
    return record_with(tape, in, NoHook{}, nodes);
  }

  /// record() with `hook(k, operands, params, name)` asked first at each node k: a Var it returns is that node
  /// (recorded by the hook on the same tape), std::nullopt leaves the node to its op. Fault injection
  /// (graph/verification/op_faults.hpp) records one node with a deliberately wrong op this way.
  template <Real U, class Hook>
  std::vector<Var<U>> record_with(Tape<U>&, const std::vector<Var<U>>& in, const Hook& hook,
                                  std::size_t nodes = std::numeric_limits<std::size_t>::max()) const {
    std::map<std::string, Var<U>> vars;
    std::vector<Var<U>> all = in;
    for (std::size_t k = 0; k < in.size(); ++k)
      vars[names_[k]] = in[k];
    for (std::size_t k = 0; k < std::min(nodes, spec_.nodes.size()); ++k) {
      const NodeSpec& n = spec_.nodes[k];
      std::vector<Var<U>> a;
      for (const std::string& name : n.args)
        a.push_back(vars.at(name));
      try {
        const Params<U> p = params_[k].template converted<U>([](const T& x) { return lift<U>(x); });
        if (std::optional<Var<U>> v = hook(k, std::span<const Var<U>>(a), p, n.name))
          vars[n.name] = *v;
        else
          vars[n.name] = BuiltinOps::visit<Var<U>>(
              n.info, [&]<class Op>() { return Op::template apply<U>(std::span<const Var<U>>(a), p, n.name); });
      } catch (const GraphFileError&) {
        throw;
      } catch (const DomainError& e) {
        // Still a DomainError, so that the checker's differences can take a point outside an op's domain as a
        // NaN reference there (outside_domain_is_nan) rather than as a bad file.
        throw DomainError(where(n) + e.what());
      } catch (const Error& e) {
        fail(n, e.what());
      }
      all.push_back(vars[n.name]);
    }
    return all;
  }

  /// The checker's view: the output, which must be 1x1.
  template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& in) const {
    const std::vector<Var<U>> all = record(tape, in);
    return output_of(all);
  }

  /// The graph function whose output is node `k` (0-based among the nodes, in file order) whatever its shape:
  /// it records the nodes up to k only. A Jacobian's view of the graph (check_jacobian); it refers to this graph.
  class NodeFunction {
  public:
    NodeFunction(const FileGraph& graph, std::size_t k) : graph_(&graph), k_(k) {}
    template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& in) const {
      return graph_->record(tape, in, k_ + 1).back();
    }

  private:
    const FileGraph* graph_;
    std::size_t k_;
  };
  /// The node named `name` as a graph function, which must not outlive this graph (so not of a temporary one);
  /// GraphFileError when it is not a node (an input, or no name).
  NodeFunction node_function(const std::string& name) const&& = delete;
  NodeFunction node_function(const std::string& name) const& {
    const std::size_t k = index_of(name);
    if (k < names_.size())
      throw GraphFileError(spec_.file + ": '" + name + "' is an input, not a node (a Jacobian is taken of a node)");
    return NodeFunction(*this, k - names_.size());
  }

  /// The output among the Vars that record() returned; GraphFileError unless it is 1x1.
  template <Real U> Var<U> output_of(const std::vector<Var<U>>& all) const {
    const Var<U>& out = all[index_of(spec_.output)];
    if (out.rows() != 1 || out.cols() != 1)
      throw GraphFileError(spec_.file + ": output: '" + spec_.output + "' is " + shape_string(out.rows(), out.cols()) +
                           "; the output must be 1x1 (take its sum)");
    return out;
  }

  /// The same graph in U (which holds every T exactly: a wider type, or MPFR at enough digits, made now): its
  /// inputs and number parameters are this graph's values in T, converted exactly, each number keeping its
  /// decimal text (dropout draws its mask from it, so the mask is the same). A reference built from it computes
  /// at the engine's point with the engine's constants, not at the file's decimals rounded more finely.
  template <Real U> FileGraph<U> lifted() const {
    std::vector<Matrix<U>> inputs;
    for (const Matrix<T>& m : inputs_)
      inputs.push_back(m.unaryExpr([](const T& x) { return lift<U>(x); }));
    std::vector<Params<U>> params;
    for (const Params<T>& p : params_)
      params.push_back(p.template converted<U>([](const T& x) { return lift<U>(x); }));
    return FileGraph<U>(spec_, std::move(inputs), std::move(params));
  }

  /// Position of a name among inputs then nodes.
  std::size_t index_of(const std::string& name) const {
    for (std::size_t k = 0; k < names_.size(); ++k)
      if (names_[k] == name) return k;
    for (std::size_t k = 0; k < spec_.nodes.size(); ++k)
      if (spec_.nodes[k].name == name) return names_.size() + k;
    throw GraphFileError(spec_.file + ": '" + name + "' is not an input or a node");
  }

private:
  struct NoHook {
    template <Real U>
    std::optional<Var<U>> operator()(std::size_t, std::span<const Var<U>>, const Params<U>&, const std::string&) const {
      return std::nullopt;
    }
  };
  template <Real> friend class FileGraph;
  /// The graph with its values given, one per input and per node of `spec` (lifted()).
  FileGraph(GraphSpec spec, std::vector<Matrix<T>> inputs, std::vector<Params<T>> params)
      : spec_(std::move(spec)), inputs_(std::move(inputs)), params_(std::move(params)) {
    for (const auto& input : spec_.inputs)
      names_.push_back(input.first);
  }

  std::string where(const NodeSpec& n) const { return spec_.file + ": node '" + n.name + "' (" + n.op + "): "; }
  [[noreturn]] void fail(const NodeSpec& n, const std::string& problem) const {
    throw GraphFileError(where(n) + problem);
  }

  GraphSpec spec_;
  std::vector<std::string> names_;
  std::vector<Matrix<T>> inputs_;
  std::vector<Params<T>> params_; ///< per node, in T
};

} // namespace tapegrad

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

/// The entries of a tensor as written, each rounded once into T, in its storage view.
template <Real T> Matrix<T> from_text(const TensorText& t) {
  Matrix<T> out(t.shape.rows(), t.shape.cols());
  for (Eigen::Index e = 0; e < out.size(); ++e)
    out.data()[e] = from_decimal<T>(t.entries[static_cast<std::size_t>(e)]);
  return out;
}

/// The int and bool constants of a graph file, by name, as the nodes that take them keep them (bools as 1 and 0).
using IntConstants = std::map<std::string, std::shared_ptr<const Tensor<long>>>;
inline IntConstants int_constants_of(const GraphSpec& spec) {
  IntConstants out;
  for (const ConstantSpec& c : spec.constants) {
    if (c.dtype == ConstantSpec::Dtype::real) continue;
    Tensor<long> t = Tensor<long>::zeros(c.value.shape);
    for (Eigen::Index e = 0; e < t.numel(); ++e) {
      const std::string& text = c.value.entries[static_cast<std::size_t>(e)];
      t[e] = c.dtype == ConstantSpec::Dtype::boolean ? (text == "true" ? 1 : 0) : std::stol(text);
    }
    out.emplace(c.name, std::make_shared<const Tensor<long>>(std::move(t)));
  }
  return out;
}

/// A node's parameters in T: numbers rounded once from their exact decimal text; its int and bool constant operands.
template <Real T> Params<T> params_of(const NodeSpec& n, const IntConstants& constants) {
  Params<T> p;
  for (const auto& [param, name] : n.constant_args)
    p.set(param, constants.at(name));
  for (const ParamText& t : n.params)
    switch (t.type) {
    case ParamType::constant: // given among the args (NodeSpec::constant_args), never as a key
      break;
    case ParamType::number:
      p.set(t.name, Number<T>{from_decimal<T>(t.number), t.number});
      break;
    case ParamType::integer:
      p.set(t.name, t.integer);
      break;
    case ParamType::indices:
    case ParamType::dims:
    case ParamType::integer_list:
      p.set(t.name, t.indices);
      break;
    case ParamType::boolean:
      p.set(t.name, t.boolean);
      break;
    case ParamType::choice:
      p.set(t.name, Choice{t.choice});
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
      shapes_.push_back(text.shape);
      inputs_.push_back(from_text<T>(text));
    }
    for (const ConstantSpec& c : spec_.constants)
      if (c.dtype == ConstantSpec::Dtype::real) {
        constant_names_.push_back(c.name);
        constant_shapes_.push_back(c.value.shape);
        constants_.push_back(from_text<T>(c.value));
      }
    const IntConstants ints = int_constants_of(spec_);
    for (const NodeSpec& n : spec_.nodes)
      params_.push_back(params_of<T>(n, ints));
  }

  const GraphSpec& spec() const { return spec_; }
  const std::vector<std::string>& names() const { return names_; }
  /// The inputs' entries in their storage views (a matrix input is itself), and their shapes.
  const std::vector<Matrix<T>>& inputs() const { return inputs_; }
  const std::vector<Shape>& shapes() const { return shapes_; }
  /// The real constants' names, in file order: record() records them after the inputs, as leaves no gradient is
  /// asked of (int and bool constants ride on the nodes that take them).
  const std::vector<std::string>& constant_names() const { return constant_names_; }
  /// Node k's parameters (0-based among the nodes), in T.
  const Params<T>& node_params(std::size_t k) const { return params_.at(k); }
  /// The file's inputs as inputs of `tape`, labelled with their names, in file order: what record() takes.
  std::vector<Var<T>> record_inputs(Tape<T>& tape) const {
    std::vector<Var<T>> in;
    for (std::size_t k = 0; k < inputs_.size(); ++k)
      in.push_back(tape.input(inputs_[k], shapes_[k], names_[k]));
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
  std::vector<Var<U>> record_with(Tape<U>& tape, const std::vector<Var<U>>& in, const Hook& hook,
                                  std::size_t nodes = std::numeric_limits<std::size_t>::max()) const {
    std::map<std::string, Var<U>> vars;
    std::vector<Var<U>> all = in;
    for (std::size_t k = 0; k < in.size(); ++k) {
      // The checker hands each input over in its storage view, as a matrix: the file says its shape.
      if (!(in[k].shape() == shapes_[k])) tape.set_input_shape(in[k], shapes_[k]);
      vars[names_[k]] = in[k];
    }
    for (std::size_t j = 0; j < constants_.size(); ++j) { // real constants: leaves no gradient is asked of
      const Var<U> c = tape.constant(constants_[j].unaryExpr([](const T& x) { return lift<U>(x); }),
                                     constant_shapes_[j], constant_names_[j]);
      vars[constant_names_[j]] = c;
      all.push_back(c);
    }
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

  /// The checker's view: the output, which must hold one entry.
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
    if (k < names_.size() + constant_names_.size())
      throw GraphFileError(spec_.file + ": '" + name + "' is " + (k < names_.size() ? "an input" : "a constant") +
                           ", not a node (a Jacobian is taken of a node)");
    return NodeFunction(*this, k - names_.size() - constant_names_.size());
  }

  /// The output among the Vars that record() returned; GraphFileError unless it holds one entry (rank 0, or
  /// every size 1).
  template <Real U> Var<U> output_of(const std::vector<Var<U>>& all) const {
    const Var<U>& out = all[index_of(spec_.output)];
    if (out.shape().numel() != 1)
      throw GraphFileError(spec_.file + ": output: '" + spec_.output + "' is " + shape_string(out.shape()) +
                           "; the output must hold one entry (take its sum)");
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
    std::vector<Matrix<U>> constants;
    for (const Matrix<T>& m : constants_)
      constants.push_back(m.unaryExpr([](const T& x) { return lift<U>(x); }));
    return FileGraph<U>(spec_, std::move(inputs), shapes_, std::move(constants), std::move(params));
  }

  /// Position of a name among inputs, then real constants, then nodes: its place in what record() returns.
  std::size_t index_of(const std::string& name) const {
    for (std::size_t k = 0; k < names_.size(); ++k)
      if (names_[k] == name) return k;
    for (std::size_t k = 0; k < constant_names_.size(); ++k)
      if (constant_names_[k] == name) return names_.size() + k;
    for (std::size_t k = 0; k < spec_.nodes.size(); ++k)
      if (spec_.nodes[k].name == name) return names_.size() + constant_names_.size() + k;
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
  FileGraph(GraphSpec spec, std::vector<Matrix<T>> inputs, std::vector<Shape> shapes, std::vector<Matrix<T>> constants,
            std::vector<Params<T>> params)
      : spec_(std::move(spec)), shapes_(std::move(shapes)), inputs_(std::move(inputs)),
        constants_(std::move(constants)), params_(std::move(params)) {
    for (const auto& input : spec_.inputs)
      names_.push_back(input.first);
    for (const ConstantSpec& c : spec_.constants)
      if (c.dtype == ConstantSpec::Dtype::real) {
        constant_names_.push_back(c.name);
        constant_shapes_.push_back(c.value.shape);
      }
  }

  std::string where(const NodeSpec& n) const { return spec_.file + ": node '" + n.name + "' (" + n.op + "): "; }
  [[noreturn]] void fail(const NodeSpec& n, const std::string& problem) const {
    throw GraphFileError(where(n) + problem);
  }

  GraphSpec spec_;
  std::vector<std::string> names_;
  std::vector<Shape> shapes_;
  std::vector<Matrix<T>> inputs_;
  std::vector<std::string> constant_names_; ///< the real constants
  std::vector<Shape> constant_shapes_;
  std::vector<Matrix<T>> constants_;
  std::vector<Params<T>> params_; ///< per node, in T
};

} // namespace tapegrad

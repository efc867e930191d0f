#pragma once
// Graph files onto a tape: the parsed GraphSpec, its decimals rounded once into T, recorded with ops/.
// FileGraph<T> is also a graph function for the checker: it records the same graph on Tape<U> for the
// reference precision or dual numbers, with its constants (scale factors) rounded to T first and then
// converted exactly, so every precision sees the same function.

#include "../autodiff/dual.hpp"
#include "../ops/ops.hpp"
#include "graph_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace tapegrad {

/// The exact decimal `text` (as the format allows it) rounded once to T.
template <Real T> T from_decimal(const std::string& text) {
  const std::string s = !text.empty() && text[0] == '+' ? text.substr(1) : text;
  if (s == "inf") return infinity<T>();
  if (s == "-inf") return -infinity<T>();
  if (s == "nan") return std::numeric_limits<T>::quiet_NaN();
  if constexpr (std::same_as<T, float>)
    return std::strtof(s.c_str(), nullptr);
  else if constexpr (std::same_as<T, double>)
    return std::strtod(s.c_str(), nullptr);
  else if constexpr (std::same_as<T, long double>)
    return std::strtold(s.c_str(), nullptr);
  else
    return T(s); // Boost.Multiprecision: correctly rounded from the decimal string
}

/// x of type T as a U that holds T exactly (a wider type, or Dual<T> with derivative 0).
template <Real U, Real T> U lift(const T& x) {
  if constexpr (std::same_as<U, Dual<T>>)
    return U(x);
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

template <Real T> class FileGraph {
public:
  explicit FileGraph(GraphSpec spec) : spec_(std::move(spec)) {
    for (const auto& [name, text] : spec_.inputs) {
      names_.push_back(name);
      inputs_.push_back(from_text<T>(text));
    }
    for (const NodeSpec& n : spec_.nodes)
      factors_.push_back(n.factor ? from_decimal<T>(*n.factor) : T(1));
  }

  const GraphSpec& spec() const { return spec_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Matrix<T>>& inputs() const { return inputs_; }

  /// Records every node on `tape` after the inputs `in` (in file order); returns the Vars of inputs and
  /// nodes in file order. Errors name the file and the node.
  template <Real U> std::vector<Var<U>> record(Tape<U>&, const std::vector<Var<U>>& in) const {
    std::map<std::string, Var<U>> vars;
    std::vector<Var<U>> all = in;
    for (std::size_t k = 0; k < in.size(); ++k)
      vars[names_[k]] = in[k];
    for (std::size_t k = 0; k < spec_.nodes.size(); ++k) {
      const NodeSpec& n = spec_.nodes[k];
      std::vector<Var<U>> a;
      for (const std::string& name : n.args)
        a.push_back(vars.at(name));
      try {
        vars[n.name] = apply<U>(n, a, factors_[k]);
      } catch (const GraphFileError&) {
        throw;
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

  /// The output among the Vars that record() returned; GraphFileError unless it is 1x1.
  template <Real U> Var<U> output_of(const std::vector<Var<U>>& all) const {
    const Var<U>& out = all[index_of(spec_.output)];
    if (out.rows() != 1 || out.cols() != 1)
      throw GraphFileError(spec_.file + ": output: '" + spec_.output + "' is " + shape_string(out.rows(), out.cols()) +
                           "; the output must be 1x1 (take its sum)");
    return out;
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
  [[noreturn]] void fail(const NodeSpec& n, const std::string& problem) const {
    throw GraphFileError(spec_.file + ": node '" + n.name + "' (" + n.op + "): " + problem);
  }

  template <Real U> Var<U> apply(const NodeSpec& n, const std::vector<Var<U>>& a, const T& factor) const {
    const std::string& op = n.op;
    if (op == "matmul") return matmul(a[0], a[1], n.name);
    if (op == "transpose") return transpose(a[0], n.name);
    if (op == "scale") return scale(a[0], lift<U>(factor), n.name);
    if (op == "softmax") return softmax_rows(a[0], n.name);
    if (op == "sum") return sum(a[0], n.name);
    if (op == "add") return add(a[0], a[1], n.name);
    if (op == "sub") return sub(a[0], a[1], n.name);
    if (op == "mul") return hadamard(a[0], a[1], n.name);
    if (op == "exp") return exp(a[0], n.name);
    if (op == "causal_mask") return causal_mask(a[0], n.offset, n.name);
    if (op == "padding_mask") return padding_mask(a[0], n.keys, n.name);
    if (op == "slice_rows") return slice_rows(a[0], n.begin, n.count, n.name);
    if (op == "slice_cols") return slice_cols(a[0], n.begin, n.count, n.name);
    if (op == "concat_cols") return concat_cols(a, n.name);
    if (op == "cross_entropy") return cross_entropy(a[0], n.targets, n.name);
    if (op == "log") {
      const Matrix<U>& x = a[0].value();
      for (Eigen::Index i = 0; i < x.rows(); ++i)
        for (Eigen::Index j = 0; j < x.cols(); ++j)
          if (!(x(i, j) > U(0)))
            fail(n, "entry (" + std::to_string(i) + ", " + std::to_string(j) + ") of '" + n.args[0] + "' is " +
                        to_string(x(i, j), 6) + "; log needs entries > 0");
      return log(a[0], n.name);
    }
    fail(n, "unknown op"); // parse_graph admits only the ops above
  }

  GraphSpec spec_;
  std::vector<std::string> names_;
  std::vector<Matrix<T>> inputs_;
  std::vector<T> factors_;
};

} // namespace tapegrad

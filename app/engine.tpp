#pragma once
// Definitions of the engine-precision work; included once per engine type by engine_<type>.cpp.
#include "dot_writer.hpp"
#include "engine.hpp"

#include <tapegrad/autodiff/check/hessian.hpp>
#include <tapegrad/autodiff/check/jacobian.hpp>
#include <tapegrad/autodiff/print.hpp>
#include <tapegrad/graph/io/graph_build.hpp>
#include <tapegrad/graph/verification/attention_check.hpp>
#include <tapegrad/graph/verification/chapter.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <sstream>

namespace tapegrad::app {

/// The options every check of the command shares.
inline CheckOptions check_options(const CheckArgs& args, unsigned reference_digits) {
  CheckOptions opt;
  opt.seed = args.seed;
  opt.directional = args.directional;
  opt.directions = args.directions;
  opt.reference_digits = reference_digits;
  opt.threads = args.threads;
  opt.progress = args.progress;
  opt.shard = args.shard;
  opt.tape_options.detect_anomaly = args.detect_anomaly;
  opt.strict = args.strict;
  return opt;
}

template <Real T> CheckReport run_check(const CheckArgs& args, unsigned reference_digits) {
  const CheckOptions opt = check_options(args, reference_digits);
  const auto& [n, D, d, r] = args.size;
  const std::string random_name = "random asymmetric case (seed " + std::to_string(args.seed) +
                                  ", T,D,d,r = " + std::to_string(n) + "," + std::to_string(D) + "," +
                                  std::to_string(d) + "," + std::to_string(r) + ")";
  CheckReport report;
  if (args.config) {
    const AttentionConfig& c = *args.config;
    report.append(
        check_attention<T, mpfr_real>(random_name, random_masked_attention<T>(args.seed, n, D, d, r, c), opt, c));
    return report;
  }
  report.append(check_attention<T, mpfr_real>("example 1", chapter::example1<T>(), opt));
  report.append(check_attention<T, mpfr_real>("example 2 (identical keys)", chapter::example2<T>(), opt));
  report.append(check_attention<T, mpfr_real>(random_name, random_attention<T>(args.seed, n, D, d, r), opt));
  return report;
}

/// The node `name` of the file as a graph function (FileGraph::node_function), once the whole file is known to
/// be valid: recorded in T, its output 1x1 as the format says, although the Jacobian is of another node.
template <Real T> typename FileGraph<T>::NodeFunction file_node(const FileGraph<T>& graph, const std::string& name) {
  const auto node = graph.node_function(name);
  Tape<T> tape;
  graph.output_of(graph.record(tape, graph.record_inputs(tape)));
  return node;
}

template <Real T> CheckReport run_check_file(const GraphSpec& spec, const std::vector<std::string>& wrt,
                                             const CheckArgs& args, unsigned reference_digits) {
  const FileGraph<T> graph(spec);
  CheckOptions opt = check_options(args, reference_digits);
  for (const std::string& name : wrt) {
    const auto at = std::find(graph.names().begin(), graph.names().end(), name);
    if (at == graph.names().end()) throw UsageError("--inputs: '" + name + "' is not an input of " + spec.file);
    opt.wrt.push_back(static_cast<std::size_t>(at - graph.names().begin()));
  }
  CheckReport report;
  Tape<T> tape; // the graph checked, recorded in T for the guards below
  if (args.jacobian.empty()) {
    report.append(check_gradient<T, mpfr_real>(graph, graph.inputs(), graph.names(), opt), spec.file);
    record_graph(tape, graph, graph.inputs(), graph.names());
  } else {
    const auto node = file_node<T>(graph, args.jacobian);
    CheckReport r = check_jacobian<T, mpfr_real>(node, graph.inputs(), graph.names(), opt, args.jacobian);
    for (CheckResult& c : r.checks)
      c.graph = spec.file + ": " + c.graph;
    report.append(std::move(r));
    record_output(tape, node, graph.inputs(), graph.names());
  }
  // Each check of an input names its worst entry by the input's own index (the checks saw storage views).
  for (CheckResult& c : report.checks)
    for (const auto& [name, value] : spec.inputs)
      if (c.node < 0 && c.input == name && c.shape.numel() == value.shape.numel()) set_shape(c, value.shape);
  // The saturation guard looks at every softmax of the graph as recorded in T.
  for (std::string& w : saturated_softmax_rows(tape, static_cast<T>(check_threshold<T, mpfr_real>(opt))))
    report.warnings.push_back(spec.file + ": " + w);
  // The kink guard: a relu or abs operand within reach of 0 of the reference's differences (those the checks
  // take, at the reference's digits).
  T reach;
  {
    MpfrDigits digits(reference_digits);
    reach = static_cast<T>(kink_reach<mpfr_real>());
  }
  for (std::string& w : kink_warnings(tape, reach))
    report.warnings.push_back(spec.file + ": " + w);
  return report;
}

inline std::string bytes_string(std::size_t bytes) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  if (bytes < 1024)
    out << bytes << " B";
  else if (bytes < (1u << 20))
    out << static_cast<double>(bytes) / 1024 << " KiB";
  else
    out << static_cast<double>(bytes) / (1u << 20) << " MiB";
  return out.str();
}

template <Real T> std::string stats_line(const Tape<T>& tape) {
  const typename Tape<T>::Stats st = tape.stats();
  return "tape: " + std::to_string(st.nodes) + " nodes, values " + bytes_string(st.value_bytes) + ", gradients " +
         bytes_string(st.grad_bytes) + " (VJPs save nothing beyond the node values); peak resident memory " +
         bytes_string(peak_rss_bytes());
}

template <Real T> std::string check_stats(const CheckArgs& args) {
  const auto& [n, D, d, r] = args.size;
  Tape<T> tape;
  if (args.config) {
    const AttentionInputs<T> in = random_masked_attention<T>(args.seed, n, D, d, r, *args.config);
    tape.backward(record_graph(tape, MaskedAttentionGraph{*args.config}, {in.X, in.P, in.Wq, in.Wk, in.Wv, in.Wo, in.G},
                               {"X", "P", "Wq", "Wk", "Wv", "Wo", "G"}));
  } else {
    tape.backward(record_attention(tape, random_attention<T>(args.seed, n, D, d, r)).J);
  }
  return "the random case's " + stats_line(tape);
}

/// A tensor as the format writes it, nested by rank: a rank-0 value is a bare decimal string, a rank-r value a
/// list of its rank r - 1 slices (a matrix a list of rows of decimal strings). `m` holds the entries row-major.
template <Real T>
nlohmann::ordered_json tensor_json(const Matrix<T>& m, const Shape& shape, std::size_t depth = 0, Eigen::Index at = 0) {
  if (depth == shape.rank()) return to_decimal(m.data()[at]);
  const Eigen::Index inner = shape.drop_front(depth + 1).numel();
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (Eigen::Index i = 0; i < shape[depth]; ++i)
    list.push_back(tensor_json(m, shape, depth + 1, at + i * inner));
  return list;
}

/// A matrix as the format writes it: a list of rows of decimal strings.
template <Real T> nlohmann::ordered_json matrix_json(const Matrix<T>& m) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      row.push_back(to_decimal(m(i, j)));
    rows.push_back(std::move(row));
  }
  return rows;
}

/// Records the file's graph on `tape`: the Vars of inputs and nodes in file order.
template <Real T> std::vector<Var<T>> record_file(Tape<T>& tape, const FileGraph<T>& graph) {
  return graph.record(tape, graph.record_inputs(tape));
}

/// `grad FILE --jacobian NODE`: the node's value and its Jacobian w.r.t. every input, one backward sweep per
/// entry of the node seeded with its unit matrix (jacobians()).
template <Real T> std::string run_jacobian(const GraphSpec& spec, const GradArgs& args) {
  const FileGraph<T> graph(spec);
  const auto node = file_node<T>(graph, args.jacobian);
  Tape<T> tape(TapeOptions{.detect_anomaly = args.detect_anomaly});
  const std::vector<Var<T>> in = graph.record_inputs(tape);
  const Var<T> y = node(tape, in);
  const std::vector<Matrix<T>> J = jacobians(tape, y, in);
  std::ostringstream text;
  if (args.format == "json") {
    nlohmann::ordered_json doc;
    if (args.stats)
      doc["stats"] = {{"nodes", tape.stats().nodes},
                      {"value_bytes", tape.stats().value_bytes},
                      {"gradient_bytes", tape.stats().grad_bytes},
                      {"peak_rss_bytes", peak_rss_bytes()}};
    doc["precision"] = args.precision;
    doc["node"] = args.jacobian;
    doc["rows"] = y.rows();
    doc["cols"] = y.cols();
    doc["value"] = tensor_json(y.value(), y.shape());
    nlohmann::ordered_json jacobians = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < in.size(); ++k)
      jacobians[graph.names()[k]] = matrix_json(J[k]);
    doc["jacobians"] = std::move(jacobians);
    text << doc.dump(2) << "\n";
    return text.str();
  }
  const std::string& name = args.jacobian;
  text << "graph " << spec.file << (spec.description.empty() ? "" : ": " + spec.description) << "\n"
       << "precision " << args.precision << " (" << scalar_name<T>() << ", " << max_digits10<T>()
       << " significant digits shown)\n"
       << name << " (" << shape_string(y.shape()) << ")\n"
       << format_matrix(y.value(), max_digits10<T>(), "  ") << "\nJacobians d" << name
       << "/d(input): one row per entry of " << name << " (" << y.rows() * y.cols()
       << ", row-major), one column per entry of the input (row-major):\n";
  for (std::size_t k = 0; k < in.size(); ++k)
    text << "d" << name << "/d" << graph.names()[k] << " (" << shape_string(J[k].rows(), J[k].cols()) << ")\n"
         << format_matrix(J[k], max_digits10<T>(), "  ");
  if (args.stats) text << "\n" << stats_line(tape) << "\n";
  return text.str();
}

template <Real T> std::string run_grad(const GraphSpec& spec, const GradArgs& args) {
  if (!args.jacobian.empty()) return run_jacobian<T>(spec, args);
  const FileGraph<T> graph(spec);
  Tape<T> tape(TapeOptions{.detect_anomaly = args.detect_anomaly});
  const std::vector<Var<T>> all = record_file(tape, graph);
  const Var<T> out = graph.output_of(all);
  tape.backward(out);
  const std::size_t n_inputs = graph.inputs().size();
  const std::size_t n_fixed = n_inputs + graph.constant_names().size(); // inputs, then real constants, then nodes

  // Fan-out audit: who consumes each node, and how many adjoint contributions the sweep added into it.
  std::vector<std::vector<std::string>> consumers(tape.size());
  for (std::size_t i = 0; i < tape.size(); ++i)
    for (std::size_t p : tape.node(i).parents)
      consumers[p].push_back(tape.node_name(i));
  std::vector<std::size_t> fanned; // a constant, or a node made from constants only, has no adjoint to audit
  for (std::size_t i = 0; i < tape.size(); ++i)
    if (consumers[i].size() > 1 && tape.node(i).needs_grad) fanned.push_back(i);
  // A node made from real constants only has no gradient (Tape::grad refuses it).
  const auto has_gradient = [&](std::size_t k) { return tape.node(all[k].index()).needs_grad; };

  std::ostringstream text;
  const typename Tape<T>::Stats st = tape.stats();
  if (args.format == "json") {
    nlohmann::ordered_json doc;
    if (args.stats)
      doc["stats"] = {{"nodes", st.nodes},
                      {"value_bytes", st.value_bytes},
                      {"gradient_bytes", st.grad_bytes},
                      {"peak_rss_bytes", peak_rss_bytes()}};
    doc["precision"] = args.precision;
    doc["output"] = spec.output;
    doc["value"] = to_decimal(out.value()(0, 0));
    nlohmann::ordered_json values = nlohmann::ordered_json::object(), grads = nlohmann::ordered_json::object(),
                           node_grads = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < all.size(); ++k) {
      values[all[k].label()] = tensor_json(all[k].value(), all[k].shape());
      if (k < n_inputs)
        grads[all[k].label()] = tensor_json(all[k].grad(), all[k].shape());
      else if (k >= n_fixed) // a constant has no gradient; a node made from constants only has null
        node_grads[all[k].label()] =
            has_gradient(k) ? tensor_json(all[k].grad(), all[k].shape()) : nlohmann::ordered_json();
    }
    doc["values"] = std::move(values);
    doc["gradients"] = std::move(grads);
    if (args.all_nodes) doc["node_gradients"] = std::move(node_grads);
    if (args.audit) {
      nlohmann::ordered_json audit = nlohmann::ordered_json::array();
      for (std::size_t i : fanned)
        audit.push_back(
            {{"node", tape.node_name(i)}, {"consumers", consumers[i]}, {"contributions", tape.node(i).contributions}});
      doc["audit"] = std::move(audit);
    }
    text << doc.dump(2) << "\n";
    return text.str();
  }
  text << "graph " << spec.file << (spec.description.empty() ? "" : ": " + spec.description) << "\n"
       << "precision " << args.precision << " (" << scalar_name<T>() << ", " << max_digits10<T>()
       << " significant digits shown)\n"
       << spec.output << " = " << to_decimal(out.value()(0, 0)) << "\n\nvalues:\n";
  for (const Var<T>& v : all)
    text << v.label() << " (" << shape_string(v.shape()) << (v.rank() == 2 ? "" : ", shown as its trailing rows")
         << ")\n"
         << format_matrix(v.value(), max_digits10<T>(), "  ");
  text << "\ngradients d" << spec.output << "/d(input):\n";
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (k == n_inputs) {
      if (!args.all_nodes) break;
      text << "\ngradients d" << spec.output << "/d(node):\n";
    }
    if (k >= n_inputs && k < n_fixed) continue; // a constant has no gradient
    text << "d" << all[k].label()
         << (has_gradient(k) ? "\n" + format_matrix(all[k].grad(), max_digits10<T>(), "  ")
                             : ": none (made from real constants only)\n");
  }
  if (args.stats) text << "\n" << stats_line(tape) << "\n";
  if (args.audit) {
    text << "\nfan-out audit (nodes with more than one consumer; their gradient is the sum of the contributions):\n";
    if (fanned.empty()) text << "  none\n";
    for (std::size_t i : fanned) {
      std::string names;
      for (const std::string& c : consumers[i])
        names += (names.empty() ? "" : ", ") + c;
      text << "  " << tape.node_name(i) << ": " << consumers[i].size() << " consumers (" << names << "), "
           << tape.node(i).contributions << " contributions added\n";
    }
  }
  return text.str();
}

template <Real T>
std::string run_hessian(const GraphSpec& spec, const std::string& precision, const std::string& format) {
  const FileGraph<T> graph(spec);
  const Matrix<T> H = hessian(graph, graph.inputs(), graph.names());
  Tape<T> tape;
  const T value = graph.output_of(record_file(tape, graph)).value()(0, 0);
  std::ostringstream text;
  if (format == "json") {
    nlohmann::ordered_json doc;
    doc["precision"] = precision;
    doc["output"] = spec.output;
    doc["value"] = to_decimal(value);
    nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < graph.inputs().size(); ++k)
      inputs.push_back(
          {{"name", graph.names()[k]}, {"rows", graph.inputs()[k].rows()}, {"cols", graph.inputs()[k].cols()}});
    doc["inputs"] = std::move(inputs);
    doc["hessian"] = matrix_json(H);
    text << doc.dump(2) << "\n";
    return text.str();
  }
  text << "graph " << spec.file << (spec.description.empty() ? "" : ": " + spec.description) << "\n"
       << "precision " << precision << " (" << scalar_name<T>() << "), forward over reverse (Tape<Dual<T>>)\n"
       << spec.output << " = " << to_decimal(value) << "\n\nHessian d2 " << spec.output << " / d x d x, x = ";
  for (std::size_t k = 0; k < graph.inputs().size(); ++k)
    text << (k ? ", " : "") << graph.names()[k] << " (" << shape_string(graph.shapes()[k]) << ")";
  text << " flattened, each row-major (" << H.rows() << " x " << H.cols() << "):\n"
       << format_matrix(H, max_digits10<T>(), "  ");
  return text.str();
}

template <Real T> CheckReport run_check_hessian(const GraphSpec& spec, unsigned reference_digits) {
  const FileGraph<T> graph(spec);
  const Matrix<T> H = hessian(graph, graph.inputs(), graph.names());
  const std::string tol = to_decimal(engine_tolerance<T>()), name = precision_name<T>();
  // The reference at the engine's point: the file's decimals rounded to T (pow(x, 20000) at x = 1.00001 is
  // another function of the decimal than of its double).
  MpfrDigits digits(reference_digits);
  return check_hessian_reference(graph.template lifted<mpfr_real>(), convert<mpfr_real>(H), tol, name);
}

template <Real T> std::string run_dot(const GraphSpec& spec, const DotArgs& args) {
  const FileGraph<T> graph(spec);
  Tape<T> tape;
  const std::vector<Var<T>> all = record_file(tape, graph);
  tape.backward(graph.output_of(all));
  std::map<std::size_t, bool> verdict; // node index -> every per-node check passed
  if (args.check) {
    const unsigned digits = static_cast<unsigned>(std::max(50, 2 * digits10<T>()));
    MpfrDigits scope(digits);
    Tape<mpfr_real> reference;
    std::vector<Var<mpfr_real>> in;
    for (std::size_t k = 0; k < graph.inputs().size(); ++k)
      in.push_back(reference.input(convert<mpfr_real>(graph.inputs()[k]), graph.shapes()[k], graph.names()[k]));
    graph.record(reference, in);
    verdict = node_verdicts(tape, reference, args.seed);
  }
  return tape_dot(tape, verdict, args.values, args.grads);
}

} // namespace tapegrad::app

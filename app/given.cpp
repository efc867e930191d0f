// `tapegrad check FILE --gradients G.json`: gradients computed elsewhere (another framework, a hand-written
// backward, a low-precision kernel) against the graph's gradient in a reference precision. The reference is the
// tape in R digits, itself checked first against finite differences in 2R digits (with dual numbers and every
// node's VJP), so what the given gradients are measured against is confirmed, not assumed.
#include "engine.hpp"

#include <tapegrad/autodiff/check/given_gradient.hpp>
#include <tapegrad/graph/io/graph_build.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace tapegrad::app {

CheckReport run_check_given(const GraphSpec& spec, const GradientSpec& given, const Precision& claimed,
                            const CheckArgs& args, unsigned reference_digits) {
  // Every given gradient names an input of the graph and has its shape: anything else is a bad file.
  std::vector<std::string> names;
  for (const auto& [name, m] : spec.inputs)
    names.push_back(name);
  std::vector<std::string> wrt;
  for (const auto& gradient : given.gradients) {
    const std::string& name = gradient.first; // not a structured binding: clang 14 cannot capture one
    const MatrixText& m = gradient.second;
    const auto at =
        std::find_if(spec.inputs.begin(), spec.inputs.end(), [&](const auto& in) { return in.first == name; });
    if (at == spec.inputs.end()) {
      std::string list;
      for (const std::string& n : names)
        list += (list.empty() ? "" : ", ") + n;
      throw GraphFileError(given.file + ": gradient of '" + name + "': " + spec.file + " has no input '" + name +
                           "' (its inputs: " + list + ")");
    }
    if (at->second.rows != m.rows || at->second.cols != m.cols)
      throw ShapeError(given.file + ": the gradient of '" + name + "' is " + shape_string(m.rows, m.cols) +
                       " but input '" + name + "' of " + spec.file + " is " +
                       shape_string(at->second.rows, at->second.cols));
    wrt.push_back(name);
  }
  // The claim's rounding budget, made in the claimed precision itself (its own digits in effect).
  const std::string claimed_tol =
      with_precision(claimed, [](auto type) { return to_decimal(engine_tolerance<typename decltype(type)::type>()); });

  MpfrDigits scope(reference_digits);
  // The reference confirmed: the tape in R against finite differences in twice R's digits.
  CheckReport report = run_check_file<mpfr_real>(spec, wrt, args, 2 * reference_digits);
  if (!report.passed())
    report.warnings.push_back(spec.file + ": the reference tape failed its own checks (above): what the given "
                                          "gradients are measured against is not confirmed, so their results say "
                                          "nothing; look at the graph (a kink, a saturated softmax) first");
  // The reference gradients, and each given one against its input's.
  const FileGraph<mpfr_real> graph(spec);
  Tape<mpfr_real> tape;
  const std::vector<Var<mpfr_real>> all = graph.record(tape, graph.record_inputs(tape));
  tape.backward(graph.output_of(all));
  const mpfr_real threshold = given_threshold(from_decimal<mpfr_real>(claimed_tol));
  // The output's value, when the file gives it: gradients of another function, or at another point, are not
  // what the graph's are, and this says so even where their shapes fit.
  if (!given.value.empty()) {
    const Matrix<mpfr_real> value = Matrix<mpfr_real>::Constant(1, 1, from_decimal<mpfr_real>(given.value));
    CheckResult c = compare<mpfr_real, mpfr_real>(CheckKind::forward, "given", spec.output, value,
                                                  graph.output_of(all).value(), threshold, "none");
    c.engine_precision = "given, claimed " + claimed.name;
    c.graph = spec.file;
    if (!c.passed)
      c.note = "the value given is not the graph's output at its inputs: another function, or another point";
    report.checks.push_back(std::move(c));
  }
  for (std::size_t k = 0; k < names.size(); ++k) {
    const auto at = std::find_if(given.gradients.begin(), given.gradients.end(),
                                 [&](const auto& g) { return g.first == names[k]; });
    if (at == given.gradients.end()) {
      report.warnings.push_back(spec.file + ": input '" + names[k] + "' has no gradient in " + given.file +
                                ": not checked");
      continue;
    }
    report.checks.push_back(
        check_given_gradient(names[k], from_text<mpfr_real>(at->second), all[k].grad(), threshold, claimed.name));
    report.checks.back().graph = spec.file;
  }
  return report;
}

} // namespace tapegrad::app

// `tapegrad check FILE --gradients G.json`: gradients computed elsewhere (another framework, a hand-written
// backward, a low-precision kernel) against the graph's gradient in a reference precision. The reference is the
// tape in R digits, itself checked first against finite differences in 2R digits (with dual numbers and every
// node's VJP), so what the given gradients are measured against is confirmed, not assumed.
#include "engine.hpp"

#include <tapegrad/autodiff/check/given_gradient.hpp>
#include <tapegrad/graph/io/graph_build.hpp>

#include <map>
#include <string>
#include <vector>

namespace tapegrad::app {

CheckReport run_check_given(const GraphSpec& spec, const GradientSpec& given, const Precision& claimed,
                            const CheckArgs& args, unsigned reference_digits) {
  // Every given gradient names an input of the graph and has its shape: anything else is a bad file.
  std::map<std::string, std::size_t> input_at; // input name -> its position in the file
  std::string list;
  for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
    input_at.emplace(spec.inputs[k].first, k);
    list += (list.empty() ? "" : ", ") + spec.inputs[k].first;
  }
  std::vector<std::string> wrt;
  std::vector<const TensorText*> given_of(spec.inputs.size(), nullptr); // per input, its given gradient if any
  for (const auto& [name, m] : given.gradients) {
    const auto at = input_at.find(name);
    if (at == input_at.end())
      throw GraphFileError(given.file + ": gradient of '" + name + "': " + spec.file + " has no input '" + name +
                           "' (its inputs: " + list + ")");
    const TensorText& input = spec.inputs[at->second].second;
    if (!(input.shape == m.shape))
      throw ShapeError(given.file + ": the gradient of '" + name + "' is " + shape_string(m.shape) + " but input '" +
                       name + "' of " + spec.file + " is " + shape_string(input.shape));
    given_of[at->second] = &m;
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
  // what the graph's are, and this says so even where their shapes fit. Relative to max(1, |J|): a value near 0
  // (a loss that cancels) is judged by its absolute error.
  if (!given.value.empty()) {
    const Matrix<mpfr_real> value = Matrix<mpfr_real>::Constant(1, 1, from_decimal<mpfr_real>(given.value));
    const Matrix<mpfr_real>& J = graph.output_of(all).value();
    CheckResult c = compare<mpfr_real, mpfr_real>(CheckKind::forward, "given", spec.output, value, J, threshold, "none",
                                                  threshold * scale_of(J(0, 0)));
    c.engine_precision = "given, claimed " + claimed.name;
    c.graph = spec.file;
    if (!c.passed)
      c.note = "the value given is not the graph's output at its inputs: another function, or another point";
    else if (!c.note.empty()) // passed by the floor, not relatively
      c.note = "the output is near 0: judged absolutely, abs " + c.max_abs_error + " <= the threshold times max(1, |" +
               spec.output + "|) = " + to_string(threshold * scale_of(J(0, 0)), 3);
    report.checks.push_back(std::move(c));
  }
  for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
    const std::string& name = spec.inputs[k].first;
    if (!given_of[k]) {
      report.warnings.push_back(spec.file + ": input '" + name + "' has no gradient in " + given.file +
                                ": not checked");
      continue;
    }
    report.checks.push_back(
        check_given_gradient(name, from_text<mpfr_real>(*given_of[k]), all[k].grad(), threshold, claimed.name));
    report.checks.back().graph = spec.file;
    set_shape(report.checks.back(), spec.inputs[k].second.shape);
  }
  return report;
}

} // namespace tapegrad::app

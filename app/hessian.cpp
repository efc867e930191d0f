// `tapegrad hessian FILE` and the reference side of `tapegrad check FILE --order 2`: second derivatives of a
// graph file's output. The engine's Hessian (forward over reverse, engine.tpp, once per type) is checked here
// against the reference's two, computed in MPFR: nested dual numbers (no VJP, no step) and differences of the
// gradient. This file alone compiles the ops for Dual<Dual<mpfr_real>>.
#include "commands.hpp"
#include "engine.hpp"
#include "precision.hpp"

#include <tapegrad/autodiff/check/hessian.hpp>
#include <tapegrad/graph/io/graph_build.hpp>

namespace tapegrad::app {

CheckReport check_hessian_reference(const FileGraph<mpfr_real>& graph, const Matrix<mpfr_real>& engine,
                                    const std::string& engine_tol, const std::string& engine_name) {
  std::vector<Shape> shapes; // the inputs' own, so the worst pair is named by their indices
  for (const auto& [name, value] : graph.spec().inputs)
    shapes.push_back(value.shape);
  CheckReport report;
  report.append(compare_hessians<mpfr_real>(engine, hessian_reference(graph, graph.inputs(), graph.names()),
                                            from_decimal<mpfr_real>(engine_tol), engine_name, graph.names(), shapes),
                graph.spec().file);
  return report;
}

int run_hessian_command(const HessianCommand& cmd, std::ostream& out) {
  const Precision p = parse_precision("--precision", cmd.precision);
  const GraphSpec spec = read_graph_file(cmd.file);
  const std::string text = with_precision(
      p, [&](auto type) { return run_hessian<typename decltype(type)::type>(spec, cmd.precision, cmd.format); });
  out << text;
  return 0;
}

} // namespace tapegrad::app

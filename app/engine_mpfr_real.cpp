// The engine-precision work of every subcommand, compiled for tapegrad::mpfr_real (one file per type: they build in
// parallel).
#include "engine.tpp"

namespace tapegrad::app {
template CheckReport run_check<tapegrad::mpfr_real>(const CheckArgs&, unsigned);
template CheckReport run_check_file<tapegrad::mpfr_real>(const GraphSpec&, const std::vector<std::string>&,
                                                         const CheckArgs&, unsigned);
template std::string run_grad<tapegrad::mpfr_real>(const GraphSpec&, const GradArgs&);
template std::string run_dot<tapegrad::mpfr_real>(const GraphSpec&, const DotArgs&);
} // namespace tapegrad::app

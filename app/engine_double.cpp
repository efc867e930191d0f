// The engine-precision work of every subcommand, compiled for double (one file per type: they build in parallel).
#include "engine.tpp"

namespace tapegrad::app {
template CheckReport run_check<double>(const CheckArgs&, unsigned);
template CheckReport run_check_file<double>(const GraphSpec&, const std::vector<std::string>&, const CheckArgs&,
                                            unsigned);
template std::string run_grad<double>(const GraphSpec&, const GradArgs&);
template std::string run_dot<double>(const GraphSpec&, const DotArgs&);
} // namespace tapegrad::app

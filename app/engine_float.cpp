// The engine-precision work of every subcommand, compiled for float (one file per type: they build in parallel).
#include "engine.tpp"

namespace tapegrad::app {
template CheckReport run_check<float>(const CheckArgs&, unsigned);
template CheckReport run_check_file<float>(const GraphSpec&, const std::vector<std::string>&, const CheckArgs&,
                                           unsigned);
template std::string run_grad<float>(const GraphSpec&, const GradArgs&);
template std::string run_dot<float>(const GraphSpec&, const DotArgs&);
} // namespace tapegrad::app

// The engine-precision work of every subcommand, compiled for tapegrad::float100 (one file per type: they build in
// parallel).
#include "engine.tpp"

namespace tapegrad::app {
template CheckReport run_check<tapegrad::float100>(const CheckArgs&, unsigned);
template CheckReport run_check_file<tapegrad::float100>(const GraphSpec&, const std::vector<std::string>&,
                                                        const CheckArgs&, unsigned);
template std::string run_grad<tapegrad::float100>(const GraphSpec&, const GradArgs&);
template std::string run_dot<tapegrad::float100>(const GraphSpec&, const DotArgs&);
} // namespace tapegrad::app

#include "check_run.tpp"
template tapegrad::CheckReport tapegrad::app::run_check<double>(const CheckArgs&, unsigned);

#include "check_run.tpp"
template tapegrad::CheckReport tapegrad::app::run_check<float>(const CheckArgs&, unsigned);

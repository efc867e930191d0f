#include "check_run.tpp"
template tapegrad::CheckReport tapegrad::app::run_check<long double>(const CheckArgs&, unsigned);

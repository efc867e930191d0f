#include "check_run.tpp"
template tapegrad::CheckReport tapegrad::app::run_check<tapegrad::float128>(const CheckArgs&, unsigned);

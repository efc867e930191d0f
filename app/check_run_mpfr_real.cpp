#include "check_run.tpp"
template tapegrad::CheckReport tapegrad::app::run_check<tapegrad::mpfr_real>(const CheckArgs&, unsigned);

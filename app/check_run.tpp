#pragma once
// Definition of run_check<T>; included once per engine type by check_run_<type>.cpp.
#include "check_run.hpp"

#include <tapegrad/graph/attention_check.hpp>
#include <tapegrad/graph/chapter.hpp>

namespace tapegrad::app {

template <Real T> CheckReport run_check(const CheckArgs& args, unsigned reference_digits) {
  CheckOptions opt;
  opt.seed = args.seed;
  opt.directional = args.directional;
  opt.directions = args.directions;
  opt.reference_digits = reference_digits;
  const auto& [n, D, d, r] = args.size;
  const std::string random_name = "random asymmetric case (seed " + std::to_string(args.seed) +
                                  ", T,D,d,r = " + std::to_string(n) + "," + std::to_string(D) + "," +
                                  std::to_string(d) + "," + std::to_string(r) + ")";
  CheckReport report;
  report.append(check_attention<T, mpfr_real>("example 1", chapter::example1<T>(), opt));
  report.append(check_attention<T, mpfr_real>("example 2 (identical keys)", chapter::example2<T>(), opt));
  report.append(check_attention<T, mpfr_real>(random_name, random_attention<T>(args.seed, n, D, d, r), opt));
  return report;
}

} // namespace tapegrad::app

#pragma once
// What the training examples (05-07) share: their command line, the check of the first step, the training loop
// and the count of argmax predictions that are right.
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/optim/optimizers.hpp>

#include <report.hpp> // app/: the text report of `tapegrad check`

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace examples {

using namespace tapegrad;

/// The number `text` spells, all of it, or nothing (std::atoi would read "1x" as 1 and "abc" as 0).
template <class N> std::optional<N> number(std::string_view text) {
  N value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if constexpr (std::is_floating_point_v<N>)
    if (!std::isfinite(value)) return std::nullopt;
  return value;
}

/// The options every training example takes: --steps N (at least 1), --max-loss X, --seed S, --no-check.
struct TrainingOptions {
  int steps;
  double max_loss;
  std::uint64_t seed = 1;
  bool check = true;
};

/// An example's own option: given the argument and the next one (nullptr at the end), how many it takes (0: not
/// its own, or a bad value).
using ExtraOption = std::function<int(std::string_view argument, const char* next)>;

/// Reads argv into `o` (its defaults as given). On an argument it does not know or a value that is not a number
/// it prints `usage` to stderr and returns false: the example then exits 2.
inline bool parse_options(int argc, char** argv, TrainingOptions& o, const std::string& usage,
                          const ExtraOption& extra = {}) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    const auto take = [&](auto& out) {
      const auto v = next ? number<std::remove_reference_t<decltype(out)>>(next) : std::nullopt;
      if (v) out = *v;
      return v.has_value();
    };
    if ((a == "--steps" && take(o.steps)) || (a == "--max-loss" && take(o.max_loss)) || (a == "--seed" && take(o.seed)))
      ++i;
    else if (a == "--no-check")
      o.check = false;
    else if (const int used = extra ? extra(a, next) : 0; used > 0)
      i += used - 1;
    else {
      std::cerr << usage;
      return false;
    }
  }
  if (o.steps < 1) {
    std::cerr << "--steps must be at least 1\n" << usage;
    return false;
  }
  return true;
}

/// The first step's gradients, checked: every coordinate of every input against 50-digit finite differences,
/// plus dual numbers and every node's VJP (check_gradient), printed as `tapegrad check` prints it under `graph`.
/// True when every check passes; otherwise it says that training stops.
template <class Loss> bool check_first_step(const Loss& loss, const std::vector<Matrix<double>>& inputs,
                                            const std::vector<std::string>& names, std::uint64_t seed,
                                            const std::string& graph) {
  CheckOptions opt;
  opt.seed = seed;
  opt.reference_digits = 50;
  CheckReport report;
  report.append(check_gradient<double, mpfr_real>(loss, inputs, names, opt), graph);
  std::cout << graph << ", checked:\n";
  app::print_report(std::cout, report, false);
  if (!report.passed()) std::cout << "the gradients do not check out: not training\n";
  return report.passed();
}

/// Adam on `params` for `steps` steps: step k records the parameters on a fresh tape and the graph loss_at(k)
/// returns (a callable (tape, vars) -> loss), runs backward and steps. Prints the loss at step 1, every `every`
/// steps and at the last, and the time; returns the last loss.
template <class LossAt>
double train(Parameters<double>& params, Adam<double>& adam, int steps, int every, const LossAt& loss_at) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::streamsize precision = std::cout.precision();
  double loss = 0;
  for (int step = 1; step <= steps; ++step) {
    Tape<double> tape;
    const std::vector<Var<double>> vars = params.record(tape);
    const Var<double> L = loss_at(step)(tape, vars);
    tape.backward(L);
    adam.step(params, vars);
    loss = L.value()(0, 0);
    if (step == 1 || step % every == 0 || step == steps)
      std::cout << "step " << std::setw(4) << step << "  loss " << std::fixed << std::setprecision(5) << loss
                << std::defaultfloat << "\n";
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "trained " << steps << " steps in " << std::fixed << std::setprecision(2) << seconds << " s\n"
            << std::defaultfloat << std::setprecision(static_cast<int>(precision));
  return loss;
}

/// How many rows of `logits` have their largest entry at the target of that row.
inline long argmax_right(const Matrix<double>& logits, std::span<const long> targets) {
  long right = 0;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    Eigen::Index best = 0;
    logits.row(i).maxCoeff(&best);
    right += best == targets[static_cast<std::size_t>(i)];
  }
  return right;
}

/// The verdict line; the example's exit code (0 when the loss is at most the bound).
inline int verdict(double loss, double max_loss) {
  std::cout << "final training loss " << loss << (loss <= max_loss ? " <= " : " > ") << max_loss << "\n";
  return loss <= max_loss ? 0 : 1;
}

} // namespace examples

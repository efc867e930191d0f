// The most common gradient bug, walked through: a bias added to every row of a batch (broadcast), whose backward
// takes the bias gradient from one row instead of summing it over the batch (burn#181 and many hand-written
// layers). The wrong and the right gradient side by side, why a batch of one cannot show it, and the checks that
// catch it, the per-node check naming the add. Exits 1 unless every claim it prints holds.
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/autodiff/print.hpp>
#include <tapegrad/graph/models/attention.hpp>
#include <tapegrad/graph/verification/op_faults.hpp>

#include <iostream>
#include <set>

using namespace tapegrad;
using T = double;

namespace {

/// J = sum(tanh(X W + b) * G): a linear layer with a bias, probed by G; the add as written (right) or with the
/// bias gradient taken from row 0.
template <bool Slip> struct Layer {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    const Var<U> XW = matmul(in[0], in[1], "XW");
    const Var<U> H = Slip ? BiasGradientOneRowFault::apply<U>(operands(XW, in[2]), {}, "H") : add(XW, in[2], "H");
    return probe(tanh(H, "A"), in[3]);
  }
};

const std::vector<std::string> names{"X", "W", "b", "G"};

Matrix<T> rows(std::initializer_list<std::initializer_list<T>> r) {
  Matrix<T> m(static_cast<Eigen::Index>(r.size()), static_cast<Eigen::Index>(r.begin()->size()));
  Eigen::Index i = 0;
  for (const auto& row : r) {
    Eigen::Index j = 0;
    for (T x : row)
      m(i, j++) = x;
    ++i;
  }
  return m;
}

} // namespace

int main() {
  // A batch of 4 examples of width 2, a layer of width 3 (entries exact in binary).
  const Matrix<T> X = rows({{0.5, -1}, {1.5, 0.25}, {-0.75, 2}, {1, 1}});
  const Matrix<T> W = rows({{0.5, -0.25, 0.75}, {0.25, 0.5, -0.5}});
  const Matrix<T> b = rows({{0.125, -0.25, 0.5}});
  const Matrix<T> G = rows({{1, -0.5, 0.25}, {0.5, 2, -1}, {-1, 0.75, 0.5}, {0.25, -0.25, 1}});
  bool holds = true;

  std::cout << "H = X W + b adds the 1 x 3 bias b to each of the 4 rows of X W; J = sum(tanh(H) * G).\n"
               "The gradient of b is dH summed over the rows the bias was added to.\n\n";
  Tape<T> tape;
  std::vector<Var<T>> in;
  for (std::size_t k = 0; k < names.size(); ++k)
    in.push_back(tape.input((std::vector<Matrix<T>>{X, W, b, G})[k], names[k]));
  tape.backward(Layer<false>{}(tape, in));
  const Matrix<T> dH = tape.grad(tape.find("H"));
  const EngineGradient<T> right = engine_gradient<T>(Layer<false>{}, {X, W, b, G}, names);
  const EngineGradient<T> wrong = engine_gradient<T>(Layer<true>{}, {X, W, b, G}, names);
  std::cout << "dH (4 x 3), one row per example:\n"
            << format_matrix(dH, 6, "  ") << "db summed over the batch (right):\n"
            << format_matrix(right.grads[2], 6, "  ") << "db from row 0 only (wrong):\n"
            << format_matrix(wrong.grads[2], 6, "  ");
  const bool sums = max_rel_error<T>(right.grads[2], Matrix<T>(dH.colwise().sum())) == 0;
  const bool first_row = wrong.grads[2] == Matrix<T>(dH.row(0));
  const T off = max_rel_error<T>(wrong.grads[2], right.grads[2]);
  const bool others_same = wrong.grads[0] == right.grads[0] && wrong.grads[1] == right.grads[1];
  std::cout << "the wrong db is off by " << off << " relative; dX and dW are "
            << (others_same ? "the same in both" : "DIFFERENT") << " (the slip is in db alone)\n\n";
  holds = holds && sums && first_row && off > 0.1 && others_same;

  // A batch of one: row 0 is the whole batch, so the slip gives the right gradient.
  const Matrix<T> X1 = X.topRows(1), G1 = G.topRows(1);
  const EngineGradient<T> right1 = engine_gradient<T>(Layer<false>{}, {X1, W, b, G1}, names);
  const EngineGradient<T> wrong1 = engine_gradient<T>(Layer<true>{}, {X1, W, b, G1}, names);
  const bool invisible = wrong1.grads[2] == right1.grads[2];
  std::cout << "with a batch of one example, db is " << (invisible ? "identical" : "DIFFERENT")
            << " both ways: a test on a single example cannot see this bug.\n\n";
  holds = holds && invisible;

  // The checks: the tape against finite differences in 50 digits, dual numbers, and each node's VJP alone.
  CheckOptions opt;
  opt.reference_digits = 50;
  const CheckReport good = check_gradient<T, mpfr_real>(Layer<false>{}, {X, W, b, G}, names, opt);
  const CheckReport bad = check_gradient<T, mpfr_real>(Layer<true>{}, {X, W, b, G}, names, opt);
  std::cout << "tapegrad's checks, right add: " << (good.passed() ? "all pass" : "FAIL") << "\n"
            << "tapegrad's checks, the slip:\n";
  std::set<std::string> failed_inputs, blamed;
  for (const CheckResult& c : bad.checks)
    if (!c.passed) {
      std::cout << "  FAIL " << c.name << " (" << c.input << "): rel " << c.max_rel_error << " > " << c.threshold
                << "\n";
      if (c.kind == CheckKind::tape_vs_finite_differences) failed_inputs.insert(c.input);
      if (c.kind == CheckKind::node_vjp) blamed.insert(c.node_name);
    }
  const bool named = blamed == std::set<std::string>{"H"};
  std::cout << "the per-node check blames " << (named ? "H, the add, alone" : "the WRONG nodes") << "; "
            << "of the inputs only " << (failed_inputs == std::set<std::string>{"b"} ? "b" : "OTHERS TOO")
            << " has a wrong gradient\n";
  holds = holds && good.passed() && !bad.passed() && named && failed_inputs == std::set<std::string>{"b"};
  std::cout << "\nevery claim above holds: " << (holds ? "yes" : "NO") << "\n";
  return holds ? 0 : 1;
}

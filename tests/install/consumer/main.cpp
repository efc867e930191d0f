// Uses the installed headers: the chapter's worked example 1 must give J = 15/2 and dWv = A^T G, exactly
// as the chapter says, in double and in 50 digits, and pass the whole check (double against 50-digit MPFR:
// finite differences, dual numbers, every node's VJP, the hand-written backward), all compiled here from the
// headers alone, as a user of the installed library compiles them. Exit 0 only then.
#include <tapegrad/graph/verification/attention_check.hpp>
#include <tapegrad/tapegrad.hpp>

#include <iostream>

template <class T> bool worked_example_1() {
  tapegrad::Tape<T> tape;
  const auto p = tapegrad::record_attention(tape, tapegrad::chapter::example1<T>());
  tape.backward(p.J);
  using std::abs;
  const T tol = T(128) * tapegrad::epsilon<T>();
  const T dWv00 = T(3) / T(4); // (A^T G)[0][0] = A[0][0] G[0][0]
  const bool ok = abs(p.J.value()(0, 0) - T(15) / T(2)) <= tol && abs(p.nodes.Wv.grad()(0, 0) - dWv00) <= tol;
  std::cout << "consumer: " << tapegrad::scalar_name<T>() << " J = " << tapegrad::to_string(p.J.value()(0, 0))
            << (ok ? " (ok)" : " (WRONG)") << "\n";
  return ok;
}

bool whole_check() {
  tapegrad::CheckOptions opt;
  opt.reference_digits = 50;
  const tapegrad::CheckReport report =
      tapegrad::check_attention<double, tapegrad::mpfr_real>("example 1", tapegrad::chapter::example1<double>(), opt);
  std::cout << "consumer: check of example 1, double against 50 digits: " << report.checks.size() << " checks, "
            << (report.passed() ? "passed" : "FAILED") << "\n";
  return report.passed() && report.checks.size() > 10;
}

int main() { return worked_example_1<double>() && worked_example_1<tapegrad::float50>() && whole_check() ? 0 : 1; }

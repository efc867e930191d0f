// Uses the installed headers: the chapter's worked example 1 must give J = 15/2 and dWv = A^T G, exactly
// as the chapter says, in double and in 50 digits. Exit 0 only then.
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

int main() { return worked_example_1<double>() && worked_example_1<tapegrad::float50>() ? 0 : 1; }

// The chapter's causal attention on batched multi-head tensors, checked three ways.
//
// The chapter's reference function, as PyTorch code writes it:
//   scores = query @ key.transpose(-2, -1) / sqrt(d);  future = j > i;  A = softmax(scores.masked_fill(future, -inf))
//   return A @ value
// here on Q, K, V of shape (batch 2, heads 2, T 4, d 3), with the probe J = sum(O * G). The tape's gradients are
// checked against the chapter's hand-written backward applied to each (batch, head) slice, and against finite
// differences at 50 digits with the dual numbers and every node's VJP (check_gradient). Exits 1 on any
// disagreement.
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/verification/attention_by_hand.hpp>
#include <tapegrad/tapegrad.hpp>

#include <iostream>
#include <random>

using namespace tapegrad;
using T = double;

namespace {

constexpr Eigen::Index B = 2, H = 2, n = 4, d = 3;

/// causal_attention(Q, K, V) and the probe, on any tape: Q, K, V and G of shape (B, H, n, d).
template <Real U> Var<U> causal_attention_probe(const Var<U>& Q, const Var<U>& K, const Var<U>& V, const Var<U>& G) {
  using std::sqrt;
  const Var<U> S = scale(matmul(Q, transpose(K, -2, -1), "QKt"), U(1) / sqrt(U(static_cast<long>(d))), "S");
  const Var<U> A = softmax(causal_mask(S, 0, "M"), -1, "A"); // masked_fill(future, -inf): j > i masked
  const Var<U> O = matmul(A, V, "O");
  return sum(hadamard(O, G), "J");
}

/// The (b, h) slice of a (B, H, n, d) tensor as an n x d matrix.
Matrix<T> slice_of(const Tensor<T>& t, Eigen::Index b, Eigen::Index h) {
  return Eigen::Map<const Matrix<T>>(t.data() + (b * H + h) * n * d, n, d);
}

} // namespace

int main() {
  std::mt19937_64 rng(10); // entries k/8, exact in every precision
  std::uniform_int_distribution<int> k(-9, 9);
  const Shape shape{B, H, n, d};
  std::vector<Tensor<T>> in;
  for (int i = 0; i < 4; ++i) {
    Tensor<T> t = Tensor<T>::zeros(shape);
    for (Eigen::Index e = 0; e < t.numel(); ++e)
      t[e] = T(k(rng)) / 8;
    in.push_back(t);
  }
  std::cout << "Q, K, V, G of shape " << shape_string(shape) << " (batch, heads, T, d), seed 10\n";

  // 1. The tape.
  Tape<T> tape;
  const Var<T> Q = tape.input(in[0], "Q"), K = tape.input(in[1], "K"), V = tape.input(in[2], "V"),
               G = tape.input(in[3], "G");
  const Var<T> J = causal_attention_probe(Q, K, V, G);
  tape.backward(J);
  std::cout << "J = " << to_string(J.value()(0, 0)) << "\n";

  // 2. The chapter's hand-written backward, slice by slice (causal, one head per slice).
  AttentionConfig causal;
  causal.causal = true;
  T worst(0);
  for (Eigen::Index b = 0; b < B; ++b)
    for (Eigen::Index h = 0; h < H; ++h) {
      const AttentionByHand<T> r =
          attention_local_by_hand(slice_of(in[0], b, h), slice_of(in[1], b, h), slice_of(in[2], b, h), Matrix<T>(),
                                  slice_of(in[3], b, h), causal);
      for (const auto& [tape_grad, hand] :
           {std::pair{Q.grad_tensor(), r.dQ}, std::pair{K.grad_tensor(), r.dK}, std::pair{V.grad_tensor(), r.dV}})
        worst = std::max(worst, max_rel_error(slice_of(tape_grad, b, h), hand));
    }
  const T tol = 128 * epsilon<T>();
  std::cout << "tape vs the hand-written backward per (batch, head): worst rel error " << to_string(worst, 3)
            << " <= " << to_string(tol, 3) << ": " << (worst <= tol ? "yes" : "NO") << "\n";

  // 3. Finite differences at 50 digits, dual numbers, every node's VJP: the checker hands each input over as a
  // matrix (its storage), the graph views it as a tensor.
  const auto f = [shape](auto& t, const auto& x) {
    for (const auto& v : x)
      t.set_input_shape(v, shape);
    return causal_attention_probe(x[0], x[1], x[2], x[3]);
  };
  std::vector<Matrix<T>> storage;
  for (const Tensor<T>& t : in)
    storage.push_back(t.matrix());
  CheckOptions opt;
  opt.reference_digits = 50;
  const CheckReport report = check_gradient<T, mpfr_real>(f, storage, {"Q", "K", "V", "G"}, opt);
  std::cout << "check_gradient, double against 50 digits: " << report.checks.size() << " checks, "
            << (report.passed() ? "all passed" : "FAILED") << "\n";
  return worst <= tol && report.passed() ? 0 : 1;
}

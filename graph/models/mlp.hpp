#pragma once
// A multi-layer perceptron with biases, as a graph: h_0 = X, h_(k+1) = act(h_k W_k + b_k) for the hidden layers
// and logits = h_L W_L + b_L, each bias a 1 x width row broadcast over the batch's rows (its gradient is
// summed over them). The loss is the mean cross-entropy of the logits against class targets.
//
//   X: batch x features,  W_k: width_k x width_(k+1),  b_k: 1 x width_(k+1),  targets: one class per row

#include "../../ops/ops.hpp"

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tapegrad {

/// The hidden layers' nonlinearity.
enum class Activation { tanh, gelu, relu };

inline const char* activation_name(Activation a) {
  return a == Activation::tanh ? "tanh" : a == Activation::gelu ? "gelu" : "relu";
}

template <Real T> Var<T> activate(Activation a, const Var<T>& x, std::string label = {}) {
  switch (a) {
  case Activation::tanh:
    return tanh(x, std::move(label));
  case Activation::gelu:
    return gelu(x, std::move(label));
  case Activation::relu:
    return relu(x, std::move(label));
  }
  return x;
}

/// The logits of an MLP: weights[k] and biases[k] per layer (as many of each), the activation after every layer
/// but the last. Nodes are labelled Z1, H1, ..., logits.
template <Real T>
Var<T> mlp(const Var<T>& x, std::span<const Var<T>> weights, std::span<const Var<T>> biases, Activation act) {
  if (weights.empty() || weights.size() != biases.size())
    throw UsageError("mlp: " + std::to_string(weights.size()) + " weights and " + std::to_string(biases.size()) +
                     " biases; give one of each per layer, at least one layer");
  Var<T> h = x;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    const std::string n = std::to_string(k + 1);
    const bool last = k + 1 == weights.size();
    const Var<T> z = add(matmul(h, weights[k]), biases[k], last ? "logits" : "Z" + n);
    h = last ? z : activate(act, z, "H" + n);
  }
  return h;
}

/// The MLP's loss as a graph the checker takes: inputs X, W1, b1, W2, b2, ... in that order.
struct MlpLoss {
  std::vector<long> targets;
  Activation activation = Activation::tanh;
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    if (in.size() < 3 || in.size() % 2 == 0)
      throw UsageError("MlpLoss: inputs X, W1, b1, W2, b2, ...; got " + std::to_string(in.size()));
    std::vector<Var<U>> w, b;
    for (std::size_t k = 1; k < in.size(); k += 2) {
      w.push_back(in[k]);
      b.push_back(in[k + 1]);
    }
    return cross_entropy(mlp<U>(in[0], w, b, activation), targets, "J");
  }
};

} // namespace tapegrad

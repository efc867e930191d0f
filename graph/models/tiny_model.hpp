#pragma once
// A one-layer causal multi-head attention model, small enough to train in a second on a toy task and to
// check every gradient of: token embedding E, learnable absolute positions P, attention (Wq, Wk, Wv, heads,
// causal mask), output projection Wo, unembedding Wu, cross-entropy.
//
//   X = onehot(tokens) E                          tokens: L positions over a vocabulary of V symbols
//   O = multi_head_attention(X, P, Wq, Wk, Wv, Wo, causal)
//   logits = O Wu,   loss = cross_entropy(logits[rows to predict], next tokens)
//
// The task, reversal: a sequence is a_0 .. a_(h-1) followed by a_(h-1) .. a_0. Row p predicts token p + 1;
// the loss counts the rows h-1 .. 2h-2, whose next token is the reverse of the first half. The causal mask
// lets row p see a_(2h-2-p), which it must find by position alone.

#include "../../optim/optimizers.hpp"
#include "attention.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace tapegrad {

struct TinyModelShape {
  int vocab = 8; ///< symbols
  int half = 4;  ///< the sequence length is 2 half
  int width = 8; ///< D = d = r
  int heads = 2;
  int length() const { return 2 * half; }
};

/// A reversal-task sequence drawn from `rng`: `half` symbols, then the same reversed.
inline std::vector<long> reversal_sequence(const TinyModelShape& shape, std::mt19937_64& rng) {
  std::vector<long> s(static_cast<std::size_t>(shape.length()));
  for (int i = 0; i < shape.half; ++i)
    s[static_cast<std::size_t>(i)] = static_cast<long>(rng() % static_cast<std::uint64_t>(shape.vocab));
  for (int i = 0; i < shape.half; ++i)
    s[static_cast<std::size_t>(shape.half + i)] = s[static_cast<std::size_t>(shape.half - 1 - i)];
  return s;
}

/// Parameters E, P, Wq, Wk, Wv, Wo, Wu with entries uniform in [-1/sqrt(fan in), 1/sqrt(fan in)], drawn from
/// the seed (the top 53 bits of each draw: the same on every platform).
template <Real T> Parameters<T> tiny_model_parameters(const TinyModelShape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto make = [&](int rows, int cols, int fan_in) {
    using std::sqrt;
    const T bound = T(1) / sqrt(T(fan_in));
    Matrix<T> m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i)
      m.data()[i] = (T(static_cast<double>(rng() >> 11) * 0x1p-53) * T(2) - T(1)) * bound;
    return m;
  };
  const int V = shape.vocab, L = shape.length(), D = shape.width;
  Parameters<T> p;
  p.add("E", make(V, D, 1));
  p.add("P", make(L, D, 1));
  p.add("Wq", make(D, D, D));
  p.add("Wk", make(D, D, D));
  p.add("Wv", make(D, D, D));
  p.add("Wo", make(D, D, D));
  p.add("Wu", make(D, V, D));
  return p;
}

/// `size` reversal-task sequences drawn from `rng`.
inline std::vector<std::vector<long>> reversal_batch(const TinyModelShape& shape, int size, std::mt19937_64& rng) {
  std::vector<std::vector<long>> batch;
  for (int b = 0; b < size; ++b)
    batch.push_back(reversal_sequence(shape, rng));
  return batch;
}

/// The reversal task's mean loss over `batch`: per sequence, logits = logits_of(tokens), tokens its one-hot rows
/// (L x V, a tape input), and the cross-entropy of the rows h-1 .. 2h-2 (node "predicting") against the reversed
/// half; labelled "loss" per sequence and "mean loss".
template <Real U, class LogitsOf> Var<U> reversal_loss(Tape<U>& tape, const TinyModelShape& shape,
                                                       const std::vector<std::vector<long>>& batch,
                                                       const LogitsOf& logits_of) {
  const int h = shape.half;
  Var<U> total;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const std::vector<long>& s = batch[b];
    Matrix<U> onehot = Matrix<U>::Zero(shape.length(), shape.vocab);
    for (std::size_t i = 0; i < s.size(); ++i)
      onehot(static_cast<Eigen::Index>(i), s[i]) = U(1);
    const Var<U> logits = logits_of(tape.input(onehot, "tokens"));
    const std::vector<long> next(s.begin() + h, s.end()); // rows h-1 .. 2h-2 predict positions h .. 2h-1
    const Var<U> loss = cross_entropy(slice_rows(logits, h - 1, h, "predicting"), next, "loss");
    total = b == 0 ? loss : add(total, loss);
  }
  return scale(total, U(1) / U(static_cast<long>(batch.size())), "mean loss");
}

/// The mean loss over a batch of sequences as a graph of the parameters {E, P, Wq, Wk, Wv, Wo, Wu}: a
/// generic callable, so the checker can record it in any precision.
struct TinyModelLoss {
  TinyModelShape shape;
  std::vector<std::vector<long>> batch;

  template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& p) const {
    AttentionConfig config;
    config.causal = true;
    config.heads = shape.heads;
    return reversal_loss(tape, shape, batch, [&](const Var<U>& tokens) {
      const Var<U> X = matmul(tokens, p[0], "X");
      const MultiHeadNodes<U> n = multi_head_attention(X, &p[1], p[2], p[3], p[4], &p[5], config);
      return matmul(n.O, p[6], "logits");
    });
  }
};

} // namespace tapegrad

#pragma once
// Graphs and deliberately wrong ops the checker's tests share (tests/autodiff/check/*.cpp).
#include "../../support.hpp"

#include <tapegrad/graph/verification/attention_check.hpp>

namespace tapegrad::test {

using chapter::matrix;

/// Not attention: J = sum(log(exp(X W) + C) .* D), a softplus-like layer with fan-out of X into both
/// products. Inputs {X, W, C, D}; C > 0.
struct SoftplusGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    Var<U> Z = matmul(in[0], in[1], "Z");
    Var<U> L = log(add(exp(Z, "E"), in[2], "EC"), "L");
    Var<U> XX = matmul(transpose(in[0], "Xt"), in[0], "XtX"); // X used twice more
    return add(sum(hadamard(L, in[3], "LD"), "J1"), sum(XX, "J2"), "J");
  }
};

inline std::vector<Matrix<double>> softplus_inputs(test::RandomMatrices& random) {
  return {random.make<double>(3, 2), random.make<double>(2, 4), random.make<double>(3, 4, 4, 12),
          random.make<double>(3, 4)};
}
inline const std::vector<std::string> softplus_names{"X", "W", "C", "D"};

/// x -> x^2 whose VJP is deliberately wrong: 3 x g instead of 2 x g.
struct SquareBrokenOp {
  static constexpr OpInfo info{.name = "square_broken", .node = "SquareBroken", .formula = "x^2, VJP 3 x g"};
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    Matrix<T> result = in[0].value().cwiseProduct(in[0].value());
    return common_tape(info, in).template record<SquareBrokenOp>(
        in, std::move(result), [](Backprop<T>& bp) { bp.accumulate(0, T(3) * bp.grad().cwiseProduct(bp.input(0))); },
        std::move(label));
  }
};
template <Real T> Var<T> square_broken(const Var<T>& a) { return SquareBrokenOp::apply<T>(operands(a), {}, "broken"); }

struct BrokenGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(hadamard(square_broken(matmul(in[0], in[1], "P")), in[2], "PD"), "J");
  }
};

/// J = sum(x .* x) with inputs {x, unused}: the second input is never read.
struct IgnoresSecond {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(hadamard(in[0], in[0], "xx"), "J");
  }
};

/// x -> x^2 with a right VJP but without an apply (so without a replay), as a user's op may be.
struct SquareNoReplayOp {
  static constexpr OpInfo info{.name = "square_no_replay", .node = "SquareNoReplay", .formula = "x^2"};
};
template <Real T> Var<T> square_without_replay(const Var<T>& a) {
  return a.tape().template record<SquareNoReplayOp>(
      {a}, Matrix<T>(a.value().cwiseProduct(a.value())),
      [](Backprop<T>& bp) { bp.accumulate(0, T(2) * bp.grad().cwiseProduct(bp.input(0))); }, "sq");
}

/// J = sum(square_without_replay(x W)) with inputs {x, W}.
struct NoReplayGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return sum(square_without_replay(matmul(in[0], in[1], "P")), "J");
  }
};

inline int count_failed(const CheckReport& r, const std::string& name) {
  int n = 0;
  for (const CheckResult& c : r.checks)
    n += !c.passed && c.name.starts_with(name);
  return n;
}

inline void print(const CheckReport& r) {
  for (const CheckResult& c : r.checks)
    MESSAGE((c.passed ? "pass " : "FAIL ")
            << c.name << " | " << c.input << ": max rel " << c.max_rel_error << " threshold " << c.threshold << " at ("
            << c.worst_row << ", " << c.worst_col << ")");
}

/// x -> x + c where c changes at every call: its replay does not reproduce the recorded value.
struct DriftingOp {
  static constexpr OpInfo info{.name = "drifting", .node = "Drifting", .formula = "x + (a counter)"};
  static inline int calls = 0;
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>&, std::string label) {
    const T c = T(++calls);
    return common_tape(info, in).template record<DriftingOp>(
        in, Matrix<T>(in[0].value().array() + c), [](Backprop<T>& bp) { bp.accumulate(0, bp.grad()); },
        std::move(label));
  }
};

/// J = sum(log(x)) with inputs {x}.
struct LogGraph {
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const { return sum(log(in[0]), "J"); }
};

} // namespace tapegrad::test

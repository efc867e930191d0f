#pragma once
// The structure-aware fuzz target: the fuzzer's bytes read as choices that build a graph over every op of
// BuiltinOps (ops/ops.hpp), so that nearly every input is a graph that gets recorded, swept backwards and
// checked per node, rather than text the JSON reader refuses. A user's mistake (a shape or domain an op
// refuses, a missing parameter) must end in a tapegrad::Error; anything else (another exception, a crash, a
// sanitizer report, a hang) is a bug. Shared by the libFuzzer build (tests/fuzz/fuzz_graph_ops.cpp) and the
// corpus replay that every ctest run does (tests/fuzz/replay.cpp).
//
// The bytes, in order (a byte read past the end is 0, so every input, even the empty one, is a graph):
//   1 byte: 1 to 4 inputs; per input 1 byte: its shape (a new matrix of 1 to 5 rows and columns, a tensor of
//   rank 0 to 4 with 1 byte per size, the previous input's, or empty); per entry 1 byte (a value);
//   then per step, up to 16 steps: 1 byte the op (an index into BuiltinOps), 1 byte per operand (an index
//   into the nodes so far), for a variadic op or one with optional operands 1 byte of extra operands, per parameter 1
//   byte whether it is given and the bytes its type needs. A step whose result would exceed 100 entries is left out.
// Values: a byte below 200 is (b - 100) / 16; the rest index a table of hard values (0, -0, +-inf, NaN, huge,
// tiny, subnormal, exp's overflow edge). A step the op refuses (tapegrad::Error) is left out, and the next
// step is built.
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/ops/ops.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace tapegrad::fuzz {

/// The fuzzer's bytes as a stream of choices; 0 once they run out.
class ByteSource {
public:
  ByteSource(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// A number in [0, n): one byte modulo n.
  std::size_t below(std::size_t n) { return n == 0 ? 0 : byte() % n; }
  double value() {
    static const double hard[] = {0.0,
                                  -0.0,
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::max(),
                                  -std::numeric_limits<double>::max(),
                                  std::numeric_limits<double>::min(),
                                  std::numeric_limits<double>::denorm_min(),
                                  -std::numeric_limits<double>::denorm_min(),
                                  std::numeric_limits<double>::epsilon(),
                                  1e4,
                                  -1e4,
                                  1e300,
                                  -1e300,
                                  710,
                                  -746,
                                  0.5,
                                  -0.5,
                                  1e-300};
    const std::uint8_t b = byte();
    if (b < 200) return (b - 100) / 16.0;
    return hard[(b - 200) % std::size(hard)];
  }
  long integer() {
    const std::uint8_t b = byte();
    if (b < 240) return static_cast<long>(b % 8) - 2;
    static const long hard[] = {std::numeric_limits<long>::max(),
                                std::numeric_limits<long>::min(),
                                1L << 40,
                                -(1L << 40),
                                255,
                                -255,
                                1000000,
                                65536};
    return hard[(b - 240) % std::size(hard)];
  }

private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

/// A parameter of `spec`'s type from the bytes, set in p; or left out (the op's default, or its error when the
/// parameter is required).
inline void draw_param(ByteSource& bytes, const ParamSpec& spec, Params<double>& p) {
  if (bytes.below(8) == 0) return; // left out
  switch (spec.type) {
  case ParamType::number: {
    const double v = bytes.value();
    p.set(spec.name, Number<double>{v, bytes.below(2) == 0 ? to_decimal(v) : std::string()});
    break;
  }
  case ParamType::integer:
    p.set(spec.name, bytes.integer());
    break;
  case ParamType::boolean:
    p.set(spec.name, bytes.below(2) == 1);
    break;
  case ParamType::constant: { // small ints (0 to 3) of rank 0 to 2: a mask, targets, indices
    Shape s;
    for (std::size_t d = bytes.below(3); d > 0; --d)
      s.push_back(static_cast<Eigen::Index>(1 + bytes.below(3)));
    Tensor<long> t = Tensor<long>::zeros(s);
    for (Eigen::Index e = 0; e < t.numel(); ++e)
      t[e] = static_cast<long>(bytes.below(4));
    p.set(spec.name, std::make_shared<const Tensor<long>>(std::move(t)));
    break;
  }
  case ParamType::choice:
    if (!spec.choices.empty()) p.set(spec.name, Choice{std::string(spec.choices[bytes.below(spec.choices.size())])});
    break;
  case ParamType::dims:
  case ParamType::integer_list:
  case ParamType::indices: {
    std::vector<long> v(bytes.below(7));
    for (long& i : v)
      i = bytes.integer();
    p.set(spec.name, v);
    break;
  }
  case ParamType::flags: {
    std::vector<bool> v(bytes.below(12));
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = bytes.below(2) == 1;
    p.set(spec.name, v);
    break;
  }
  }
}

/// The largest result a step may have (entries).
inline constexpr Eigen::Index max_entries = 100;

/// What the inputs did, over a run (the note quotes the share that reached backward).
struct GraphOpsStats {
  std::size_t inputs = 0, steps_recorded = 0, steps_refused = 0, reached_backward = 0, node_checked = 0;
  std::size_t steps_too_large = 0; ///< steps left out for a result of more than max_entries
  std::size_t no_step = 0;         ///< inputs whose every step was refused
  std::size_t refused_later = 0;   ///< inputs with a graph that backward or the per-node check refused
  std::string last_refusal;        ///< the message of the last of those
};

inline GraphOpsStats& graph_ops_stats() {
  static GraphOpsStats stats;
  return stats;
}

/// One input: build, record, backward, the per-node check. Returns true when it reached backward with at least
/// one op node recorded.
inline bool run_graph_ops(const std::uint8_t* data, std::size_t size) {
  GraphOpsStats& stats = graph_ops_stats();
  ++stats.inputs;
  ByteSource bytes(data, size);
  try {
    Tape<double> tape;
    std::vector<Var<double>> nodes;
    const std::size_t inputs = 1 + bytes.below(4);
    Shape shape;
    for (std::size_t k = 0; k < inputs; ++k) {
      // A shape byte: 0 to 24 a new matrix of 1 to 5 rows and columns; 25 an empty input (the tape refuses it);
      // 26 to 39 a tensor of rank (byte - 26) mod 5 with a byte per size (1 to 3); above that the previous
      // input's shape again, so that elementwise and broadcasting ops find partners.
      const std::size_t b = bytes.below(48);
      if (b < 25 || (k == 0 && b >= 40)) {
        shape = Shape{static_cast<Eigen::Index>(1 + b % 25 / 5), static_cast<Eigen::Index>(1 + b % 5)};
      } else if (b == 25) {
        shape = Shape{0, shape.rank() == 0 ? 1 : shape[shape.rank() - 1]};
      } else if (b < 40) {
        shape = Shape{};
        for (std::size_t d = (b - 26) % 5; d > 0; --d)
          shape.push_back(static_cast<Eigen::Index>(1 + bytes.below(3)));
      }
      Matrix<double> m(shape.rows(), shape.cols());
      for (Eigen::Index e = 0; e < m.size(); ++e)
        m.data()[e] = bytes.value();
      nodes.push_back(tape.input(m, shape, "in" + std::to_string(k)));
    }
    std::vector<bool> consumed(nodes.size(), false);
    const std::size_t steps = 1 + bytes.below(16);
    std::size_t recorded = 0;
    for (std::size_t s = 0; s < steps; ++s) {
      const OpInfo* op = BuiltinOps::infos[bytes.below(BuiltinOps::size)];
      std::vector<Var<double>> operands;
      std::vector<std::size_t> picked;
      const std::size_t arity = op->arity + (op->variadic                ? bytes.below(3)
                                             : op->optional_operands > 0 ? bytes.below(op->optional_operands + 1)
                                                                         : 0);
      for (std::size_t k = 0; k < arity; ++k) {
        picked.push_back(bytes.below(nodes.size()));
        operands.push_back(nodes[picked.back()]);
      }
      Params<double> p;
      for (const ParamSpec& spec : op->params)
        draw_param(bytes, spec, p);
      try {
        // A result of more than max_entries is left out before it is recorded: concat_rows over and over would
        // grow the graph until the per-node check's differences (quadratic in the size) time out.
        const Shape shape = BuiltinOps::visit<Shape>(
            op, [&]<class Op>() { return Op::shape(std::span<const Var<double>>(operands), p); });
        if (shape.numel() > max_entries) {
          ++stats.steps_too_large;
          continue;
        }
        const Var<double> v = BuiltinOps::visit<Var<double>>(op, [&]<class Op>() {
          return Op::template apply<double>(std::span<const Var<double>>(operands), p, "n" + std::to_string(s));
        });
        for (std::size_t k : picked)
          consumed[k] = true;
        nodes.push_back(v);
        consumed.push_back(false);
        ++recorded;
        ++stats.steps_recorded;
      } catch (const Error&) {
        ++stats.steps_refused; // the op refused these operands or parameters: the next step
      }
    }
    if (recorded == 0) {
      ++stats.no_step;
      return false;
    }
    // J: the sum of every node no step consumed (each summed to 1 x 1 first).
    Var<double> J;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      if (consumed[k]) continue;
      const Var<double> term = sum(nodes[k]);
      J = J.valid() ? add(J, term) : term;
    }
    tape.backward(J);
    double total = 0;
    for (std::size_t k = 0; k < inputs; ++k)
      total += nodes[k].grad().sum(); // NaN and Inf are fine: they are values, not crashes
    (void)total;
    ++stats.reached_backward;
    // Each node's VJP against differences of its op alone, double against double: the verdicts are not the
    // point (these values are often outside any op's domain), running the check on them without a crash is.
    const CheckReport report = node_check<double, double>(tape, tape, 1, 1e-6);
    (void)report.passed();
    ++stats.node_checked;
    return true;
  } catch (const Error& e) {
    ++stats.refused_later;
    stats.last_refusal = e.what();
    return false; // a clear error is the right answer to a graph the engine refuses
  }
}

} // namespace tapegrad::fuzz

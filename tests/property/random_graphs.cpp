// Property-based tests (rapidcheck) over random graphs: up to 15 op nodes over every op, random shapes,
// fan-out from inputs and from inner nodes, operands shared. rapidcheck prints its seed ("Using
// configuration: seed=...") and shrinks a failing graph to a small one; ctest fixes the seed and the number
// of graphs through RC_PARAMS (tests/CMakeLists.txt), RC_PARAMS="seed=N" reproduces a run.
//
// Properties:
//   1. the tape's gradient in double equals the 50-digit finite-difference reference, every coordinate,
//      within the checker's double threshold (check_gradient: also dual numbers and every node's VJP);
//   2. the same graph in 50 digits agrees with 100 digits to 1e-40;
//   3. the gradient does not depend on the order in which independent branches were recorded (50 digits,
//      1e-40);
//   4. grad (J1 + J2) = grad J1 + grad J2 for two graphs over the same inputs (50 digits, 1e-40).
#include "../support.hpp"

#include <tapegrad/autodiff/check.hpp>

#include <rapidcheck.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>

using namespace tapegrad;

namespace {

enum class Op {
  add,
  sub,
  mul,
  matmul,
  transpose,
  scale,
  exp,
  softmax,
  log_softmax,
  causal_softmax,
  padding_softmax,
  sum,
  slice_rows,
  slice_cols,
  concat_cols,
  cross_entropy,
  dropout
};
constexpr int op_count = 17;

const char* op_name(Op op) {
  static const char* names[] = {"add",        "sub",        "mul",         "matmul",         "transpose",       "scale",
                                "exp",        "softmax",    "log_softmax", "causal_softmax", "padding_softmax", "sum",
                                "slice_rows", "slice_cols", "concat_cols", "cross_entropy",  "dropout"};
  return names[static_cast<int>(op)];
}

/// One op node: its operands (node ids: inputs first, then steps), and integer parameters.
struct Step {
  Op op = Op::add;
  std::vector<int> args;
  int p = 0, q = 0;       // scale: factor p/4; slices: begin p, count q; causal: offset p
  std::vector<int> flags; // padding keys, cross-entropy targets, dropout pattern seed (flags[0])
  int rows = 0, cols = 0; // the result's shape
};

struct Recipe {
  std::vector<std::pair<int, int>> shapes; // inputs
  std::vector<std::vector<int>> values;    // entries k/8
  std::vector<Step> steps;
  int nodes() const { return static_cast<int>(shapes.size() + steps.size()); }
};

std::ostream& operator<<(std::ostream& os, const Recipe& r) {
  for (std::size_t k = 0; k < r.shapes.size(); ++k) {
    os << "in" << k << " (" << r.shapes[k].first << "x" << r.shapes[k].second << ") = [";
    for (int v : r.values[k])
      os << " " << v << "/8";
    os << " ]\n";
  }
  for (std::size_t s = 0; s < r.steps.size(); ++s) {
    const Step& st = r.steps[s];
    os << "n" << r.shapes.size() + s << " (" << st.rows << "x" << st.cols << ") = " << op_name(st.op) << "(";
    for (int a : st.args)
      os << " n" << a;
    os << " ; p " << st.p << ", q " << st.q << ", flags";
    for (int f : st.flags)
      os << " " << f;
    os << ")\n";
  }
  return os;
}

/// Random inputs (1 to 4, shapes up to 3x3, or the given shapes) and 1 to 15 op nodes whose operands are
/// picked among all earlier nodes, so inputs and inner nodes fan out and operands repeat.
rc::Gen<Recipe> gen_recipe(std::vector<std::pair<int, int>> fixed_shapes = {}) {
  return rc::gen::exec([fixed_shapes] {
    Recipe r;
    r.shapes = fixed_shapes;
    if (r.shapes.empty()) {
      const int n = *rc::gen::inRange(1, 5);
      for (int k = 0; k < n; ++k)
        r.shapes.emplace_back(*rc::gen::inRange(1, 4), *rc::gen::inRange(1, 4));
    }
    for (const auto& [rows, cols] : r.shapes)
      r.values.push_back(
          *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(rows * cols), rc::gen::inRange(-8, 9)));
    std::vector<std::pair<int, int>> shape = r.shapes;
    const auto pick = [&]() { return *rc::gen::inRange(0, static_cast<int>(shape.size())); };
    const int steps = *rc::gen::inRange(1, 16);
    for (int s = 0; s < steps; ++s) {
      Step st;
      st.op = static_cast<Op>(*rc::gen::inRange(0, op_count));
      const int a = pick();
      const int ar = shape[static_cast<std::size_t>(a)].first, ac = shape[static_cast<std::size_t>(a)].second;
      st.args = {a};
      st.rows = ar;
      st.cols = ac;
      // An operand of the shape an op needs, if any node has it; else the op becomes a transpose.
      const auto with_shape = [&](auto ok) -> int {
        std::vector<int> fit;
        for (int k = 0; k < static_cast<int>(shape.size()); ++k)
          if (ok(shape[static_cast<std::size_t>(k)])) fit.push_back(k);
        return fit.empty() ? -1 : *rc::gen::elementOf(fit);
      };
      switch (st.op) {
      case Op::add:
      case Op::sub:
      case Op::mul: {
        const int b = with_shape([&](auto s2) { return s2.first == ar && s2.second == ac; }); // a itself fits
        st.args.push_back(b);
        break;
      }
      case Op::matmul: {
        const int b = with_shape([&](auto s2) { return s2.first == ac; });
        if (b < 0) {
          st.op = Op::transpose;
          std::swap(st.rows, st.cols);
        } else {
          st.args.push_back(b);
          st.cols = shape[static_cast<std::size_t>(b)].second;
        }
        break;
      }
      case Op::concat_cols: {
        const int b = with_shape([&](auto s2) { return s2.first == ar; });
        st.args.push_back(b);
        st.cols = ac + shape[static_cast<std::size_t>(b)].second;
        break;
      }
      case Op::transpose:
        std::swap(st.rows, st.cols);
        break;
      case Op::scale:
        st.p = *rc::gen::inRange(-8, 9);
        break;
      case Op::causal_softmax:
        st.p = *rc::gen::inRange(-1, 3);
        break;
      case Op::padding_softmax:
        st.flags = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(ac), rc::gen::inRange(0, 2));
        break;
      case Op::sum:
      case Op::cross_entropy:
        st.rows = st.cols = 1;
        if (st.op == Op::cross_entropy)
          st.flags = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(ar), rc::gen::inRange(0, ac));
        break;
      case Op::slice_rows:
        st.p = *rc::gen::inRange(0, ar);
        st.q = *rc::gen::inRange(1, ar - st.p + 1);
        st.rows = st.q;
        break;
      case Op::slice_cols:
        st.p = *rc::gen::inRange(0, ac);
        st.q = *rc::gen::inRange(1, ac - st.p + 1);
        st.cols = st.q;
        break;
      case Op::dropout:
        st.flags = {*rc::gen::inRange(0, 1000)};
        break;
      default:
        break;
      }
      r.steps.push_back(st);
      shape.emplace_back(st.rows, st.cols);
    }
    return r;
  });
}

template <Real U> std::vector<Matrix<U>> input_values(const Recipe& r) {
  std::vector<Matrix<U>> out;
  for (std::size_t k = 0; k < r.shapes.size(); ++k) {
    Matrix<U> m(r.shapes[k].first, r.shapes[k].second);
    for (Eigen::Index i = 0; i < m.size(); ++i)
      m.data()[i] = U(r.values[k][static_cast<std::size_t>(i)]) / U(8);
    out.push_back(std::move(m));
  }
  return out;
}

/// Records step s from its operands.
template <Real U> Var<U> record_step(const Step& st, const std::vector<Var<U>>& v) {
  const Var<U>& a = v[static_cast<std::size_t>(st.args[0])];
  const auto b = [&] { return v[static_cast<std::size_t>(st.args[1])]; };
  switch (st.op) {
  case Op::add:
    return add(a, b());
  case Op::sub:
    return sub(a, b());
  case Op::mul:
    return hadamard(a, b());
  case Op::matmul:
    return matmul(a, b());
  case Op::transpose:
    return transpose(a);
  case Op::scale:
    return scale(a, U(st.p) / U(4));
  case Op::exp:
    return exp(scale(a, U(1) / U(4))); // keeps nested exponentials finite
  case Op::softmax:
    return softmax_rows(a);
  case Op::log_softmax:
    return log(softmax_rows(a));
  case Op::causal_softmax:
    return softmax_rows(causal_mask(a, st.p));
  case Op::padding_softmax: {
    std::vector<bool> keys;
    for (int f : st.flags)
      keys.push_back(f != 0);
    return softmax_rows(padding_mask(a, keys));
  }
  case Op::sum:
    return sum(a);
  case Op::slice_rows:
    return slice_rows(a, st.p, st.q);
  case Op::slice_cols:
    return slice_cols(a, st.p, st.q);
  case Op::concat_cols:
    return concat_cols(std::vector<Var<U>>{a, b()});
  case Op::cross_entropy: {
    const std::vector<long> targets(st.flags.begin(), st.flags.end());
    return cross_entropy(a, targets);
  }
  case Op::dropout: {
    std::mt19937_64 rng(static_cast<std::uint64_t>(st.flags[0]));
    return dropout(a, dropout_mask(a.rows(), a.cols(), 0.25, rng));
  }
  }
  throw std::logic_error("unknown op");
}

/// The recipe as a checked graph: steps recorded in `order` (a topological order; empty: as generated),
/// then J = sum over the nodes no step consumes of sum(n * n), summed in node order.
struct RecipeGraph {
  Recipe recipe;
  std::vector<int> order;
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    const Recipe& r = recipe;
    std::vector<Var<U>> v(static_cast<std::size_t>(r.nodes()));
    std::copy(in.begin(), in.end(), v.begin());
    const std::size_t ni = r.shapes.size();
    std::vector<int> steps = order;
    if (steps.empty()) {
      steps.resize(r.steps.size());
      std::iota(steps.begin(), steps.end(), 0);
    }
    for (int s : steps)
      v[ni + static_cast<std::size_t>(s)] = record_step(r.steps[static_cast<std::size_t>(s)], v);
    std::vector<bool> consumed(v.size(), false);
    for (const Step& st : r.steps)
      for (int a : st.args)
        consumed[static_cast<std::size_t>(a)] = true;
    Var<U> J;
    for (std::size_t k = ni; k < v.size(); ++k) {
      if (consumed[k]) continue;
      const Var<U> term = sum(hadamard(v[k], v[k]));
      J = J.valid() ? add(J, term) : term;
    }
    return J;
  }
};

std::vector<std::string> names_of(const Recipe& r) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < r.shapes.size(); ++k)
    names.push_back("in" + std::to_string(k));
  return names;
}

/// A random topological order of the steps (each after its operands), from `seed`.
std::vector<int> shuffled_order(const Recipe& r, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int ni = static_cast<int>(r.shapes.size());
  std::vector<bool> done(r.steps.size(), false);
  std::vector<int> order;
  while (order.size() < r.steps.size()) {
    std::vector<int> ready;
    for (int s = 0; s < static_cast<int>(r.steps.size()); ++s) {
      if (done[static_cast<std::size_t>(s)]) continue;
      bool ok = true;
      for (int a : r.steps[static_cast<std::size_t>(s)].args)
        ok = ok && (a < ni || done[static_cast<std::size_t>(a - ni)]);
      if (ok) ready.push_back(s);
    }
    const int s = ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng)];
    done[static_cast<std::size_t>(s)] = true;
    order.push_back(s);
  }
  return order;
}

/// The tape's gradient w.r.t. every input in U.
template <Real U> std::vector<Matrix<U>> gradients(const RecipeGraph& g) {
  return engine_gradient(g, input_values<U>(g.recipe), names_of(g.recipe)).grads;
}

/// 1e-40, made in float100.
float100 tol40() {
  using std::pow;
  return float100(1) / pow(float100(10), 40);
}

/// max over inputs of max_rel_error(a, b), in float100.
float100 worst(const std::vector<Matrix<float100>>& a, const std::vector<Matrix<float100>>& b) {
  float100 w(0);
  for (std::size_t k = 0; k < a.size(); ++k)
    w = std::max(w, max_rel_error(a[k], b[k]));
  return w;
}

std::vector<Matrix<float100>> widen(const std::vector<Matrix<float50>>& m) {
  std::vector<Matrix<float100>> out;
  for (const Matrix<float50>& x : m)
    out.push_back(convert<float100>(x));
  return out;
}

/// The recipe's J in double is finite and moderate (|J| < 1e12): graphs whose values overflow are
/// discarded, not checked.
bool moderate(const Recipe& r) {
  Tape<double> tape;
  const RecipeGraph g{r, {}};
  const double J = record_graph(tape, g, input_values<double>(r), names_of(r)).value()(0, 0);
  return std::isfinite(J) && std::abs(J) < 1e12;
}

/// Property 1 for one random graph; `fault` injects the overwrite fault into the engine's tape.
void tape_matches_finite_differences(bool fault) {
  const Recipe r = *gen_recipe();
  RC_PRE(moderate(r));
  CheckOptions opt;
  opt.reference_digits = 50;
  opt.directions = 1;
  opt.threads = 1;
  opt.progress = false;
  opt.tape_options.inject_overwrite_fault = fault;
  const CheckReport report =
      check_gradient<double, mpfr_real>(RecipeGraph{r, {}}, input_values<double>(r), names_of(r), opt);
  for (const CheckResult& c : report.checks)
    if (!c.passed) RC_LOG() << c.name << " " << c.input << ": rel " << c.max_rel_error << " > " << c.threshold << "\n";
  RC_LOG() << r;
  RC_ASSERT(report.passed());
}

} // namespace

TEST_CASE("property: the tape's gradient equals 50-digit finite differences within the double threshold") {
  MESSAGE("threshold: check_gradient<double, mpfr 50 digits>, fixed from double's epsilon before the run");
  CHECK(rc::check("tape (double) vs 50-digit finite differences, dual numbers, per-node VJPs",
                  [] { tape_matches_finite_differences(false); }));
}

TEST_CASE("property with teeth: with the overwrite-accumulation fault injected, property 1 is falsified") {
  MESSAGE("expected below: rapidcheck reports a falsified property and shrinks it to a small fan-out graph");
  CHECK_FALSE(rc::check("the same property on a tape that overwrites instead of adding (must fail)",
                        [] { tape_matches_finite_differences(true); }));
}

TEST_CASE("property: 50 digits agree with 100 digits to 1e-40") {
  CHECK(rc::check("tape in cpp_bin_float<50> vs cpp_bin_float<100>", [] {
    const Recipe r = *gen_recipe();
    RC_PRE(moderate(r));
    const RecipeGraph g{r, {}};
    const float100 w = worst(widen(gradients<float50>(g)), gradients<float100>(g));
    RC_LOG() << r << "worst relative difference " << to_string(w, 3) << " (tolerance 1e-40)\n";
    RC_ASSERT(w <= tol40());
  }));
}

TEST_CASE("property: the gradient does not depend on the recording order of independent branches") {
  CHECK(rc::check("steps recorded in a random topological order (50 digits, 1e-40)", [] {
    const Recipe r = *gen_recipe();
    RC_PRE(moderate(r));
    const std::uint64_t seed = *rc::gen::inRange<std::uint64_t>(0, 1000000);
    const std::vector<int> order = shuffled_order(r, seed);
    const float100 w =
        worst(widen(gradients<float50>(RecipeGraph{r, {}})), widen(gradients<float50>(RecipeGraph{r, order})));
    RC_LOG() << r << "order seed " << seed << "; worst relative difference " << to_string(w, 3) << "\n";
    RC_ASSERT(w <= tol40());
  }));
}

TEST_CASE("property: grad (J1 + J2) = grad J1 + grad J2") {
  CHECK(rc::check("two graphs over the same inputs, summed on one tape (50 digits, 1e-40)", [] {
    const Recipe r1 = *gen_recipe();
    const Recipe r2 = *gen_recipe(r1.shapes);
    Recipe r2v = r2;
    r2v.values = r1.values; // the same inputs
    RC_PRE(moderate(r1) && moderate(r2v));
    const RecipeGraph g1{r1, {}}, g2{r2v, {}};
    const auto both = [&](Tape<float50>& t, const std::vector<Var<float50>>& in) { return add(g1(t, in), g2(t, in)); };
    const std::vector<Matrix<float50>> x = input_values<float50>(r1);
    const std::vector<Matrix<float50>> together = engine_gradient(both, x, names_of(r1)).grads;
    std::vector<Matrix<float50>> apart = engine_gradient(g1, x, names_of(r1)).grads;
    const std::vector<Matrix<float50>> second = engine_gradient(g2, x, names_of(r1)).grads;
    for (std::size_t k = 0; k < apart.size(); ++k)
      apart[k] += second[k];
    const float100 w = worst(widen(together), widen(apart));
    RC_LOG() << "J1:\n" << r1 << "J2:\n" << r2v << "worst relative difference " << to_string(w, 3) << "\n";
    RC_ASSERT(w <= tol40());
  }));
}

// Property-based tests (rapidcheck) over random graphs: up to 15 op nodes over every op of BuiltinOps
// (ops/ops.hpp), each drawn through its descriptor (arity, parameter types, shape rule, domain), random shapes of
// rank 0 to 4 (later inputs often a trailing part of an earlier one's shape, so operands broadcast; now and then a
// convolution's input and weight), fan-out from inputs and from inner nodes, operands shared. rapidcheck prints its
// seed ("Using configuration: seed=...") and shrinks a failing graph to a small one; ctest fixes the seed and the
// number of graphs through RC_PARAMS (tests/CMakeLists.txt), RC_PARAMS="seed=N" reproduces a run.
//
// Properties:
//   1. the tape's gradient in double equals the 50-digit finite-difference reference, every coordinate,
//      within the checker's double threshold (check_gradient: also dual numbers and every node's VJP);
//   2. the same graph in 50 digits agrees with 100 digits to 1e-40 (errors relative to max(1, largest entry));
//   3. the gradient does not depend on the order in which independent branches were recorded (50 digits,
//      1e-40);
//   4. grad (J1 + J2) = grad J1 + grad J2 for two graphs over the same inputs (50 digits, 1e-40).
#include "../support.hpp"

#include <tapegrad/autodiff/check.hpp>

#include <rapidcheck.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

using namespace tapegrad;

namespace {

/// One parameter of a step, drawn by its type; numbers are quarters (exact in every binary precision).
struct StepParam {
  std::string_view name;
  ParamType type = ParamType::integer;
  int quarters = 0;
  long integer = 0;
  std::vector<long> indices;
  std::vector<bool> flags;
  bool boolean = false;
  std::string choice;
  std::shared_ptr<const Tensor<long>> constant; ///< an int or bool constant operand (bools as 1 and 0)
  bool absent = false;                          ///< an optional parameter left out
  bool defaulted = false; ///< a parameter with a default, left at it (as a graph file that omits it)
};

/// One op node: its op (one of BuiltinOps), its operands (node ids: inputs first, then steps), its
/// parameters, and the result's shape.
struct Step {
  const OpInfo* op = nullptr;
  std::vector<int> args;
  std::vector<StepParam> params;
  Shape shape;
};

template <Real U> Params<U> params_in(const Step& st) {
  Params<U> p;
  for (const StepParam& q : st.params) {
    if (q.absent) continue;
    if (q.defaulted) { // the default's text, made in U as a graph file's reader makes it
      for (const ParamSpec& spec : st.op->params)
        if (spec.name == q.name) set_default(p, spec);
      continue;
    }
    switch (q.type) {
    case ParamType::number:
      p.set(q.name, Number<U>{U(q.quarters) / U(4), to_decimal(q.quarters / 4.0)});
      break;
    case ParamType::integer:
      p.set(q.name, q.integer);
      break;
    case ParamType::indices:
    case ParamType::dims:
    case ParamType::integer_list:
      p.set(q.name, q.indices);
      break;
    case ParamType::flags:
      p.set(q.name, q.flags);
      break;
    case ParamType::boolean:
      p.set(q.name, q.boolean);
      break;
    case ParamType::choice:
      p.set(q.name, Choice{q.choice});
      break;
    case ParamType::constant:
      p.set(q.name, q.constant);
      break;
    }
  }
  return p;
}

struct Recipe {
  std::vector<Shape> shapes;            // inputs
  std::vector<std::vector<int>> values; // entries k/8
  std::vector<Step> steps;
  int nodes() const { return static_cast<int>(shapes.size() + steps.size()); }
};

std::ostream& operator<<(std::ostream& os, const Recipe& r) {
  for (std::size_t k = 0; k < r.shapes.size(); ++k) {
    os << "in" << k << " (" << shape_string(r.shapes[k]) << ") = [";
    for (int v : r.values[k])
      os << " " << v << "/8";
    os << " ]\n";
  }
  for (std::size_t s = 0; s < r.steps.size(); ++s) {
    const Step& st = r.steps[s];
    os << "n" << r.shapes.size() + s << " (" << shape_string(st.shape) << ") = " << st.op->name << "(";
    for (int a : st.args)
      os << " n" << a;
    for (const StepParam& q : st.params) {
      os << " ; " << q.name << " ";
      if (q.absent || q.defaulted) {
        os << (q.absent ? "absent" : "default");
        continue;
      }
      if (q.type == ParamType::number) os << q.quarters << "/4";
      if (q.type == ParamType::integer) os << q.integer;
      for (long i : q.indices)
        os << i << " ";
      for (bool f : q.flags)
        os << f;
      if (q.type == ParamType::boolean) os << (q.boolean ? "true" : "false");
      if (q.type == ParamType::choice) os << q.choice;
      if (q.constant) os << *q.constant;
    }
    os << ")\n";
  }
  return os;
}

template <Real U> std::vector<Matrix<U>> input_values(const Recipe& r) {
  std::vector<Matrix<U>> out;
  for (std::size_t k = 0; k < r.shapes.size(); ++k) {
    Matrix<U> m(r.shapes[k].rows(), r.shapes[k].cols());
    for (Eigen::Index i = 0; i < m.size(); ++i)
      m.data()[i] = U(r.values[k][static_cast<std::size_t>(i)]) / U(8);
    out.push_back(std::move(m));
  }
  return out;
}

/// Records step s from its operands, by its op's own apply.
template <Real U> Var<U> record_step(const Step& st, const std::vector<Var<U>>& v) {
  std::vector<Var<U>> a;
  for (int k : st.args)
    a.push_back(v[static_cast<std::size_t>(k)]);
  const Params<U> p = params_in<U>(st);
  return BuiltinOps::visit<Var<U>>(
      st.op, [&]<class Op>() { return Op::template apply<U>(std::span<const Var<U>>(a), p, {}); });
}

/// Whether every entry of m is finite and moderate (|x| <= 1e4): values that keep the finite differences
/// meaningful.
bool moderate_values(const Matrix<double>& m) {
  for (Eigen::Index e = 0; e < m.size(); ++e)
    if (!std::isfinite(m.data()[e]) || std::abs(m.data()[e]) > 1e4) return false;
  return true;
}

/// Whether node value m may be an operand whose domain is `d`: its entries stay at least 1/8 away from 0 (and
/// above it, for Domain::positive), so no finite-difference step crosses the edge of the domain.
bool in_domain(Domain d, const Matrix<double>& m) {
  if (d == Domain::any) return true;
  for (Eigen::Index e = 0; e < m.size(); ++e)
    if (!(d == Domain::positive ? m.data()[e] >= 0.125 : std::abs(m.data()[e]) >= 0.125)) return false;
  return true;
}

/// Whether node value m may be operand k of `op`: inside its domain, and, for an op with a kink (at 0: relu,
/// abs; ties: amax), at least 1/8 away from it, where central differences do not straddle it.
bool fits_operand(const OpInfo& op, std::size_t k, const Matrix<double>& m) {
  if (!in_domain(operand_domain(op, k), m)) return false;
  if (op.ties) { // amax: every two entries at least 1/8 apart, so no slice's maximum is within reach of a tie
    std::vector<double> v(m.data(), m.data() + m.size());
    std::sort(v.begin(), v.end());
    for (std::size_t e = 1; e < v.size(); ++e)
      if (!(v[e] - v[e - 1] >= 0.125)) return false;
  }
  return !op.kink || in_domain(Domain::nonzero, m);
}

/// An input's shape: rank 0 to 4, sizes 1 to 3, at most 12 entries.
rc::Gen<Shape> gen_shape() {
  return rc::gen::exec([] {
    for (;;) {
      std::vector<Eigen::Index> sizes(static_cast<std::size_t>(*rc::gen::inRange(0, 5)));
      for (Eigen::Index& n : sizes)
        n = *rc::gen::inRange(1, 4);
      const Shape s(sizes);
      if (s.numel() <= 12) return s;
    }
  });
}

/// A convolution's input (C, H, W) and weight (O, C, kh, kw), at most 12 entries each: rare among shapes drawn one
/// by one, so drawn together now and then (conv2d would hardly ever be drawn otherwise).
std::vector<Shape> gen_conv_pair() {
  for (;;) {
    const auto size = [](int most) { return static_cast<Eigen::Index>(*rc::gen::inRange(1, most + 1)); };
    const Eigen::Index c = size(2), o = size(2), kh = size(2), kw = size(2);
    const Shape input{c, kh + size(2) - 1, kw + size(2) - 1}, weight{o, c, kh, kw};
    if (input.numel() <= 12 && weight.numel() <= 12) return {input, weight};
  }
}

/// s without its first dim (a value that broadcasts against s), or s itself for rank 0.
Shape trailing(const Shape& s) { return s.rank() == 0 ? s : Shape(std::vector<Eigen::Index>(s.begin() + 1, s.end())); }

/// A parameter drawn by its type, around the operands' shape (shape() says whether it fits).
StepParam draw_param(const OpInfo& op, const ParamSpec& spec, const Shape& shape) {
  const int rows = static_cast<int>(shape.rows()), cols = static_cast<int>(shape.cols());
  const std::size_t rank = shape.rank();
  StepParam q;
  q.name = spec.name;
  q.type = spec.type;
  if (spec.type == ParamType::constant) { // a bool mask of the first operand's shape, or int targets, one per row
                                          // (a rank-0 target for a rank-1 operand)
    const auto c = std::find_if(op.const_operands.begin(), op.const_operands.end(),
                                [&](const ConstOperand& o) { return o.param == spec.name; });
    if (c == op.const_operands.end() || (c->optional && *rc::gen::arbitrary<bool>())) {
      q.absent = true;
      return q;
    }
    const Shape s = c->boolean ? shape : rank >= 2 ? Shape{shape[0]} : Shape{};
    const long classes = rank == 0 ? 1 : std::min<long>(shape[0], shape[rank - 1]);
    const std::vector<long> v = *rc::gen::container<std::vector<long>>(
        static_cast<std::size_t>(s.numel()), rc::gen::inRange<long>(0, c->boolean ? 2 : classes));
    q.constant = std::make_shared<const Tensor<long>>(s, v);
    return q;
  }
  if (!spec.in_files) { // a C++-only option: its default
    q.integer = std::stol(std::string(spec.default_value));
    return q;
  }
  if (spec.optional && *rc::gen::arbitrary<bool>()) {
    q.absent = true;
    return q;
  }
  // A quarter of the parameters that have a default keep it (eps = 1e-5 made from its decimal, offset 0);
  // at the nominal size, so that the share does not grow with rapidcheck's size.
  if (!spec.optional && !spec.required() && (spec.type == ParamType::number || spec.type == ParamType::integer) &&
      *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 4)) == 0) {
    q.defaulted = true;
    return q;
  }
  const std::size_t length = static_cast<std::size_t>(*rc::gen::element(rows, cols));
  switch (spec.type) {
  case ParamType::number:
    q.quarters = *rc::gen::inRange(-8, 9);
    break;
  case ParamType::integer:
    q.integer = *rc::gen::inRange(-2, 4);
    break;
  case ParamType::indices:
    q.indices = *rc::gen::container<std::vector<long>>(length, rc::gen::inRange<long>(0, std::max(rows, cols)));
    break;
  case ParamType::flags:
    q.flags = *rc::gen::container<std::vector<bool>>(length, rc::gen::arbitrary<bool>());
    break;
  case ParamType::dims: { // one or two dims of the operand, counted from either end (strides and paddings too)
    const long r = std::max<long>(1, static_cast<long>(rank));
    q.indices = *rc::gen::container<std::vector<long>>(static_cast<std::size_t>(*rc::gen::inRange(1, 3)),
                                                       rc::gen::inRange<long>(-r, r));
    break;
  }
  case ParamType::integer_list: { // the operand's sizes reversed, flattened, with a -1 or a new dim (what reshape
                                  // and expand take), a permutation of its dims (permute), its last sizes
                                  // (normalized_shape), or none (a one-entry value as rank 0)
    const std::vector<long> sizes(shape.begin(), shape.end());
    std::vector<long> minus = sizes, lead = sizes, dims(rank);
    if (!minus.empty()) minus[0] = -1;
    lead.insert(lead.begin(), 2);
    std::iota(dims.begin(), dims.end(), 0L);
    std::vector<long> permuted = dims;
    std::mt19937 shuffle(static_cast<unsigned>(*rc::gen::inRange(0, 1 << 16)));
    std::shuffle(permuted.begin(), permuted.end(), shuffle);
    const std::size_t k = rank == 0 ? 0 : static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(1, rank + 1));
    q.indices = *rc::gen::element(
        std::vector<long>(sizes.rbegin(), sizes.rend()), std::vector<long>{shape.numel()}, minus, lead, permuted,
        std::vector<long>(sizes.end() - static_cast<long>(k), sizes.end()), std::vector<long>{});
    break;
  }
  case ParamType::boolean:
    q.boolean = *rc::gen::arbitrary<bool>();
    break;
  case ParamType::choice:
    q.choice =
        std::string(*rc::gen::elementOf(std::vector<std::string_view>(spec.choices.begin(), spec.choices.end())));
    break;
  case ParamType::constant: // drawn above, before the C++-only options
    break;
  }
  return q;
}

/// Random inputs (1 to 4, shapes up to 3x3, or the given shapes and values) and 1 to 15 op nodes, each of an op drawn
/// from BuiltinOps with operands picked among all earlier nodes (so inputs and inner nodes fan out and
/// operands repeat) and parameters drawn by their type. What makes a step valid comes from the op itself:
/// its shape() accepts the operands and parameters, its operands lie in its domain, and its value, recorded
/// in double, is finite and moderate (-inf allowed where the op masks). A draw that is not valid is drawn
/// again.
rc::Gen<Recipe> gen_recipe(std::vector<Shape> fixed_shapes = {}, std::vector<std::vector<int>> fixed_values = {}) {
  return rc::gen::exec([fixed_shapes, fixed_values] {
    Recipe r;
    r.shapes = fixed_shapes;
    r.values = fixed_values;
    if (r.shapes.empty()) {
      if (*rc::gen::inRange(0, 8) == 0) r.shapes = gen_conv_pair();
      const int n = *rc::gen::inRange(1, 5);
      for (int k = 0; k < n; ++k)
        r.shapes.push_back(k > 0 && *rc::gen::inRange(0, 3) == 0 ? trailing(r.shapes.back()) : *gen_shape());
    }
    if (r.values.empty())
      for (const Shape& s : r.shapes)
        r.values.push_back(
            *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(s.numel()), rc::gen::inRange(-8, 9)));
    Tape<double> tape; // the values so far, for the domain and finiteness of each step
    std::vector<Var<double>> vals;
    const std::vector<Matrix<double>> x = input_values<double>(r);
    for (std::size_t k = 0; k < x.size(); ++k)
      vals.push_back(tape.input(x[k], r.shapes[k]));
    const int steps = *rc::gen::inRange(1, 16);
    for (int s = 0; s < steps; ++s) {
      for (int attempt = 0; attempt < 50; ++attempt) {
        Step st;
        // at the nominal size: rapidcheck's inRange grows with the size, which would favour the ops listed first
        st.op =
            BuiltinOps::infos[*rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::size_t>(0, BuiltinOps::size))];
        const int arity = static_cast<int>(st.op->arity) +
                          *rc::gen::inRange(0, st.op->variadic ? 2 : static_cast<int>(st.op->optional_operands) + 1);
        // The first operand, then the parameters (drawn around its shape), then the others: once the op has all
        // the operands it needs, preferring those its shape() accepts (conv2d's weight for its input, a
        // broadcasting partner), so ops with strict shape rules are drawn too.
        std::vector<ShapeOperand> shapes;
        const auto accepts = [&](const std::vector<ShapeOperand>& s, const Params<double>& p) {
          try {
            BuiltinOps::visit<Shape>(st.op, [&]<class Op>() { return Op::shape(std::span<const ShapeOperand>(s), p); });
            return true;
          } catch (const Error&) {
            return false;
          }
        };
        for (int k = 0; k < arity; ++k) {
          std::vector<int> fit, accepted;
          for (int c = 0; c < static_cast<int>(vals.size()); ++c)
            if (fits_operand(*st.op, static_cast<std::size_t>(k), vals[static_cast<std::size_t>(c)].value()))
              fit.push_back(c);
          if (fit.empty()) break;
          if (k > 0 && k + 1 >= static_cast<int>(st.op->arity)) {
            const Params<double> p = params_in<double>(st);
            for (int c : fit) {
              std::vector<ShapeOperand> with = shapes;
              with.emplace_back(vals[static_cast<std::size_t>(c)].shape(), "a");
              if (accepts(with, p)) accepted.push_back(c);
            }
          }
          st.args.push_back(*rc::gen::elementOf(accepted.empty() ? fit : accepted));
          shapes.emplace_back(vals[static_cast<std::size_t>(st.args.back())].shape(), "a");
          if (k == 0)
            for (const ParamSpec& spec : st.op->params)
              st.params.push_back(draw_param(*st.op, spec, shapes[0].shape()));
        }
        if (static_cast<int>(st.args.size()) < arity) continue;
        const Params<double> p = params_in<double>(st);
        Var<double> v;
        try {
          const Shape out = BuiltinOps::visit<Shape>(
              st.op, [&]<class Op>() { return Op::shape(std::span<const ShapeOperand>(shapes), p); });
          st.shape = out;
          v = record_step(st, vals);
        } catch (const Error&) {
          continue; // operands or parameters the op refuses
        }
        Matrix<double> finite = v.value();
        if (st.op->masks) finite = finite.unaryExpr([](double e) { return e == -INFINITY ? 0.0 : e; });
        if (!moderate_values(finite)) continue;
        vals.push_back(v);
        r.steps.push_back(std::move(st));
        break;
      }
    }
    return r;
  });
}

/// The recipe as a checked graph: steps recorded in `order` (a topological order; empty: as generated),
/// then J = sum over the nodes no step consumes of sum(n * n), summed in node order.
struct RecipeGraph {
  Recipe recipe;
  std::vector<int> order;
  template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& in) const {
    const Recipe& r = recipe;
    for (std::size_t k = 0; k < in.size(); ++k) // the checker hands each input over as a matrix
      tape.set_input_shape(in[k], r.shapes[k]);
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
    Var<U> J = sum(hadamard(v[0], v[0])); // every graph's J reads its first input at least
    for (std::size_t k = ni; k < v.size(); ++k) {
      // A node holding -inf (a mask no softmax consumed) is left out: its square would be +inf.
      if (consumed[k] || !v[k].value().allFinite()) continue;
      const Var<U> term = sum(hadamard(v[k], v[k]));
      J = add(J, term);
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

/// max over inputs of the largest |a - b| relative to max(1, the largest |b|), in float100. The floor of 1: a
/// gradient that is zero in truth (d/dx (sum log exp x)^2 where sum x = 0) comes out as rounding residue
/// (1e-50 in 50 digits, 1e-100 in 100), meaningless relative to itself.
float100 worst(const std::vector<Matrix<float100>>& a, const std::vector<Matrix<float100>>& b) {
  using std::abs;
  float100 w(0);
  for (std::size_t k = 0; k < a.size(); ++k) {
    float100 scale(1), diff(0);
    for (Eigen::Index e = 0; e < b[k].size(); ++e) {
      scale = std::max(scale, float100(abs(b[k].data()[e])));
      diff = std::max(diff, float100(abs(a[k].data()[e] - b[k].data()[e])));
    }
    w = std::max(w, float100(diff / scale));
  }
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
  RC_TAG(r.steps.size() < 5 ? "1-4 op nodes" : r.steps.size() < 10 ? "5-9 op nodes" : "10-15 op nodes");
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

TEST_CASE("property generator coverage: every op of the list drawn, every rank 0 to 4, broadcast operands and axis "
          "reductions") {
  std::map<std::string_view, int> drawn;
  int graphs = 0, broadcast = 0, axis = 0, defaulted = 0;
  std::map<std::size_t, int> ranks; // op nodes by the rank of their result
  CHECK(rc::check("the generator's graphs, counted", [&] {
    const Recipe r = *gen_recipe();
    ++graphs;
    const auto shape_of = [&](int id) {
      const std::size_t ni = r.shapes.size();
      return id < static_cast<int>(ni) ? r.shapes[static_cast<std::size_t>(id)]
                                       : r.steps[static_cast<std::size_t>(id) - ni].shape;
    };
    for (const Step& st : r.steps) {
      ++drawn[st.op->name];
      if (st.args.size() == 2 && st.op->shapes == broadcast_shape_rule &&
          !(shape_of(st.args[0]) == shape_of(st.args[1])))
        ++broadcast;
      ++ranks[st.shape.rank()];
      for (const StepParam& q : st.params) {
        axis += q.name == "axis" && !q.absent;
        defaulted += q.defaulted;
      }
    }
  }));
  // Fewer graphs than ctest runs (a run by hand without RC_PARAMS draws 100) may miss an op by chance: not a finding.
  REQUIRE_MESSAGE(graphs >= TAPEGRAD_COVERAGE_GRAPHS,
                  "the coverage case counts "
                      << TAPEGRAD_COVERAGE_GRAPHS << " graphs or more, this run drew " << graphs
                      << ": run it through ctest (ctest --test-dir build -R generator_coverage), "
                         "whose RC_PARAMS sets the seed and the count");
  std::ostringstream counts;
  for (const OpInfo* op : BuiltinOps::infos) {
    counts << " " << op->name << " " << drawn[op->name];
    CHECK_MESSAGE(drawn[op->name] > 0, "the generator never drew " << op->name);
  }
  MESSAGE(graphs << " graphs; op nodes drawn per op:" << counts.str() << "; broadcast nodes (operands of two shapes) "
                 << broadcast << ", axis reductions " << axis << ", parameters left at their default " << defaulted);
  std::ostringstream by_rank;
  for (std::size_t rank = 0; rank <= 4; ++rank) {
    by_rank << " rank " << rank << ": " << ranks[rank];
    CHECK_MESSAGE(ranks[rank] > 0, "no op node of rank " << rank);
  }
  MESSAGE("op nodes by the rank of their result:" << by_rank.str());
  CHECK(broadcast > 0);
  CHECK(axis > 0);
  CHECK(defaulted > 0);
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
    const Recipe r2v = *gen_recipe(r1.shapes, r1.values); // the same inputs
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

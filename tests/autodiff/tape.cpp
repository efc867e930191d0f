#include "../support.hpp"

#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

using namespace tapegrad;
using chapter::matrix;

TEST_CASE("a value used by n nodes receives the sum of n contributions") {
  Tape<double> tape;
  auto x = tape.input(matrix<double>({{1.5, -2.0}}), "x");
  auto y = add(add(scale(x, 2.0), scale(x, 3.0)), x); // 2x + 3x + x
  tape.backward(sum(y));
  CHECK(x.grad() == matrix<double>({{6.0, 6.0}}));
  CHECK(tape.node(x.index()).contributions == 3);
}

TEST_CASE("grad works for every node, and is zero where no backward reached") {
  Tape<double> tape;
  auto x = tape.input(matrix<double>({{1.0, 2.0}}), "x");
  auto unused = tape.input(matrix<double>({{4.0}}), "unused");
  auto y = scale(x, 3.0, "y");
  auto J = sum(hadamard(y, y), "J");
  tape.backward(J);
  CHECK(J.grad() == matrix<double>({{1.0}}));
  CHECK(y.grad() == matrix<double>({{6.0, 12.0}})); // d(y.y)/dy = 2y
  CHECK(x.grad() == matrix<double>({{18.0, 36.0}}));
  CHECK(unused.grad() == matrix<double>({{0.0}}));
}

TEST_CASE(
    "a constant takes no gradient, nor does a node made from constants only; the inputs' gradients are the same") {
  // x: 2 x 3, c and w constants: J = sum(x * exp(c)) + sum(w @ x^T), on 2 x 3 and 4 x 3 (non-square)
  const Matrix<double> xv = matrix<double>({{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}});
  const Matrix<double> cv = matrix<double>({{0.1, 0.2, -0.3}, {0.4, -0.5, 0.6}});
  Matrix<double> wv(4, 3);
  for (Eigen::Index k = 0; k < wv.size(); ++k)
    wv.data()[k] = static_cast<double>(k) - 5.5;
  const auto objective = [&](Tape<double>& tape, bool constants) {
    auto x = tape.input(xv, "x");
    auto c = constants ? tape.constant(cv, "c") : tape.input(cv, "c");
    auto w = constants ? tape.constant(wv, "w") : tape.input(wv, "w");
    auto k = exp(c, "k");
    tape.backward(add(sum(hadamard(x, k)), sum(matmul(w, transpose(x)))));
    return std::tuple{x, c, w, k};
  };
  Tape<double> with, without;
  const auto [x, c, w, k] = objective(with, true);
  const auto [x0, c0, w0, k0] = objective(without, false);
  CHECK(x.grad() == x0.grad()); // the same kernels on the same values: bit for bit
  CHECK(with.node(c.index()).contributions == 0);
  CHECK(with.node(w.index()).contributions == 0);
  CHECK(with.node(k.index()).contributions == 0);
  CHECK(without.node(k0.index()).contributions == 1);
  CHECK_FALSE(with.node(k.index()).needs_grad);
  CHECK(with.node(x.index()).needs_grad);
  CHECK_THROWS_WITH_AS(c.grad(), "grad(c): a constant (Tape::constant); no gradient is computed for it", UsageError);
  CHECK_THROWS_WITH_AS(k.grad(), "grad(k): made from constants (Tape::constant) only; no gradient is computed for it",
                       UsageError);
  CHECK(std::string(with.node(c.index()).op->node) == "Constant");
  // A constant of rank 3 (the Tensor overload) is one too, and its errors name it a constant
  const auto t = with.constant(Tensor<double>::constant({2, 1, 2}, 2.0), "t");
  CHECK_FALSE(with.node(t.index()).needs_grad);
  CHECK(with.node(t.index()).shape == Shape{2, 1, 2});
  CHECK_THROWS_WITH_AS(with.constant(Matrix<double>(0, 3), "e"),
                       "constant(e): empty (0x3); every value needs at least one entry", ShapeError);
}

TEST_CASE("each backward ADDS to the gradients; zero_grad forgets them") {
  Tape<double> tape;
  auto x = tape.input(matrix<double>({{1.0, -1.0}}), "x");
  auto h = exp(x, "h");
  auto J = sum(h, "J");
  tape.backward(J);
  const Matrix<double> once = x.grad();
  tape.backward(J);
  CHECK(x.grad() == 2.0 * once); // exactly twice, intermediates included: not three times
  CHECK(h.grad() == matrix<double>({{2.0, 2.0}}));
  tape.zero_grad();
  CHECK(x.grad() == Matrix<double>::Zero(1, 2));
  tape.backward(J);
  CHECK(x.grad() == once);
}

TEST_CASE("backward with a seed of any shape, and the errors of a missing or misshapen seed") {
  Tape<double> tape;
  auto x = tape.input(matrix<double>({{1.0, 2.0}, {3.0, 4.0}}), "x");
  auto y = scale(x, 2.0, "y");
  CHECK_THROWS_WITH_AS(tape.backward(y),
                       "backward(y): output is 2x2, not one entry; pass a seed of that shape: backward(out, seed)",
                       UsageError);
  CHECK_THROWS_WITH_AS(tape.backward(y, Matrix<double>::Ones(1, 2)),
                       "backward(y, seed): y is 2x2 but the seed is 1x2; shapes must match", ShapeError);
  tape.backward(y, matrix<double>({{1.0, 0.0}, {0.0, -1.0}}));
  CHECK(x.grad() == matrix<double>({{2.0, 0.0}, {0.0, -2.0}}));
}

TEST_CASE("labels name nodes; unlabelled nodes are named by index and type") {
  Tape<double> tape;
  auto x = tape.input(matrix<double>({{1.0}}), "X");
  auto y = exp(x);
  CHECK(x.label() == "X");
  CHECK(x.name() == "X");
  CHECK(y.name() == "node 1 (Exp)");
  tape.set_label(y, "E");
  CHECK(y.name() == "E");
  CHECK(y.described() == "E (1x1)");
}

TEST_CASE("clear() records afresh, and Vars of the old recording are refused") {
  Tape<double> tape;
  auto x = tape.input(matrix<double>({{1.0}}), "x");
  tape.clear();
  CHECK(tape.size() == 0);
  CHECK_THROWS_AS(exp(x), UsageError);
  CHECK_THROWS_WITH_AS(x.value(), "value: operand node 0 is from a recording that clear() or rewind() has discarded",
                       UsageError);
  auto z = tape.input(matrix<double>({{2.0}}), "z");
  CHECK(z.index() == 0);
  CHECK_THROWS_AS(x.value(), UsageError); // same index, but an older generation
}

TEST_CASE("operands from two tapes are refused, naming both") {
  Tape<double> t1, t2;
  auto a = t1.input(matrix<double>({{1.0}}), "a");
  auto b = t2.input(matrix<double>({{1.0}}), "b");
  CHECK_THROWS_WITH_AS(
      add(a, b), "add(a, b): a and b are on different tapes; all operands of an op must be on one tape", UsageError);
  CHECK_THROWS_AS(t1.backward(b), UsageError);
  CHECK_THROWS_AS(t1.grad(b), UsageError);
}

TEST_CASE("misuse: empty inputs, default Vars, nodes that were never recorded") {
  Tape<double> tape;
  CHECK_THROWS_AS(tape.input(Matrix<double>(0, 3), "E"), ShapeError);
  Var<double> nothing;
  CHECK_THROWS_AS(nothing.value(), UsageError);
  CHECK_THROWS_AS(tape.backward(nothing), UsageError);
  CHECK_THROWS_AS(tape.var(5), UsageError);
}

TEST_CASE("the tape is a list in recording order and backward visits it once, in reverse") {
  Tape<double> tape;
  auto x = tape.input(matrix<double>({{0.5}}), "x");
  Var<double> y = x;
  for (int i = 0; i < 200; ++i)
    y = add(y, y); // 2^200 paths: a graph search would never finish
  tape.backward(y);
  using std::ldexp;
  CHECK(x.grad()(0, 0) == ldexp(1.0, 200));
  CHECK(tape.size() == 201);
}

TEST_CASE("backward twice without zero_grad logs a warning; a tape option makes it an error") {
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  {
    Tape<double> tape;
    auto x = tape.input(matrix<double>({{2.0}}), "x");
    auto J = sum(hadamard(x, x), "J");
    tape.backward(J);
    CHECK(log.str().empty());
    tape.backward(J);
    CHECK(log.str().find("backward(J): the tape still holds gradients from an earlier backward") != std::string::npos);
    CHECK(x.grad()(0, 0) == 8.0); // it did add: 2 x 2x
    log.str("");
    tape.zero_grad();
    tape.backward(J);
    CHECK(log.str().empty()); // zeroed in between: no warning
  }
  spdlog::set_default_logger(previous);

  Tape<double> strict(TapeOptions{.stale_gradients_are_errors = true});
  auto x = strict.input(matrix<double>({{2.0}}), "x");
  auto J = sum(hadamard(x, x), "J");
  strict.backward(J);
  CHECK_THROWS_WITH_AS(strict.backward(J),
                       "backward(J): the tape still holds gradients from an earlier backward and this one adds to them "
                       "(stale gradients); call zero_grad() first for fresh ones",
                       UsageError);
  CHECK(x.grad()(0, 0) == 4.0); // nothing was added by the refused call
  strict.zero_grad();
  CHECK_NOTHROW(strict.backward(J));
}

TEST_CASE("find(label): the last node with that label, or a UsageError naming it") {
  Tape<double> tape;
  auto x = tape.input(Matrix<double>::Ones(2, 2), "X");
  auto y = exp(x, "Y");
  auto z = add(y, y, "Y"); // labels need not be unique: the last one wins
  CHECK(tape.find("X").index() == x.index());
  CHECK(tape.find("Y").index() == z.index());
  CHECK_THROWS_WITH_AS(tape.find("Q"), "find(Q): no node of the tape is labelled 'Q'", UsageError);
}

TEST_CASE("clear() keeps the buffers: the same graph recorded again allocates no values and gives the same "
          "gradients") {
  // S feeds the softmax and, recorded later, a scale: sweeping backwards, S's adjoint is made by the scale
  // and the softmax VJP then adds through the tape's scratch matrix (accumulate_with), on both recordings.
  const auto graph = [](const Var<double>& x, double c) {
    auto s = matmul(x, transpose(x), "S");
    auto a = softmax_rows(s, "A");
    return sum(add(add(hadamard(a, a), scale(a, 3.0)), scale(s, c)), "J");
  };
  Tape<double> tape;
  const Matrix<double> xv = matrix<double>({{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}});
  auto x = tape.input(xv, "x");
  tape.backward(graph(x, 0.5));
  const Matrix<double> first = x.grad();
  // The same gradient as two separate sweeps summed: J with c = 0 plus sum(0.5 S).
  Matrix<double> expected;
  {
    Tape<double> t1, t2;
    auto x1 = t1.input(xv), x2 = t2.input(xv);
    t1.backward(graph(x1, 0.0));
    t2.backward(sum(scale(matmul(x2, transpose(x2)), 0.5)));
    expected = x1.grad() + x2.grad();
  }
  {
    const double tol = 8 * std::numeric_limits<double>::epsilon();
    INFO("tolerance " << tol << " relative to max |expected| (decided from double's epsilon)");
    CHECK((first - expected).cwiseAbs().maxCoeff() <= tol * expected.cwiseAbs().maxCoeff());
  }
  std::vector<const double*> values;
  for (std::size_t i = 0; i < tape.size(); ++i)
    values.push_back(tape.node(i).value.data());

  tape.clear();
  auto x2 = tape.input(xv, "x");
  tape.backward(graph(x2, 0.5));
  CHECK(x2.grad() == first); // bit for bit
  REQUIRE(tape.size() == values.size());
  for (std::size_t i = 0; i < tape.size(); ++i) {
    INFO("node " << tape.node_name(i));
    CHECK(tape.node(i).value.data() == values[i]); // the same buffer, so no allocation
  }

  // A different graph after clear(): shapes that do not match get fresh buffers; all is still right.
  tape.clear();
  auto y = tape.input(matrix<double>({{2.0}}), "y");
  tape.backward(sum(scale(y, 5.0)));
  CHECK(y.grad() == matrix<double>({{5.0}}));
  CHECK(tape.size() == 3);
  CHECK(tape.stats().nodes == 3);

  tape.release(); // frees what clear() kept; the tape records afresh
  CHECK(tape.size() == 0);
  auto z = tape.input(matrix<double>({{1.0, 2.0}}), "z");
  tape.backward(sum(hadamard(z, z)));
  CHECK(z.grad() == matrix<double>({{2.0, 4.0}}));
}

TEST_CASE("anomaly mode names the first node whose value holds NaN or an infinity, with parents and coordinate") {
  const TapeOptions on{.detect_anomaly = true};
  Tape<double> tape(on);
  auto x = tape.input(matrix<double>({{1.0, 1e300}}), "x");
  CHECK_THROWS_WITH_AS(scale(x, -1e10, "L"),
                       "anomaly: the value of node 1 'L' (Scale, 1x2) holds -inf at (0, 1); its parents: node 0 'x' "
                       "(Input, 1x2)",
                       AnomalyError);
  Tape<double> nan_input(on);
  CHECK_THROWS_WITH_AS(nan_input.input(matrix<double>({{1.0}, {std::numeric_limits<double>::quiet_NaN()}}), "b"),
                       "anomaly: the value of node 0 'b' (Input, 2x1) holds NaN at (1, 0); its parents: none",
                       AnomalyError);
  // Off (the default): the same graph records, and the -inf is just a value.
  Tape<double> off;
  auto xo = off.input(matrix<double>({{1.0, 1e300}}), "x");
  CHECK(scale(xo, -1e10).value()(0, 1) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("anomaly mode names the VJP that made a gradient infinite, and the parent it went to") {
  // log of the smallest subnormal is finite (about -744.4), its derivative 1/x overflows to +inf.
  const double tiny = std::numeric_limits<double>::denorm_min();
  Tape<double> tape(TapeOptions{.detect_anomaly = true});
  auto x = tape.input(matrix<double>({{1.0, tiny}}), "x");
  auto J = sum(log(x, "L"), "J");
  CHECK(std::isfinite(J.value()(0, 0)));
  CHECK_THROWS_WITH_AS(tape.backward(J),
                       "anomaly: backward through node 1 'L' (Log, 1x2) made the gradient of its parent node 0 'x' "
                       "(Input, 1x2) hold +inf at (0, 1)",
                       AnomalyError);
  Tape<double> seeded(TapeOptions{.detect_anomaly = true});
  auto y = seeded.input(matrix<double>({{2.0}}), "y");
  CHECK_THROWS_WITH_AS(seeded.backward(y, matrix<double>({{std::numeric_limits<double>::quiet_NaN()}})),
                       "anomaly: the backward seed of node 0 'y' (Input, 1x1) holds NaN at (0, 0)", AnomalyError);
}

TEST_CASE("anomaly mode lets masks be -inf: masked attention with a fully masked row passes") {
  Tape<double> tape(TapeOptions{.detect_anomaly = true});
  auto s = tape.input(matrix<double>({{0.5, 1.0}, {2.0, -1.0}}), "S");
  auto m = causal_mask(s, -1, "M"); // row 0 sees nothing, row 1 sees key 0
  auto a = softmax_rows(m, "A");
  tape.backward(sum(hadamard(a, a)));
  CHECK(a.value()(0, 0) == 0.0);
  CHECK(s.grad().allFinite());
}

TEST_CASE("a value beyond the documented size limit is refused before allocation, naming the op") {
  Tape<double> tape;           // default limit 2^26 entries
  const Eigen::Index n = 8193; // n * n = 67125249 > 2^26 = 67108864
  REQUIRE(static_cast<std::size_t>(n) * static_cast<std::size_t>(n) > tape.options().max_entries);
  auto a = tape.input(Matrix<double>::Ones(n, 1), "a");
  auto b = tape.input(Matrix<double>::Ones(1, n), "b");
  CHECK_THROWS_WITH_AS(matmul(a, b),
                       "matmul(a, b): the result: 8193x8193 would hold more than 67108864 entries, "
                       "the limit of one value (TapeOptions::max_entries); refused before allocating",
                       LimitError);
  CHECK(tape.size() == 2);                                     // nothing recorded
  CHECK(matmul(b, a).value()(0, 0) == static_cast<double>(n)); // the other way round is 1x1

  Tape<double> small(TapeOptions{.max_entries = 6});
  CHECK_THROWS_AS(small.input(Matrix<double>::Zero(3, 3), "z"), LimitError);
  auto y = small.input(Matrix<double>::Zero(2, 3), "y");
  CHECK_THROWS_WITH_AS(concat_cols(std::vector{y, y}),
                       "concat_cols(y, ...): the result: 2x6 would hold more than 6 entries, the limit of one value "
                       "(TapeOptions::max_entries); refused before allocating",
                       LimitError);
}

TEST_CASE("rewind(n) keeps the first n nodes and their Vars, forgets the rest and every gradient") {
  Tape<double> tape;
  auto x = tape.input(matrix<double>({{1.0, 2.0}}), "x");
  auto w = tape.input(matrix<double>({{3.0}, {-1.0}}), "w");
  const double* x_data = x.value().data();
  auto y = matmul(x, w, "y");
  tape.backward(sum(hadamard(y, y)));
  const Matrix<double> first = w.grad();

  tape.rewind(2);
  CHECK(tape.size() == 2);
  CHECK_THROWS_AS(y.value(), UsageError);        // forgotten
  CHECK(x.value().data() == x_data);             // kept in place, not copied
  CHECK(w.grad() == Matrix<double>::Zero(2, 1)); // gradients forgotten
  auto y2 = matmul(x, w, "y");
  tape.backward(sum(hadamard(y2, y2))); // no stale-gradient warning: rewind forgot them
  CHECK(w.grad() == first);
  CHECK(y2.index() == y.index());
  CHECK_THROWS_AS(y.value(), UsageError); // the slot is reused by another recording: the old Var stays invalid

  CHECK_THROWS_WITH_AS(tape.rewind(7), "rewind(7): the tape has only 5 nodes", UsageError);
}

TEST_CASE("references from value(), grad(), label() and node() stay valid while 10,000 more nodes are recorded") {
  // Before: the nodes lived in a std::vector, and `const auto& v = x.value(); exp(x); v(0, 0)` read freed
  // memory once the vector grew (a heap-use-after-free under AddressSanitizer).
  Tape<double> tape;
  const Var<double> x = tape.input(Matrix<double>::Constant(2, 3, 0.25), "x");
  const Var<double> y = exp(x, "y");
  tape.backward(sum(y));
  const Matrix<double>& v = x.value();
  const Matrix<double>& g = x.grad();
  const std::string& label = y.label();
  const Tape<double>::Node& node = tape.node(y.index());
  const Matrix<double> g_before = g, y_before = y.value();
  Var<double> z = y;
  for (int k = 0; k < 10000; ++k)
    z = scale(z, 1.0);
  CHECK(tape.size() == 10003);
  CHECK(v(0, 0) == 0.25);
  CHECK(v(1, 2) == 0.25);
  CHECK(g == g_before);
  CHECK(label == "y");
  CHECK(node.op == &ExpOp::info);
  CHECK(node.value == y_before);
}

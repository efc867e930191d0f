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
                       "backward(y): output is 2x2, not 1x1; pass a seed of that shape: backward(out, seed)",
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
  CHECK_THROWS_WITH_AS(x.value(), "value: operand node 0 is from a recording that clear() has discarded", UsageError);
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

#include "../chapter_expected.hpp"
#include "../support.hpp"

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("worked example 1: A, O, J and every gradient match the chapter", T, TAPEGRAD_TEST_TYPES) {
  const test::Example1Expected<T> e = test::example1_expected<T>();
  const T tol = test::exact_tolerance<T>();
  CHECK(tol <= test::stated_example_bound<T>());

  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, chapter::example1<T>());
  const AttentionNodes<T>& n = p.nodes;
  tape.backward(p.J);

  test::check_close<T>("A", n.A.value(), e.A, tol);
  test::check_close<T>("O", n.O.value(), e.O, tol);
  test::check_close<T>("J", p.J.value(), Matrix<T>::Constant(1, 1, e.J), tol);
  test::check_close<T>("dO = G", n.O.grad(), chapter::example1<T>().G, tol);
  test::check_close<T>("dA", n.A.grad(), e.dA, tol);
  test::check_close<T>("dS", n.S.grad(), e.dS, tol);
  test::check_close<T>("dQ", n.Q.grad(), e.dQ, tol);
  test::check_close<T>("dK", n.K.grad(), e.dK, tol);
  test::check_close<T>("dV", n.V.grad(), e.dV, tol);
  // X = I, so dW = X^T dQ etc. equal the local gradients
  test::check_close<T>("dWq", n.Wq.grad(), e.dQ, tol);
  test::check_close<T>("dWk", n.Wk.grad(), e.dK, tol);
  test::check_close<T>("dWv", n.Wv.grad(), e.dV, tol);
  test::check_close<T>("dX", n.X.grad(), e.dX, tol);
}

TEST_CASE_TEMPLATE("worked example 2, identical keys: J = 5, dQ = 0 exactly, dK is not zero", T, TAPEGRAD_TEST_TYPES) {
  using std::log;
  const T tol = test::exact_tolerance<T>();
  CHECK(tol <= test::stated_example_bound<T>());
  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, chapter::example2<T>());
  tape.backward(p.J);
  const T h = T(1) / T(2);
  test::check_close<T>("A", p.nodes.A.value(), Matrix<T>::Constant(2, 2, h), tol);
  test::check_close<T>("O", p.nodes.O.value(), matrix<T>({{T(1), T(2)}, {T(1), T(2)}}), tol);
  test::check_close<T>("J", p.J.value(), Matrix<T>::Constant(1, 1, T(5)), tol);
  const Matrix<T> dS = matrix<T>({{h, -h}, {T(-2), T(2)}});
  test::check_close<T>("dS", p.nodes.S.grad(), dS, tol);
  // Each score row is constant whatever Q is, so dQ vanishes: checked in absolute terms.
  CHECK(p.nodes.Q.grad().cwiseAbs().maxCoeff() <= tol);
  CHECK(p.nodes.Wq.grad().cwiseAbs().maxCoeff() <= tol);
  // dK = dS^T Q / sqrt 2 = ln 3 dS^T
  const Matrix<T> dK = log(T(3)) * Matrix<T>(dS.transpose());
  test::check_close<T>("dK", p.nodes.K.grad(), dK, tol);
  CHECK(p.nodes.K.grad().cwiseAbs().maxCoeff() > T(1) / T(2));
}

/// A seeded asymmetric attention problem, T x D input, D x d, D x d, D x r weights.
template <Real T> AttentionInputs<T> random_problem(test::RandomMatrices& random, int t, int D, int d, int r) {
  return {random.make<T>(t, D), random.make<T>(D, d), random.make<T>(D, d), random.make<T>(D, r), random.make<T>(t, r)};
}

TEST_CASE_TEMPLATE("fan-out: dX is the SUM of the three branches through Q, K and V", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(41);
  const AttentionInputs<T> in = random_problem<T>(random, 3, 4, 2, 3);
  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, in);
  tape.backward(p.J);
  const AttentionNodes<T>& n = p.nodes;
  const Matrix<T> via_Q = product(n.Q.grad(), Matrix<T>(in.Wq.transpose()));
  const Matrix<T> via_K = product(n.K.grad(), Matrix<T>(in.Wk.transpose()));
  const Matrix<T> via_V = product(n.V.grad(), Matrix<T>(in.Wv.transpose()));
  const T tol = test::exact_tolerance<T>();
  test::check_close<T>("dX = dQ Wq^T + dK Wk^T + dV Wv^T", n.X.grad(), via_Q + via_K + via_V, tol);
  for (const Matrix<T>* branch : {&via_Q, &via_K, &via_V})
    CHECK(max_rel_error<T>(n.X.grad(), *branch) > T(1) / T(100));
  CHECK(tape.node(n.X.index()).contributions == 3);
}

TEST_CASE_TEMPLATE("attention gradients against central differences on a seeded asymmetric case", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(43);
  const AttentionInputs<T> in = random_problem<T>(random, 3, 4, 2, 3);
  test::check_op_gradient<T>("attention O wrt X, Wq, Wk, Wv", {in.X, in.Wq, in.Wk, in.Wv},
                             [](const auto& v) { return attention(v[0], v[1], v[2], v[3]).O; });
}

TEST_CASE_TEMPLATE("invariants: rows of A sum to 1, A >= 0, rows of dS sum to 0", T, TAPEGRAD_TEST_TYPES) {
  using std::abs;
  test::RandomMatrices random(47);
  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, random_problem<T>(random, 4, 3, 3, 2));
  tape.backward(p.J);
  const T tol = test::exact_tolerance<T>();
  for (Eigen::Index i = 0; i < 4; ++i) {
    CHECK(abs(p.nodes.A.value().row(i).sum() - T(1)) <= tol);
    CHECK(p.nodes.A.value().row(i).minCoeff() >= T(0));
    CHECK(abs(p.nodes.S.grad().row(i).sum()) <= tol * p.nodes.S.grad().cwiseAbs().maxCoeff());
  }
}

TEST_CASE_TEMPLATE("the convex-combination bound: each O column lies within its V column's range", T,
                   TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(53);
  Tape<T> tape;
  const AttentionProblem<T> p = record_attention(tape, random_problem<T>(random, 5, 3, 2, 4));
  const Matrix<T>& O = p.nodes.O.value();
  const Matrix<T>& V = p.nodes.V.value();
  for (Eigen::Index l = 0; l < V.cols(); ++l) {
    CHECK(O.col(l).minCoeff() >= V.col(l).minCoeff() - test::exact_tolerance<T>());
    CHECK(O.col(l).maxCoeff() <= V.col(l).maxCoeff() + test::exact_tolerance<T>());
  }
}

#include "../support.hpp"

#include <tapegrad/autodiff/check.hpp>

using namespace tapegrad;
using chapter::matrix;

TEST_CASE_TEMPLATE("cross_entropy: value from its definition, ln 3 for three equal logits", T, TAPEGRAD_TEST_TYPES) {
  using std::log;
  Tape<T> tape;
  // row 0: equal logits, loss ln 3; row 1: logits [ln 1, ln 2, ln 5] (probabilities 1/8, 2/8, 5/8), target 2
  auto x = tape.input(matrix<T>({{T(7), T(7), T(7)}, {T(0), log(T(2)), log(T(5))}}), "logits");
  auto loss = cross_entropy(x, {1, 2}, "L");
  const T expected = (log(T(3)) + log(T(8) / T(5))) / T(2);
  test::check_close<T>("cross_entropy of [7,7,7]/1 and [0,ln2,ln5]/2", loss.value(),
                       Matrix<T>::Constant(1, 1, expected), test::exact_tolerance<T>());
  tape.backward(loss);
  // d/dlogits = (softmax - onehot) / m
  const Matrix<T> g = matrix<T>({{T(1) / T(6), -T(1) / T(3), T(1) / T(6)}, {T(1) / T(16), T(1) / T(8), -T(3) / T(16)}});
  test::check_close<T>("cross_entropy gradient (softmax - onehot)/m", x.grad(), g, test::exact_tolerance<T>());
}

TEST_CASE_TEMPLATE("cross_entropy: gradient against central differences", T, TAPEGRAD_TEST_TYPES) {
  test::RandomMatrices random(47);
  test::check_op_gradient<T>("cross_entropy", {random.make<T>(4, 5)}, [](const auto& in) {
    return cross_entropy(in[0], {0, 4, 2, 2});
  });
}

TEST_CASE_TEMPLATE("cross_entropy: logits of +-1e4 give a finite loss and gradient", T, TAPEGRAD_TEST_TYPES) {
  const T big(10000);
  Tape<T> tape;
  auto x = tape.input(matrix<T>({{big, -big, T(0)}, {-big, big, big}}), "logits");
  auto loss = cross_entropy(x, {1, 0});
  tape.backward(loss);
  CHECK(is_finite(loss.value()(0, 0)));
  // row 0 target 1: 2e4 (+ a tail below eps); row 1 target 0: 2e4 + ln 2
  using std::log;
  const T expected = (T(2) * big + T(2) * big + log(T(2))) / T(2);
  CHECK(abs(loss.value()(0, 0) - expected) <= test::exact_tolerance<T>() * expected);
  for (Eigen::Index k = 0; k < x.grad().size(); ++k)
    CHECK(is_finite(x.grad().data()[k]));
  CHECK(x.grad()(1, 1) == T(1) / T(4)); // softmax 1/2, divided by m = 2
}

TEST_CASE("cross_entropy: wrong target count or a target out of range is a ShapeError") {
  Tape<double> tape;
  auto x = tape.input(Matrix<double>::Zero(2, 3), "logits");
  CHECK_THROWS_WITH_AS(cross_entropy(x, {0}),
                       "cross_entropy(logits): logits is 2x3 but there are 1 targets; it needs one per row",
                       ShapeError);
  CHECK_THROWS_WITH_AS(cross_entropy(x, {0, 3}),
                       "cross_entropy(logits): target 1 is 3 but logits is 2x3; targets are column indices 0..2",
                       ShapeError);
}

namespace {
struct CrossEntropyGraph {
  std::vector<long> targets;
  template <Real U> Var<U> operator()(Tape<U>&, const std::vector<Var<U>>& in) const {
    return cross_entropy(in[0], targets, "L");
  }
};
} // namespace

TEST_CASE("cross_entropy: the gradient in double checked against 50-digit finite differences, also at +-1e4") {
  test::RandomMatrices random(67);
  Matrix<double> moderate = random.make<double>(3, 8);
  Matrix<double> large = moderate * 1e4 / 1.125; // entries up to +-1e4
  for (const Matrix<double>* logits : {&moderate, &large}) {
    CheckOptions opt;
    opt.reference_digits = 50;
    const CheckReport r = check_gradient<double, mpfr_real>(CrossEntropyGraph{{7, 0, 3}}, {*logits}, {"logits"}, opt);
    for (const CheckResult& c : r.checks)
      MESSAGE(c.name << " " << c.input << ": rel " << c.max_rel_error << " <= " << c.threshold << " " << c.passed);
    CHECK(r.passed());
  }
}

TEST_CASE("cross_entropy: a masked target or an entirely -inf row is a DomainError naming the row") {
  Tape<double> tape;
  auto a = tape.input(matrix<double>({{0, 1}, {-INFINITY, 2}}), "L");
  CHECK_THROWS_WITH_AS(cross_entropy(a, {1, 0}, "J"),
                       "cross_entropy(L) for 'J': row 1 of L has -inf at its target 0: its loss is infinite (the "
                       "target is masked)",
                       DomainError);
  CHECK(is_finite(cross_entropy(a, {1, 1}).value()(0, 0))); // the masked entry elsewhere in the row is fine
  auto b = tape.input(matrix<double>({{-INFINITY, -INFINITY}}), "M");
  CHECK_THROWS_WITH_AS(cross_entropy(b, {0}),
                       "cross_entropy(M): row 0 of M has -inf at its target 0 (the row is entirely -inf): its loss is "
                       "infinite (the target is masked)",
                       DomainError);
}

TEST_CASE_TEMPLATE("cross_entropy and nll_loss with int targets: reduction, ignore_index (torch's semantics)", T,
                   TAPEGRAD_TEST_TYPES) {
  using std::exp;
  using std::log;
  test::RandomMatrices random(94);
  const Tensor<T> L = random.tensor<T>({4, 3});
  const Tensor<long> t(Shape{4}, std::vector<long>{2, 0, 1, 2});
  Tape<T> tape;
  const Var<T> x = tape.input(L, "L");
  // the definition, row by row: logsumexp - the target's logit; row 1 ignored below
  std::vector<T> term;
  for (Eigen::Index i = 0; i < 4; ++i) {
    T s(0);
    for (Eigen::Index k = 0; k < 3; ++k)
      s += exp(L.at({i, k}));
    term.push_back(log(s) - L.at({i, t[i]}));
  }
  const T all = term[0] + term[1] + term[2] + term[3], kept = term[0] + term[2] + term[3];
  const T tol = test::exact_tolerance<T>() * T(4);
  const Var<T> mean = cross_entropy(x, t);
  CHECK(mean.shape() == Shape{});
  CHECK(abs(T(mean.value()(0, 0) - all / T(4))) <= tol);
  CHECK(abs(T(cross_entropy(x, t, LossOptions{.sum = true}).value()(0, 0) - all)) <= tol);
  CHECK(abs(T(cross_entropy(x, t, LossOptions{.ignore_index = 0}).value()(0, 0) - kept / T(3))) <= tol);
  // nll_loss of log_softmax is cross_entropy
  CHECK(abs(T(nll_loss(log_softmax(x), t, LossOptions{.ignore_index = 0}).value()(0, 0) - kept / T(3))) <= tol);
  // one row: (C) with a rank-0 target
  const Var<T> row = tape.input(Tensor<T>(Shape{3}, std::vector<T>{L.at({0, 0}), L.at({0, 1}), L.at({0, 2})}), "r");
  CHECK(abs(T(cross_entropy(row, Tensor<long>(Shape{}, std::vector<long>{2})).value()(0, 0) - term[0])) <= tol);
  CHECK_THROWS_WITH_AS(cross_entropy(x, Tensor<long>(Shape{4}, std::vector<long>{2, 3, 1, -100})),
                       "cross_entropy(L): the target of row 1 is 3, outside [0, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(
      cross_entropy(x, Tensor<long>(Shape{4}, std::vector<long>{2, 0, 1, -100}), LossOptions{.ignore_index = 7}),
      "cross_entropy(L): the target of row 3 is -100, outside [0, 3) and not the ignore_index 7", ShapeError);
  const Tensor<long> ignored(Shape{4}, std::vector<long>{-1, -1, -1, -1});
  CHECK_THROWS_WITH_AS(cross_entropy(x, ignored, LossOptions{.ignore_index = -1}),
                       "cross_entropy(L): every row is ignored, so the mean is 0 / 0 (use \"reduction\": \"sum\")",
                       ShapeError);
  const Var<T> none = cross_entropy(x, ignored, LossOptions{.sum = true, .ignore_index = -1});
  CHECK(none.value()(0, 0) == T(0));
  CHECK_THROWS_WITH_AS(cross_entropy(x, Tensor<long>(Shape{3}, std::vector<long>{0, 1, 2})),
                       "cross_entropy(L): L is 4x3 and the targets [3]; it takes (N, C) with N targets, or (C) with a "
                       "rank-0 target",
                       ShapeError);

  using V = std::vector<Var<T>>;
  test::check_tensor_gradient<T>("cross_entropy mean", {L}, [t](const V& in) { return cross_entropy(in[0], t); });
  test::check_tensor_gradient<T>("cross_entropy sum, row 1 ignored", {L}, [t](const V& in) {
    return cross_entropy(in[0], t, LossOptions{.sum = true, .ignore_index = 0});
  });
  test::check_tensor_gradient<T>("nll_loss mean, row 1 ignored", {L},
                                 [t](const V& in) { return nll_loss(in[0], t, LossOptions{.ignore_index = 0}); });
  test::check_tensor_gradient<T>("nll_loss of one row", {random.tensor<T>({5})}, [](const V& in) {
    return nll_loss(in[0], Tensor<long>(Shape{}, std::vector<long>{3}));
  });
}

#pragma once
// The per-node check: each recorded op's VJP alone against finite differences of that op alone, naming the
// node whose VJP is wrong; nodes it cannot replay are listed, never skipped silently.

#include "input_differences.hpp"
#include "kink_guard.hpp"
#include "recording.hpp"
#include "tolerances.hpp"

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace tapegrad {

/// Per node: every recorded op's VJP alone, against sixth-order differences of that op alone, with a seeded
/// random upstream gradient W; names the node whose VJP is wrong. The VJP is the engine's (T, from `tape`);
/// the differences are taken in R with the same op replayed from `reference` (the same graph recorded on
/// Tape<R>), at the T parent values converted exactly, so a steep op (log near 0) is resolved too.
/// At the coordinates of a kinked op's operand (relu, abs) within the differences' reach of the kink, the VJP
/// is not judged: the kink guard's warning names them (a poor test point, not a VJP failure).
/// No node is skipped silently: one whose op has no replay is listed as not checked (a warning, or a
/// failure when `strict`), and one whose replay does not reproduce its recorded value bit for bit, in T or
/// in R, is a failure (its VJP cannot be checked against differences of a different function).
template <Real T, Real R> CheckReport node_check(const Tape<T>& tape, const Tape<R>& reference, std::uint64_t seed,
                                                 const R& threshold, unsigned threads = 1,
                                                 const R& engine_tol = exact_convert<R>(engine_tolerance<T>()),
                                                 bool strict = false) {
  if (tape.size() != reference.size())
    throw UsageError("per-node check: the engine's tape has " + std::to_string(tape.size()) +
                     " nodes but the reference's " + std::to_string(reference.size()) +
                     "; the graph must record the same nodes in every precision");
  CheckReport report;
  std::mt19937_64 rng(seed);
  const auto same = [](const auto& a, const auto& b) { // bit for bit, NaN where NaN
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Eigen::Index e = 0; e < a.size(); ++e)
      if (!(a.data()[e] == b.data()[e] || (is_nan(a.data()[e]) && is_nan(b.data()[e])))) return false;
    return true;
  };
  const auto refuse = [&](std::size_t i, std::string note) {
    CheckResult r;
    r.kind = CheckKind::node_vjp;
    r.name = kind_name(r.kind);
    r.input = tape.node_name(i);
    r.engine_precision = precision_name<T>();
    r.reference_precision = precision_name<R>();
    r.step = "none";
    r.ratio = std::numeric_limits<double>::infinity();
    r.note = std::move(note);
    r.node = static_cast<long>(i);
    r.node_name = tape.node_name(i);
    report.checks.push_back(std::move(r));
  };
  for (std::size_t i = 0; i < tape.size(); ++i) {
    const auto& node = tape.node(i);
    if (node.is_input() || node.op->detaches) continue; // detach's VJP is 0 by definition, not by its values
    if (reference.node(i).op != node.op) {
      refuse(i, "the reference recorded another op here (" + std::string(reference.node(i).op->node) +
                    "): a graph that chooses its ops by looking at values; its VJP is not checked");
      continue;
    }
    if (node.replay == nullptr || reference.node(i).replay == nullptr) {
      const std::string why = "not checked: " + tape.node_name(i) + " (" + std::string(node.op->node) +
                              ") has no replay, so its VJP cannot be evaluated alone";
      report.warnings.push_back("per-node check: " + why);
      if (strict) refuse(i, why + " (strict)");
      continue;
    }
    // The engine's VJP of this node alone, at the engine's own precision: when T is MPFR too, the reference's
    // digits are in effect here, and a replay made at them would not be the engine's op.
    // (a unique_ptr, not std::optional: GCC 12 at -O2 sees optional<MpfrDigits>'s payload as maybe uninitialized)
    std::unique_ptr<MpfrDigits> engine_digits;
    if constexpr (runtime_precision<T>)
      engine_digits = std::make_unique<MpfrDigits>(static_cast<unsigned>(node.value.data()[0].precision()));
    const std::string engine_name = precision_name<T>();
    Matrix<T> W = random_like(std::vector<Matrix<T>>{node.value}, rng)[0];
    for (Eigen::Index e = 0; e < W.size(); ++e)
      if (!is_finite(node.value.data()[e])) W.data()[e] = T(0); // a -inf entry (mask) carries no gradient
    std::vector<Matrix<T>> parents;
    for (std::size_t p : node.parents)
      parents.push_back(tape.node(p).value);
    Tape<T> scratch;
    std::vector<Var<T>> vars;
    for (std::size_t k = 0; k < parents.size(); ++k)
      vars.push_back(scratch.input(parents[k], tape.node(node.parents[k]).shape));
    const Var<T> replayed = tape.replay(i, vars);
    if (!same(replayed.value(), node.value)) {
      engine_digits.reset();
      refuse(i, "its replay in " + engine_name +
                    " does not reproduce the recorded value bit for bit (an op "
                    "that draws something afresh, or reads state it does not keep?): its VJP is not checked");
      continue;
    }
    scratch.backward(replayed, W);
    engine_digits.reset(); // the reference's digits again
    // J(parents) = sum over the finite entries of op(parents) .* W, in R.
    const Matrix<R> Wr = convert<R>(W);
    TapePool<R> tapes; // the evaluations of this node reuse their buffers
    const auto J = [&](const std::vector<Matrix<R>>& x) -> R {
      return outside_domain_is_nan<R>([&] {
        return tapes.with([&](Tape<R>& t) -> R {
          std::vector<Var<R>> in;
          for (std::size_t k = 0; k < x.size(); ++k)
            in.push_back(t.input(x[k], tape.node(node.parents[k]).shape));
          const Matrix<R>& y = reference.replay(i, in).value();
          R s(0);
          for (Eigen::Index e = 0; e < y.size(); ++e)
            if (Wr.data()[e] != R(0)) s += y.data()[e] * Wr.data()[e];
          return s;
        });
      });
    };
    std::vector<Matrix<R>> parents_r;
    for (const Matrix<T>& m : parents)
      parents_r.push_back(convert<R>(m));
    {
      Tape<R> t;
      std::vector<Var<R>> in;
      for (std::size_t p : reference.node(i).parents)
        in.push_back(t.input(reference.node(p).value, reference.node(p).shape));
      if (!same(reference.replay(i, in).value(), reference.node(i).value)) {
        refuse(i, "its replay in " + precision_name<R>() +
                      " does not reproduce the reference's recorded value bit for "
                      "bit: its VJP is not checked");
        continue;
      }
    }
    // A VJP that is zero in truth (the softmax's, when W is constant along a row) meets stencil noise.
    const R J0 = J(parents_r);
    const R floor = engine_noise_floor(J0, engine_tol);
    const R reach = kink_reach<R>();
    for (std::size_t k = 0; k < parents.size(); ++k) {
      const Matrix<T>& vjp = scratch.grad(vars[k]);
      Matrix<R> numeric = central_difference<R>(J, parents_r, k, Stencil::sixth_order, R(1), threads);
      // Differences that straddle a kink judge nothing: those coordinates are left out of the comparison (their
      // error and their size: a wild VJP there cannot hide the others' errors behind a large scale) and the
      // kink guard names them; the node's other coordinates are judged as usual.
      std::vector<std::pair<Eigen::Index, Eigen::Index>> near;
      if (node.op->kink || node.op->ties) {
        near = kinked_coordinates(tape, i, k, parents_r[k], reach);
        if (!near.empty())
          report.warnings.push_back("per-node check: " + kink_warning(reference, i, k, parents_r[k], near, reach) +
                                    " (the VJP is not judged at those coordinates)");
      }
      report.checks.push_back(compare<R, T>(
          CheckKind::node_vjp, {}, tape.node_name(i) + " <- " + tape.node_name(node.parents[k]), vjp, numeric,
          threshold, "h6 = " + to_string(default_step<R>(Stencil::sixth_order), 3), floor, near));
      report.checks.back().node = static_cast<long>(i);
      report.checks.back().node_name = tape.node_name(i);
      set_shape(report.checks.back(), tape.node(node.parents[k]).shape); // the operand's own entries
    }
  }
  return report;
}

/// The per-node check of engine T against the MPFR reference, compiled once per type in our own builds
/// (autodiff/instances.hpp).
#define TAPEGRAD_INSTANCE(prefix, T)                                                                                   \
  prefix template CheckReport node_check<T, mpfr_real>(const Tape<T>&, const Tape<mpfr_real>&, std::uint64_t,          \
                                                       const mpfr_real&, unsigned, const mpfr_real&, bool);
#include "../instances.hpp"

} // namespace tapegrad

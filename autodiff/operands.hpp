#pragma once
// Operand checks shared by the ops: one tape, and shapes that fit, with messages that name the op, the
// operands' labels and their shapes: "matmul(Q, Kt): Q is 3x4 but Kt is 3x3; columns of the left must
// equal rows of the right".

#include "dual.hpp"
#include "tape.hpp"

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tapegrad {

/// The explicit instantiation of an op's apply for engine type T and for Dual<T> (forward mode), for
/// autodiff/instances.hpp: each op header ends with
///   #define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, MyOp, T)
///   #include "../autodiff/instances.hpp"
/// For that, apply is defined outside its struct (an explicit instantiation declaration does not apply to an
/// inline function, and a member defined inside its class is one).
#define TAPEGRAD_OP_APPLY_INSTANCE(prefix, T, Op)                                                                      \
  prefix template Var<T> Op::apply<T>(std::span<const Var<T>>, const Params<T>&, std::string);
#define TAPEGRAD_OP_INSTANCE(prefix, Op, T) TAPEGRAD_WITH_DUAL(TAPEGRAD_OP_APPLY_INSTANCE, prefix, T, Op)

/// Both operands are live Vars of one tape (else UsageError); returns that tape.
template <Real T> Tape<T>& common_tape(std::string_view op, const Var<T>& a, const Var<T>& b) {
  if (!a.valid() || !b.valid())
    throw UsageError(std::string(op) + ": an operand is a default-constructed Var, not on any tape");
  if (&a.tape() != &b.tape())
    throw UsageError(std::string(op) + "(" + a.name() + ", " + b.name() + "): " + a.name() + " and " + b.name() +
                     " are on different tapes; all operands of an op must be on one tape");
  return a.tape();
}

/// Every operand a live Var of one tape (else UsageError); returns that tape. At least one operand.
template <Real T> Tape<T>& common_tape(std::string_view op, std::span<const Var<T>> in) {
  if (in.empty()) throw UsageError(std::string(op) + ": needs at least one operand");
  for (const Var<T>& v : in)
    common_tape(op, in[0], v);
  return in[0].tape();
}

/// The operands of op `op` (as many as its arity says) on one tape; returns that tape. UsageError naming the
/// op otherwise: apply() and a replay index their operands only after this.
template <Real T> Tape<T>& common_tape(const OpInfo& op, std::span<const Var<T>> in) {
  const std::string name(function_name(op));
  if (in.size() < op.arity || in.size() > max_operands(op))
    throw UsageError(name + ": takes " + std::to_string(op.arity) +
                     (op.variadic                ? " or more"
                      : op.optional_operands > 0 ? " to " + std::to_string(max_operands(op))
                                                 : "") +
                     " operand" + (op.arity == 1 && max_operands(op) == 1 ? "" : "s") + ", got " +
                     std::to_string(in.size()));
  return common_tape(name, in);
}

/// Every entry of operand k lies in domain d, else a DomainError naming the op, the node being made, the
/// operand and the entry: "log(X) for 'L': entry (0, 1) of X is -2; log needs entries > 0" (`why`, when given,
/// follows the op's name: what made the domain so). NaN is not > 0; a NaN divisor is not zero (its quotient is
/// NaN, as the formula gives).
template <Real T> void require_domain(const OpInfo& op, std::span<const Var<T>> in, std::size_t k,
                                      const std::string& label, Domain d, std::string_view why = {}) {
  if (d == Domain::any) return;
  const Matrix<T>& x = in[k].value();
  const T zero(0);
  for (Eigen::Index e = 0; e < x.size(); ++e) {
    const T& v = x.data()[e];
    if (d == Domain::positive ? !(v > zero) : v == zero) { // compares a Dual's value only
      std::string call = std::string(function_name(op)) + "(";
      for (std::size_t a = 0; a < in.size(); ++a)
        call += (a ? ", " : "") + in[a].name();
      throw DomainError(call + ")" + (label.empty() ? "" : " for '" + label + "'") + ": entry " +
                        entry_string(in[k].shape(), e) + " of " + in[k].name() + " is " + to_string(v, 6) + "; " +
                        std::string(function_name(op)) + (why.empty() ? "" : " " + std::string(why)) +
                        " needs entries " + std::string(domain_condition(d)));
    }
  }
}

/// The same for the domain the op's descriptor gives operand k (OpInfo::domains).
template <Real T>
void require_domain(const OpInfo& op, std::span<const Var<T>> in, std::size_t k, const std::string& label) {
  require_domain(op, in, k, label, operand_domain(op, k));
}

/// Whether one of the n entries at p is +inf. For double and float with SSE2 (every x86-64) four vector compares a
/// step, no branch inside the step: five times faster than Eigen's NaN-aware maxCoeff (whose NaN handling does not
/// vectorise) over a 512 x 512 matrix, 27 vs 132 us on an AMD EPYC; a NaN entry compares false.
template <Real T> bool holds_plus_inf(const T* p, Eigen::Index n) {
  Eigen::Index i = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, double>) {
    const __m128d inf = _mm_set1_pd(infinity<double>());
    const auto hit = [&](Eigen::Index k) { return _mm_cmpeq_pd(_mm_loadu_pd(p + k), inf); };
    for (; i + 8 <= n; i += 8)
      if (_mm_movemask_pd(_mm_or_pd(_mm_or_pd(hit(i), hit(i + 2)), _mm_or_pd(hit(i + 4), hit(i + 6))))) return true;
  } else if constexpr (std::is_same_v<T, float>) {
    const __m128 inf = _mm_set1_ps(infinity<float>());
    const auto hit = [&](Eigen::Index k) { return _mm_cmpeq_ps(_mm_loadu_ps(p + k), inf); };
    for (; i + 16 <= n; i += 16)
      if (_mm_movemask_ps(_mm_or_ps(_mm_or_ps(hit(i), hit(i + 4)), _mm_or_ps(hit(i + 8), hit(i + 12))))) return true;
  }
#endif
  for (; i < n; ++i)
    if (p[i] == infinity<T>()) return true;
  return false;
}

/// A DomainError when a row of x (a slice along the op's dim, as `slice(i)` names it) holds +inf: graph format v3
/// leaves softmax, log_softmax, logsumexp and cross_entropy undefined there (inf - inf).
template <Real T, class Slice> void refuse_plus_inf(const Matrix<T>& x, std::string_view op, const std::string& operand,
                                                    const std::string& label, const Slice& slice) {
  if (!holds_plus_inf(x.data(), x.size())) return; // one fast pass before the search for the row
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      if (x(i, j) == infinity<T>())
        throw DomainError(std::string(op) + "(" + operand + ")" + (label.empty() ? "" : " for '" + label + "'") + ": " +
                          slice(i) + " of " + operand + " holds +inf: its " + std::string(op) +
                          " is undefined (inf - inf)");
}

/// Whether row i of x is entirely -inf (every entry masked).
template <Real T> bool masked_row(const Matrix<T>& x, Eigen::Index i) {
  for (Eigen::Index k = 0; k < x.cols(); ++k)
    if (!(x(i, k) == -infinity<T>())) return false;
  return true;
}

/// Row i's log-sum-exp with the row max taken out: log sum_k exp(x[i][k]) = max + log_total, with
/// log_total = log sum_k exp(x[i][k] - max), so that entries of +-1e4 stay finite; -inf entries add exactly 0.
/// A NaN entry, or an +inf one (inf - inf), makes log_total NaN. The row must not be entirely -inf (callers
/// refuse it: masked_row).
template <Real T> struct RowLogSumExp { T max, log_total; };
template <Real T> RowLogSumExp<T> row_log_sum_exp(const Matrix<T>& x, Eigen::Index i) {
  using std::exp;
  using std::log;
  T mx = -infinity<T>();
  for (Eigen::Index k = 0; k < x.cols(); ++k)
    if (x(i, k) > mx) mx = x(i, k);
  T total(0);
  for (Eigen::Index k = 0; k < x.cols(); ++k)
    total += exp(x(i, k) - mx);
  return {mx, log(total)};
}

/// The operands of an op, as apply() takes them.
template <Real T, class... Vs> std::array<Var<T>, 1 + sizeof...(Vs)> operands(const Var<T>& a, const Vs&... rest) {
  return {a, rest...};
}

} // namespace tapegrad

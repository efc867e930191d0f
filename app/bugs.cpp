// `tapegrad bugs`: every classic gradient fault switched on in turn, and which checks catch it: tape vs the
// hand-written backward, finite differences in 50 digits, dual numbers, the per-node check (naming the node),
// invariants (rows of A sum to 1, rows of dS to 0), the stale-gradient guard and the saturation guard.
// Faults 8 and 9 are mistakes of the comparison or the model, shown as demonstrations.
#include "commands.hpp"

#include <tapegrad/graph/verification/attention_check.hpp>
#include <tapegrad/graph/verification/chapter.hpp>
#include <tapegrad/graph/verification/faults.hpp>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <iomanip>
#include <set>
#include <sstream>

namespace tapegrad::app {
namespace {

using T = double;
using R = mpfr_real;
constexpr unsigned reference_digits = 50;

struct Case {
  std::string name;
  AttentionInputs<T> in;
};

struct Row { // one fault on one input
  int id;
  std::string fault, input;
  std::set<std::string> caught_by;
  std::set<std::string> nodes;
  double worst = 0; ///< largest relative error among the failing checks
};

const std::vector<std::string> names{"X", "Wq", "Wk", "Wv", "G"};

std::vector<Matrix<T>> as_vector(const AttentionInputs<T>& in) { return {in.X, in.Wq, in.Wk, in.Wv, in.G}; }

/// Every check on one faulty graph at one input.
Row run_case(int id, const std::string& fault_name, Fault fault, const Case& c, const TapeOptions& tape_options,
             int backward_runs) {
  Row row{id, fault_name, c.name, {}, {}, 0};
  CheckOptions opt;
  opt.reference_digits = reference_digits;
  opt.wrt = {0, 1, 2, 3};
  opt.tape_options = tape_options;
  const AttentionByHand<T> hand = attention_by_hand(c.in.X, c.in.Wq, c.in.Wk, c.in.Wv, c.in.G);
  std::vector<OtherGradient<T>> others{{"hand-written", {hand.dX, hand.dWq, hand.dWk, hand.dWv, {}}}};

  // The faulty tape, used the faulty way (backward_runs times without zero_grad).
  FaultyAttention graph{fault};
  Tape<T> tape(tape_options);
  const std::vector<Matrix<T>> inputs = as_vector(c.in);
  const Var<T> J = record_graph(tape, graph, inputs, names);
  for (int r = 0; r < backward_runs; ++r)
    tape.backward(J);
  if (backward_runs > 1) {
    std::vector<Matrix<T>> stale;
    for (std::size_t k = 0; k < 4; ++k)
      stale.push_back(tape.grad(tape.var(k)));
    others.push_back({"stale tape", stale});
  }
  const CheckReport report = check_gradient<T, R>(graph, inputs, names, opt, others);
  for (const CheckResult& r : report.checks) {
    if (r.passed) continue;
    std::string channel;
    switch (r.kind) {
    case CheckKind::tape_vs_finite_differences:
      channel = "finite differences";
      break;
    case CheckKind::other_vs_finite_differences:
      if (r.other != "stale tape") continue; // hand-written vs finite differences: the reference, not the fault
      channel = "finite differences";
      break;
    case CheckKind::dual_numbers:
      channel = "dual numbers";
      break;
    case CheckKind::node_vjp:
      channel = "per-node check";
      row.nodes.insert(r.node_name);
      break;
    case CheckKind::tape_vs_other:
      channel = "by-hand gradient";
      break;
    default:
      continue;
    }
    row.caught_by.insert(channel);
    row.worst = std::max(row.worst, r.rel_error);
  }
  // The forward against the by-hand forward.
  const Var<T> O = tape.find("O");
  const CheckResult forward =
      compare<T, T>(CheckKind::forward, "hand-written", "O", O.value(), hand.O, engine_tolerance<T>(), "none");
  if (!forward.passed) {
    row.caught_by.insert("by-hand forward");
    row.worst = std::max(row.worst, forward.rel_error);
  }
  // Invariants: rows of A sum to 1; rows of dS sum to 0.
  for (std::size_t i = 0; i < tape.size(); ++i) {
    const auto& n = tape.node(i);
    const T tol = 1024 * epsilon<T>();
    if (n.label == "A")
      for (Eigen::Index r = 0; r < n.value.rows(); ++r)
        if (std::abs(n.value.row(r).sum() - 1) > tol) row.caught_by.insert("invariants (rows of A sum to 1)");
    if (n.label == "S") {
      const Matrix<T>& dS = tape.grad(tape.var(i));
      for (Eigen::Index r = 0; r < dS.rows(); ++r)
        if (std::abs(dS.row(r).sum()) > tol * (1 + dS.cwiseAbs().maxCoeff()))
          row.caught_by.insert("invariants (rows of dS sum to 0)");
    }
  }
  if (backward_runs > 1) { // the guard: the same use on a strict tape is refused
    Tape<T> strict(TapeOptions{.stale_gradients_are_errors = true});
    const Var<T> Js = record_graph(strict, graph, inputs, names);
    strict.backward(Js);
    try {
      strict.backward(Js);
    } catch (const UsageError&) {
      row.caught_by.insert("stale-gradient guard");
    }
  }
  return row;
}

/// "Plain" finite differences as common tools do them: double, central, step 1e-6, accepted when
/// |analytic - numeric| <= 1e-5 + 1e-3 |numeric| (PyTorch gradcheck's defaults). True when it passes.
bool plain_fd_passes(Fault fault, const AttentionInputs<T>& in) {
  const FaultyAttention graph{fault};
  std::vector<Matrix<T>> x = as_vector(in);
  const EngineGradient<T> engine = engine_gradient<T>(graph, x, names);
  const auto J = [&](const std::vector<Matrix<T>>& v) {
    Tape<T> t;
    return record_graph(t, graph, v, names).value()(0, 0);
  };
  const T h = 1e-6;
  for (std::size_t k = 0; k < 4; ++k)
    for (Eigen::Index e = 0; e < x[k].size(); ++e) {
      const T x0 = x[k].data()[e];
      x[k].data()[e] = x0 + h;
      const T up = J(x);
      x[k].data()[e] = x0 - h;
      const T down = J(x);
      x[k].data()[e] = x0;
      const T numeric = (up - down) / (2 * h), analytic = engine.grads[k].data()[e];
      if (!(std::abs(analytic - numeric) <= 1e-5 + 1e-3 * std::abs(numeric))) return false;
    }
  return true;
}

std::string join(const std::set<std::string>& items) {
  std::string s;
  for (const std::string& i : items)
    s += (s.empty() ? "" : ", ") + i;
  return s.empty() ? "-" : s;
}

std::string sci(double x) {
  std::ostringstream o;
  o << std::setprecision(3) << x;
  return o.str();
}

} // namespace

int run_bugs_command(const BugsCommand& cmd, std::ostream& out) {
  MpfrDigits digits(reference_digits);
  // Fault 7 runs backward twice on purpose: its warning is expected, so only errors are logged meanwhile.
  const spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);
  struct Restore {
    spdlog::level::level_enum level;
    ~Restore() { spdlog::set_level(level); }
  } restore{level};
  const Case ex1{"example 1 (diagonal)", chapter::example1<T>()};
  const Case asym{"asymmetric (seed 7, T,D,d,r = 3,4,3,2)", random_attention<T>(7, 3, 4, 3, 2)};
  AttentionInputs<T> sat_in = chapter::example1<T>();
  sat_in.Wq = 40 * std::sqrt(2.0) * Matrix<T>::Identity(2, 2);
  const Case saturated{"saturated (example 1, S = 40 I)", sat_in};

  struct FaultDef {
    int id;
    std::string name;
    Fault fault;
    TapeOptions options;
    int runs;
    std::vector<Case> cases;
  };
  const std::vector<FaultDef> faults{
      {1,
       "overwrite on fan-out (a VJP assigns)",
       Fault::none,
       TapeOptions{.inject_overwrite_fault = true},
       1,
       {ex1, asym}},
      {2, "softmax backward keeps only the numerator path", Fault::softmax_numerator_only, {}, 1, {ex1, asym}},
      {3, "forward transpose lost: S = Q K", Fault::forward_transpose_lost, {}, 1, {ex1, asym}},
      {4, "backward transpose lost: dK = dS Q", Fault::backward_transpose_lost, {}, 1, {ex1, asym}},
      {5, "column-wise softmax normalisation", Fault::column_softmax, {}, 1, {ex1, asym}},
      {6, "1/sqrt(d) dropped in the backward only", Fault::scale_dropped_backward, {}, 1, {ex1, asym}},
      {7, "stale gradients: backward twice, no zero_grad", Fault::none, {}, 2, {ex1, asym}},
      {10, "wrong softmax VJP (x2) at a saturated point", Fault::saturated_wrong_vjp, {}, 1, {saturated, ex1}},
  };

  std::vector<Row> rows;
  nlohmann::ordered_json fault_json = nlohmann::ordered_json::array();
  int caught_count = 0;
  std::vector<std::string> notes;
  for (const FaultDef& f : faults) {
    std::set<std::string> caught_by, nodes;
    double worst = 0;
    bool caught = false;
    for (const Case& c : f.cases) {
      Row row = run_case(f.id, f.name, f.fault, c, f.options, f.runs);
      caught_by.insert(row.caught_by.begin(), row.caught_by.end());
      nodes.insert(row.nodes.begin(), row.nodes.end());
      worst = std::max(worst, row.worst);
      caught = caught || !row.caught_by.empty();
      rows.push_back(std::move(row));
    }
    if (f.id == 10) {
      // The false agreement: plain finite differences pass the wrong VJP at the saturated point and fail it at
      // the unsaturated one; tapegrad's saturation guard flags the saturated point as a poor test point.
      Tape<T> tape;
      record_graph(tape, FaultyAttention{f.fault}, as_vector(saturated.in), names);
      CheckOptions opt;
      opt.reference_digits = reference_digits;
      const bool flagged = !saturated_softmax_rows(tape, static_cast<T>(check_threshold<T, R>(opt))).empty();
      const bool plain_passes_saturated = plain_fd_passes(f.fault, saturated.in);
      const bool plain_catches_unsaturated = !plain_fd_passes(f.fault, ex1.in);
      Row& at_saturated = rows[rows.size() - 2];
      at_saturated.caught_by.insert(flagged ? "saturation guard" : "saturation guard SILENT");
      if (!plain_passes_saturated) at_saturated.caught_by.insert("plain finite differences");
      if (plain_catches_unsaturated) rows.back().caught_by.insert("plain finite differences");
      caught = flagged && plain_passes_saturated && plain_catches_unsaturated;
      caught_by.insert("saturation guard");
      notes.push_back(std::string("fault 10: plain finite differences (double, step 1e-6, gradcheck's tolerances) ") +
                      (plain_passes_saturated ? "PASS" : "fail") + " the wrong VJP at the saturated point and " +
                      (plain_catches_unsaturated ? "catch" : "MISS") +
                      " it at the unsaturated one; the saturation guard " + (flagged ? "flags" : "does NOT flag") +
                      " the saturated point. tapegrad's per-input relative check catches it even there.");
    }
    caught_count += caught;
    fault_json.push_back(
        {{"id", f.id},
         {"name", f.name},
         {"caught", caught},
         {"caught_by", std::vector<std::string>(caught_by.begin(), caught_by.end())},
         {"node", nodes.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(join(nodes))},
         {"max_rel_error", sci(worst)}});
  }

  // Demonstration 8: a correct local dQ compared with a difference quotient of a DIFFERENT function (one that
  // recomputes Q, K, V from X) reports a mismatch; the right comparison passes.
  nlohmann::ordered_json demos = nlohmann::ordered_json::array();
  {
    const AttentionInputs<T> in = chapter::example1<T>();
    const Matrix<T> Q = in.X * in.Wq, K = in.X * in.Wk, V = in.X * in.Wv;
    const EngineGradient<T> local = engine_gradient<T>(LocalAttentionGraph{}, {Q, K, V, in.G}, {"Q", "K", "V", "G"});
    FullAttentionGraph full;
    const Reference<R> wrong = fd_reference<R>(
        full, {convert<R>(in.X), convert<R>(in.Wq), convert<R>(in.Wk), convert<R>(in.Wv), convert<R>(in.G)}, names, 0);
    LocalAttentionGraph lg;
    const Reference<R> right =
        fd_reference<R>(lg, {convert<R>(Q), convert<R>(K), convert<R>(V), convert<R>(in.G)}, {"Q", "K", "V", "G"}, 0);
    const R thr = fd_threshold<T, R>();
    const CheckResult bad = compare<R, T>(CheckKind::other_vs_finite_differences, "dQ vs d/dX: local dQ", "Q",
                                          local.grads[0], wrong.sixth, thr, wrong.step);
    const CheckResult good = compare<R, T>(CheckKind::other_vs_finite_differences, "dQ vs d/dQ: local dQ", "Q",
                                           local.grads[0], right.sixth, thr, right.step);
    const bool shown = !bad.passed && good.passed;
    demos.push_back(
        {{"id", 8},
         {"name", "a different function compared: local dQ vs a quotient that recomputes Q, K, V from X"},
         {"outcome", "wrong comparison reports a mismatch (rel " + bad.max_rel_error +
                         ") for a correct gradient; the right comparison passes (rel " + good.max_rel_error + ")"},
         {"shown", shown}});
  }
  // Demonstration 9: tied weights Wq = Wk = Wv = W are a different model.
  {
    const AttentionInputs<T> in = random_attention<T>(9, 3, 3, 3, 3);
    const auto tied = [](auto&, const auto& v) { return probe(attention(v[0], v[1], v[1], v[1]).O, v[2]); };
    const EngineGradient<T> t = engine_gradient<T>(tied, {in.X, in.Wq, in.G}, {"X", "W", "G"});
    const EngineGradient<T> u = engine_gradient(FullAttentionGraph{}, as_vector(in), names);
    const EngineGradient<T> same = engine_gradient<T>(FullAttentionGraph{}, {in.X, in.Wq, in.Wq, in.Wq, in.G}, names);
    const Matrix<T> sum3 = u.grads[1] + u.grads[2] + u.grads[3];
    const Matrix<T> sum3_same = same.grads[1] + same.grads[2] + same.grads[3];
    const double differ = max_rel_error<T>(t.grads[1], sum3), agree = max_rel_error<T>(t.grads[1], sum3_same);
    const bool shown = differ > 1e-3 && agree <= 1024 * epsilon<T>();
    demos.push_back(
        {{"id", 9},
         {"name", "tied weights Wq = Wk = Wv: a different model, though every shape matches"},
         {"outcome", "tied dW differs from the untied model's dWq + dWk + dWv (rel " + sci(differ) +
                         "); it equals that sum only where the untied weights are all W (rel " + sci(agree) + ")"},
         {"shown", shown}});
  }

  const int total = static_cast<int>(faults.size());
  bool demos_ok = true;
  for (const auto& d : demos)
    demos_ok = demos_ok && d["shown"].get<bool>();
  const std::string score = std::to_string(caught_count) + "/" + std::to_string(total);
  if (cmd.format == "json") {
    const nlohmann::ordered_json doc{{"faults", fault_json}, {"mutation_score", score}, {"demonstrations", demos}};
    out << doc.dump(2) << "\n";
  } else {
    out << "tapegrad bugs: each classic gradient fault switched on, and which checks catch it\n"
        << "(engine double; finite differences in " << reference_digits
        << " digits; thresholds as in tapegrad check)\n\n"
        << std::left << std::setw(4) << "id" << std::setw(48) << "fault" << std::setw(40) << "input" << std::setw(12)
        << "worst rel"
        << "caught by (node named by the per-node check)\n";
    for (const Row& r : rows)
      out << std::setw(4) << r.id << std::setw(48) << r.fault << std::setw(40) << r.input << std::setw(12)
          << sci(r.worst) << join(r.caught_by) << (r.nodes.empty() ? "" : " [node " + join(r.nodes) + "]") << "\n";
    out << "\n";
    for (const std::string& n : notes)
      out << n << "\n";
    out << "fault 3: on the diagonal example 1 the forward values agree (Q K = Q K^T there: invisible to the forward, "
           "as the\n"
           "chapter says) though the gradients differ; on the asymmetric input the forward differs too.\n\n"
        << "demonstrations:\n";
    for (const auto& d : demos)
      out << "  " << d["id"].get<int>() << ". " << d["name"].get<std::string>() << ": "
          << d["outcome"].get<std::string>() << (d["shown"].get<bool>() ? "" : " [NOT SHOWN]") << "\n";
    out << "\nmutation score " << score << " (faults 1-7 and 10)\n";
  }
  return caught_count == total && demos_ok ? 0 : 1;
}

} // namespace tapegrad::app

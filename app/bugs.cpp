// `tapegrad bugs`: every classic gradient fault switched on in turn, and which checks catch it: tape vs the
// hand-written backward, finite differences in 50 digits, dual numbers, the per-node check (naming the node),
// invariants (rows of A sum to 1, rows of dS sum to 0), the stale-gradient guard and the saturation guard; and
// whether PyTorch's gradcheck (slow and fast) and JAX's check_grads would, by their criteria at the same point.
// Faults 1-7 and 10 are on the chapter's attention; 11 and up are slips in the ops (graph/verification/
// op_faults.hpp), each injected at every node of its op in the graphs of bug_hosts.hpp where it changes something.
// Faults 8 and 9 are mistakes of the comparison or the model, shown as demonstrations.
#include "commands.hpp"

#include <bug_hosts.hpp>
#include <tapegrad/graph/verification/attention_check.hpp>
#include <tapegrad/graph/verification/chapter.hpp>
#include <tapegrad/graph/verification/faults.hpp>
#include <tapegrad/graph/verification/op_faults.hpp>
#include <tapegrad/graph/verification/other_checkers.hpp>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cassert>
#include <iomanip>
#include <map>
#include <numeric>
#include <optional>
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

struct Row { // one fault at one point (an input of the attention, or a graph with the fault at one node)
  int id;
  std::string fault, input;
  std::set<std::string> caught_by;
  std::set<std::string> nodes;
  double worst = 0;              ///< largest relative error among the failing checks
  OtherCheckerVerdicts verdicts; ///< what gradcheck and check_grads would say at the same point
  std::string threshold;         ///< the threshold of the tape against finite differences, as printed
};

/// The seed of the other checkers' random projections (printed with the table).
constexpr std::uint64_t projection_seed = 1;

/// The channels of `report` that caught the fault, into row (the per-node check's nodes too).
void classify(const CheckReport& report, Row& row) {
  for (const CheckResult& r : report.checks) {
    if (r.passed) continue;
    std::string channel;
    switch (r.kind) {
    case CheckKind::tape_vs_finite_differences:
      channel = "finite differences";
      row.threshold = r.threshold;
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
    row.worst = std::max(row.worst, std::isnan(r.rel_error) ? INFINITY : r.rel_error);
  }
}

const std::vector<std::string> names{"X", "Wq", "Wk", "Wv", "G"};

std::vector<Matrix<T>> as_vector(const AttentionInputs<T>& in) { return {in.X, in.Wq, in.Wk, in.Wv, in.G}; }

/// Every check on one faulty graph at one input.
Row run_case(int id, const std::string& fault_name, Fault fault, const Case& c, const TapeOptions& tape_options,
             int backward_runs) {
  Row row{id, fault_name, c.name, {}, {}, 0, {}, {}};
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
  classify(check_gradient<T, R>(graph, inputs, names, opt, others), row);
  std::vector<Matrix<T>> used; // the gradient the faulty tape gives, as used
  for (std::size_t k = 0; k < 4; ++k)
    used.push_back(tape.grad(tape.var(k)));
  row.verdicts = other_checkers(graph, inputs, names, opt.wrt, used, projection_seed, {}, tape_options);
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

/// Fault `site` injected into `graph` (a graph of bug_hosts.hpp): every check of `tapegrad check FILE`, and the
/// other checkers on the gradient the faulty tape gives.
Row run_op_fault(const FileGraph<T>& graph, const FaultSite& site) {
  Row row{site.fault->id, std::string(site.fault->name), graph.spec().file + " at " + site.name, {}, {}, 0, {}, {}};
  const FaultyFileGraph<T> faulty(graph, site.node, site.fault->id);
  CheckOptions opt;
  opt.reference_digits = reference_digits;
  classify(check_gradient<T, R>(faulty, graph.inputs(), graph.names(), opt), row);
  std::vector<std::size_t> all(graph.inputs().size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  row.verdicts = other_checkers(faulty, graph.inputs(), graph.names(), all,
                                engine_gradient<T>(faulty, graph.inputs(), graph.names()).grads, projection_seed);
  return row;
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

/// The table being made: a row per point, a JSON entry per mutant (a fault at one place), the mutation score.
struct Catalogue {
  std::vector<Row> rows;
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  int caught = 0, mutants = 0;

  /// One mutant, whose points are rows[begin..]: what caught it at any of them, the other checkers' verdicts at
  /// its first point (the one the row is about: fault 10's saturated point), and every point; `why` says why no
  /// check caught it, when none did.
  void add(int id, const std::string& name, const std::string& graph, const std::string& injected_at, std::size_t begin,
           bool is_caught, const std::string& why = {}) {
    std::set<std::string> caught_by, nodes;
    double worst = 0;
    nlohmann::ordered_json per_point = nlohmann::ordered_json::array();
    for (std::size_t k = begin; k < rows.size(); ++k) {
      const Row& r = rows[k];
      caught_by.insert(r.caught_by.begin(), r.caught_by.end());
      nodes.insert(r.nodes.begin(), r.nodes.end());
      worst = std::max(worst, r.worst);
      per_point.push_back({{"point", r.input},
                           {"caught_by", std::vector<std::string>(r.caught_by.begin(), r.caught_by.end())},
                           {"gradcheck_catches", r.verdicts.gradcheck_catches},
                           {"gradcheck_fast_catches", r.verdicts.gradcheck_fast_catches},
                           {"check_grads_catches", r.verdicts.check_grads_catches},
                           {"gradcheck_worst", r.verdicts.gradcheck_worst}});
    }
    ++mutants;
    caught += is_caught;
    const OtherCheckerVerdicts& first = rows[begin].verdicts;
    nlohmann::ordered_json entry{
        {"id", id},
        {"name", name},
        {"graph", graph},
        {"injected_at", injected_at},
        {"caught", is_caught},
        {"caught_by", std::vector<std::string>(caught_by.begin(), caught_by.end())},
        {"node", nodes.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(join(nodes))},
        {"max_rel_error", sci(worst)},
        {"gradcheck_catches", first.gradcheck_catches},
        {"gradcheck_fast_catches", first.gradcheck_fast_catches},
        {"check_grads_catches", first.check_grads_catches},
        {"points", std::move(per_point)}};
    if (!is_caught) entry["why"] = why;
    faults.push_back(std::move(entry));
  }
  std::string score() const { return std::to_string(caught) + "/" + std::to_string(mutants); }

  void print_table(std::ostream& out) const {
    out << "(engine double; finite differences in " << reference_digits
        << " digits; thresholds as in tapegrad check). The columns gc, fast and jax say whether the criteria of\n"
        << "PyTorch's gradcheck (double, eps 1e-6, atol 1e-5, rtol 1e-3), its fast mode (one random projection per "
           "input)\n"
        << "and JAX's check_grads (eps 1e-4, one random direction, tolerance 1e-5), applied by tapegrad at the same "
           "point\n"
        << "to the same gradient, would catch it (projections seeded " << projection_seed << ").\n\n"
        << std::left << std::setw(4) << "id" << std::setw(70) << "fault" << std::setw(52) << "point" << std::setw(10)
        << "worst rel" << std::setw(6) << "gc" << std::setw(6) << "fast" << std::setw(6) << "jax"
        << "caught by (node named by the per-node check)\n";
    const auto yes = [](bool b) { return b ? "catch" : "miss"; };
    for (const Row& r : rows)
      out << std::setw(4) << r.id << std::setw(70) << r.fault << std::setw(52) << r.input << std::setw(10)
          << sci(r.worst) << std::setw(6) << yes(r.verdicts.gradcheck_catches) << std::setw(6)
          << yes(r.verdicts.gradcheck_fast_catches) << std::setw(6) << yes(r.verdicts.check_grads_catches)
          << join(r.caught_by) << (r.nodes.empty() ? "" : " [node " + join(r.nodes) + "]") << "\n";
    out << "\n";
    for (const Row& r : rows)
      if (is_op_fault(r.id) && !r.threshold.empty() && !r.verdicts.gradcheck_catches) // finite differences saw it
        out << "fault " << r.id << " at " << r.input << ": tapegrad catches it (worst rel " << sci(r.worst) << " > "
            << r.threshold << ") where gradcheck's criteria pass it: " << r.verdicts.gradcheck_worst
            << ", inside its atol + rtol |n|" << (r.verdicts.check_grads_catches ? " (check_grads' is not)" : "")
            << ".\n";
  }
};

/// Every check of `tapegrad check FILE` passes on `graph` as it is (the baseline a catch is measured against).
bool no_fault_passes(const FileGraph<T>& graph) {
  CheckOptions opt;
  opt.reference_digits = reference_digits;
  return check_gradient<T, R>(graph, graph.inputs(), graph.names(), opt).passed();
}

/// Quiets the stale-gradient warning (fault 7 runs backward twice on purpose) while it lives.
struct QuietLog {
  spdlog::level::level_enum level = spdlog::get_level();
  QuietLog() { spdlog::set_level(spdlog::level::err); }
  ~QuietLog() { spdlog::set_level(level); }
  QuietLog(const QuietLog&) = delete;
  QuietLog& operator=(const QuietLog&) = delete;
};

/// The overwrite fault (a VJP assigns instead of adding) at the tape node `index` of `graph`, which has more than
/// one consumer; named `name` in the table.
Row run_overwrite(const FileGraph<T>& graph, std::size_t index, const std::string& name) {
  Row row{1, "overwrite on fan-out (a VJP assigns)", graph.spec().file + " at " + name, {}, {}, 0, {}, {}};
  CheckOptions opt;
  opt.reference_digits = reference_digits;
  opt.tape_options.overwrite_fault_node = index;
  classify(check_gradient<T, R>(graph, graph.inputs(), graph.names(), opt), row);
  std::vector<std::size_t> all(graph.inputs().size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  row.verdicts = other_checkers(graph, graph.inputs(), graph.names(), all,
                                engine_gradient<T>(graph, graph.inputs(), graph.names(), opt.tape_options).grads,
                                projection_seed, {}, opt.tape_options);
  return row;
}

/// Why no check caught a mutant: `faulty` is the graph's tape with the fault, swept, `right` without, and
/// `acted` the nodes whose adjoints the slip writes (the faulty node's operands, or the overwritten node);
/// `faulty_node` the op fault's node (none for the overwrite). It changes the input gradients by less than the
/// thresholds, or by nothing: then the slip wrote what the right rule would have here (no gradient reaches its
/// node, or its VJP coincides with the right one at this point; for the overwrite, the contributions it drops
/// are 0), or its changes cancel on the way to the inputs. The point's poor-test-point warnings (saturated
/// softmax rows, kinks) follow.
std::string why_uncaught(Tape<T>& right, Tape<T>& faulty, std::size_t inputs, const std::vector<std::size_t>& acted,
                         std::optional<std::size_t> faulty_node, const std::string& node,
                         const std::vector<std::string>& warnings) {
  double differ = 0;
  for (std::size_t k = 0; k < inputs; ++k)
    differ = std::max(differ, max_rel_error<T>(faulty.grad(faulty.var(k)), right.grad(right.var(k))));
  bool same_at_node = true;
  for (std::size_t i : acted) // an operand made from real constants only has no gradient to compare
    if (right.node(i).needs_grad) same_at_node = same_at_node && faulty.grad(faulty.var(i)) == right.grad(right.var(i));
  std::string how;
  if (!faulty_node)
    how = "the contributions the overwrite drops are 0 here";
  else if (right.grad(right.var(*faulty_node)).isZero(0))
    how = "no gradient reaches " + node + " at this point";
  else
    how = "its VJP coincides with the right one at this point";
  std::string why = differ > 0 ? "the gradients it gives differ from the right ones by " + sci(differ) +
                                     " relative, within the checks' thresholds"
                    : same_at_node ? "the slip writes what the right rule would at " + node + " (" + how + ")"
                                   : "its changes at " + node + " cancel before they reach an input";
  for (const std::string& w : warnings)
    why += "; " + w;
  return why;
}

} // namespace

/// `tapegrad bugs FILE`: every fault that applies to the file's graph, at each node it applies to.
int run_bugs_file(const BugsCommand& cmd, std::ostream& out);

int run_bugs_command(const BugsCommand& cmd, std::ostream& out) {
  if (!cmd.file.empty()) return run_bugs_file(cmd, out);
  MpfrDigits digits(reference_digits);
  const QuietLog quiet;
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

  Catalogue table;
  std::vector<Row>& rows = table.rows;
  std::vector<std::string> notes;
  for (const FaultDef& f : faults) {
    const std::size_t begin = rows.size();
    bool caught = false;
    for (const Case& c : f.cases) {
      Row row = run_case(f.id, f.name, f.fault, c, f.options, f.runs);
      caught = caught || !row.caught_by.empty();
      rows.push_back(std::move(row));
    }
    if (f.id == 10) {
      // The false agreement: gradcheck's criteria pass the wrong VJP at the saturated point and fail it at the
      // unsaturated one; tapegrad's saturation guard flags the saturated point as a poor test point.
      Tape<T> tape;
      record_graph(tape, FaultyAttention{f.fault}, as_vector(saturated.in), names);
      CheckOptions opt;
      opt.reference_digits = reference_digits;
      const bool flagged = !saturated_softmax_rows(tape, static_cast<T>(check_threshold<T, R>(opt))).empty();
      Row& at_saturated = rows[begin];
      const bool plain_passes_saturated = !at_saturated.verdicts.gradcheck_catches;
      const bool plain_catches_unsaturated = rows[begin + 1].verdicts.gradcheck_catches;
      at_saturated.caught_by.insert(flagged ? "saturation guard" : "saturation guard SILENT");
      caught = flagged && plain_passes_saturated && plain_catches_unsaturated;
      notes.push_back(std::string("fault 10: gradcheck's criteria (double, step 1e-6, atol 1e-5, rtol 1e-3) ") +
                      (plain_passes_saturated ? "PASS" : "fail") + " the wrong VJP at the saturated point and " +
                      (plain_catches_unsaturated ? "catch" : "MISS") +
                      " it at the unsaturated one; the saturation guard " + (flagged ? "flags" : "does NOT flag") +
                      " the saturated point. tapegrad's per-input relative check catches it even there.");
    }
    table.add(f.id, f.name, "the chapter's attention", "", begin, caught);
  }
  // The op faults: each at every node of its op, in every host graph, where it changes something; by fault.
  std::vector<FileGraph<T>> hosts;
  for (const auto& [file, text] : bug_host_graphs)
    hosts.emplace_back(parse_graph(text, file));
  std::vector<std::pair<const FileGraph<T>*, FaultSite>> sites;
  for (const FileGraph<T>& graph : hosts)
    for (const FaultSite& site : fault_sites(graph))
      if (site.invisible.empty()) sites.emplace_back(&graph, site);
  std::stable_sort(sites.begin(), sites.end(),
                   [](const auto& a, const auto& b) { return a.second.fault->id < b.second.fault->id; });
  for (const auto& [graph, site] : sites) {
    rows.push_back(run_op_fault(*graph, site));
    table.add(site.fault->id, std::string(site.fault->name), graph->spec().file, site.name, rows.size() - 1,
              !rows.back().caught_by.empty());
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

  bool demos_ok = true;
  for (const auto& d : demos)
    demos_ok = demos_ok && d["shown"].get<bool>();
  // With no fault, every point of the table passes every check: else a catch would mean nothing.
  std::vector<std::string> baseline_failures;
  for (const Case& c : {ex1, asym, saturated})
    if (const Row r = run_case(0, "none", Fault::none, c, {}, 1); !r.caught_by.empty())
      baseline_failures.push_back("the attention at " + c.name + ": " + join(r.caught_by));
  for (const FileGraph<T>& graph : hosts)
    if (!no_fault_passes(graph)) baseline_failures.push_back(graph.spec().file);
  if (cmd.format == "json") {
    const nlohmann::ordered_json doc{{"faults", table.faults},
                                     {"mutation_score", table.score()},
                                     {"no_fault_passes", baseline_failures.empty()},
                                     {"demonstrations", demos}};
    out << doc.dump(2) << "\n";
  } else {
    out << "tapegrad bugs: each classic gradient fault switched on, and which checks catch it\n";
    table.print_table(out);
    for (const std::string& n : notes)
      out << n << "\n";
    out << "faults 3 and 5: the forward itself is wrong and the backward right for it, so no check of the gradient "
           "against\ndifferences of the same forward (ours, gradcheck's, check_grads') can see them; the hand-written "
           "forward and\ngradient and the invariants do.\n";
    out << "fault 3: on the diagonal example 1 the forward values agree (Q K = Q K^T there: invisible to the forward, "
           "as the\n"
           "chapter says) though the gradients differ; on the asymmetric input the forward differs too.\n\n"
        << "demonstrations:\n";
    for (const auto& d : demos)
      out << "  " << d["id"].get<int>() << ". " << d["name"].get<std::string>() << ": "
          << d["outcome"].get<std::string>() << (d["shown"].get<bool>() ? "" : " [NOT SHOWN]") << "\n";
    out << "\nwith no fault, every check passes at every point: "
        << (baseline_failures.empty() ? "yes" : "NO (" + std::to_string(baseline_failures.size()) + " fail)") << "\n";
    for (const std::string& f : baseline_failures)
      out << "  fails without a fault: " << f << "\n";
    out << "mutation score " << table.score() << " (faults 1-7 and 10 on the attention; " << OpFaults::infos.front()->id
        << "-" << OpFaults::infos.back()->id << " at every node of their op, in every graph they change)\n";
  }
  return table.caught == table.mutants && demos_ok && baseline_failures.empty() ? 0 : 1;
}

int run_bugs_file(const BugsCommand& cmd, std::ostream& out) {
  const GraphSpec spec = read_graph_file(cmd.file);
  require_numeric_inputs(spec, "bugs");
  MpfrDigits digits(reference_digits);
  const QuietLog quiet;
  const FileGraph<T> graph(spec);
  Tape<T> tape;
  const std::vector<Var<T>> all = graph.record(tape, graph.record_inputs(tape));
  tape.backward(graph.output_of(all)); // the right gradients, every node's
  const std::size_t inputs = graph.inputs().size();
  // The point's poor-test-point warnings, for the mutants no check catches.
  std::vector<std::string> warnings;
  {
    CheckOptions opt;
    opt.reference_digits = reference_digits;
    for (std::string& w : saturated_softmax_rows(tape, static_cast<T>(check_threshold<T, R>(opt))))
      warnings.push_back(std::move(w));
    for (std::string& w : kink_warnings(tape, static_cast<T>(kink_reach<R>())))
      warnings.push_back(std::move(w));
  }
  const bool baseline = no_fault_passes(graph);
  Catalogue table;
  // A mutant's row; `faulty` is its graph recorded on a tape and swept, `acted` as for why_uncaught.
  const auto add = [&](Row row, int id, const std::string& name, const std::string& at, Tape<T>& faulty,
                       const std::vector<std::size_t>& acted, std::optional<std::size_t> faulty_node) {
    const bool caught = !row.caught_by.empty();
    table.rows.push_back(std::move(row));
    table.add(id, name, spec.file, at, table.rows.size() - 1, caught,
              caught ? std::string() : why_uncaught(tape, faulty, inputs, acted, faulty_node, at, warnings));
  };
  // The overwrite fault at every input and node with more than one consumer, in file order.
  for (const auto& [i, name] : fan_out_values(graph)) {
    assert(all[i].index() == i && "every input and node of a file is one tape node");
    Tape<T> faulty(TapeOptions{.overwrite_fault_node = i});
    faulty.backward(graph(faulty, graph.record_inputs(faulty)));
    add(run_overwrite(graph, i, name), 1, "overwrite on fan-out (a VJP assigns)", name, faulty, {i}, std::nullopt);
  }
  // Each op fault at every node of its op; where its slip changes nothing at this point, why.
  nlohmann::ordered_json invisible = nlohmann::ordered_json::array();
  std::vector<std::string> invisible_lines;
  for (const FaultSite& site : fault_sites(graph)) {
    if (!site.invisible.empty()) {
      invisible.push_back(
          {{"id", site.fault->id}, {"name", site.fault->name}, {"injected_at", site.name}, {"why", site.invisible}});
      invisible_lines.push_back("  " + std::to_string(site.fault->id) + " " + std::string(site.fault->name) + " at " +
                                site.name + ": " + site.invisible);
      continue;
    }
    const FaultyFileGraph<T> mutant(graph, site.node, site.fault->id);
    Tape<T> faulty;
    std::vector<Var<T>> in = graph.record_inputs(faulty);
    faulty.backward(mutant(faulty, in));
    const std::size_t at = graph.index_of(site.name); // the tape index: inputs, then real constants, then nodes
    add(run_op_fault(graph, site), site.fault->id, std::string(site.fault->name), site.name, faulty,
        tape.node(at).parents, at);
  }
  if (cmd.format == "json") {
    const nlohmann::ordered_json doc{{"graph", spec.file},
                                     {"faults", table.faults},
                                     {"mutation_score", table.score()},
                                     {"no_fault_passes", baseline},
                                     {"not_injected", std::move(invisible)},
                                     {"warnings", warnings}};
    out << doc.dump(2) << "\n";
  } else {
    out << "tapegrad bugs " << spec.file
        << ": each fault that applies to this graph injected in turn (the overwrite fault at every value with more "
           "than one\nconsumer, each op's classic slip at each node of that op), and which checks catch it\n";
    table.print_table(out);
    out << "not injected (the slip changes nothing at this point, or is written for matrices and the operand is not "
           "one):\n";
    if (invisible_lines.empty()) out << "  none\n";
    for (const std::string& l : invisible_lines)
      out << l << "\n";
    out << "caught by no check:\n";
    int uncaught = 0;
    for (const auto& f : table.faults)
      if (!f["caught"].get<bool>()) {
        ++uncaught;
        out << "  " << f["id"].get<int>() << " " << f["name"].get<std::string>() << " at "
            << f["injected_at"].get<std::string>() << ": " << f["why"].get<std::string>() << "\n";
      }
    if (uncaught == 0) out << "  none\n";
    if (table.mutants == 0) out << "\nno fault applies to this graph at this point\n";
    out << "\nwith no fault, every check passes: " << (baseline ? "yes" : "NO (a catch means nothing here)")
        << "\nmutation score " << table.score() << " on " << spec.file << "\n";
  }
  return table.caught == table.mutants && baseline ? 0 : 1;
}

} // namespace tapegrad::app

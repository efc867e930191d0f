#pragma once
// What each subcommand does in the engine precision T. Defined in engine.tpp, compiled once per T in
// engine_<type>.cpp; the subcommand files parse options, pick T at run time and print.
#include <tapegrad/autodiff/check.hpp>
#include <tapegrad/graph/io/gradient_file.hpp>
#include <tapegrad/graph/io/graph_file.hpp>
#include <tapegrad/graph/models/attention_config.hpp>

#include "precision.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tapegrad {
template <Real T> class FileGraph; // graph/io/graph_build.hpp
} // namespace tapegrad

namespace tapegrad::app {

struct CheckArgs {
  std::uint64_t seed = 1;
  std::array<int, 4> size{4, 3, 3, 2}; ///< T, D, d, r of the random case
  bool directional = false;
  int directions = 3;
  unsigned threads = 0;   ///< finite-difference threads; 0: every core
  bool progress = true;   ///< a progress bar on stderr when it is a terminal and the check runs over ~1 s
  Shard* shard = nullptr; ///< numbers the units of work; with count > 1, only this run's share
  /// The extended attention (heads, masks, offset, dropout, positions, Wo) instead of the chapter's.
  std::optional<AttentionConfig> config;
  bool detect_anomaly = false; ///< the engine's tapes in anomaly mode (TapeOptions::detect_anomaly)
  bool strict = false;         ///< a node the per-node check cannot replay is a failure (CheckOptions::strict)
  std::string jacobian;        ///< a graph file's node: check its Jacobian, every (entry, input entry) pair
};

/// The chapter's examples 1 and 2 and a seeded random asymmetric case, engine T against an MPFR
/// reference of `reference_digits` digits: three ways, dual numbers, per node, saturation guard. With
/// args.config, a seeded random case of the extended attention instead.
template <Real T> CheckReport run_check(const CheckArgs& args, unsigned reference_digits);

/// The checks of a graph file's graph w.r.t. the inputs named in `wrt` (all when empty); with args.jacobian,
/// those of that node's every entry (check_jacobian), each entry's checks' graph "FILE: NODE(i, j)".
template <Real T> CheckReport run_check_file(const GraphSpec& spec, const std::vector<std::string>& wrt,
                                             const CheckArgs& args, unsigned reference_digits);

/// `check FILE --gradients G`: each given gradient against the tape's in `reference_digits` (app/given.cpp), after
/// that tape is checked against finite differences in twice as many digits. The threshold is the claimed
/// precision's; an input without a given gradient is a warning (not checked); a name or shape the graph does
/// not have is an error.
CheckReport run_check_given(const GraphSpec& spec, const GradientSpec& given, const Precision& claimed,
                            const CheckArgs& args, unsigned reference_digits);

/// `tapegrad hessian FILE`: the Hessian of the 1x1 output with respect to every input entry (inputs in file
/// order, each row-major), forward over reverse on Tape<Dual<T>>; text or JSON, built before anything is printed.
template <Real T>
std::string run_hessian(const GraphSpec& spec, const std::string& precision, const std::string& format);

/// `check FILE --order 2`: the Hessian checks of the file's graph, forward over reverse in T against the
/// reference's two Hessians in `reference_digits` (check_hessian_reference).
template <Real T> CheckReport run_check_hessian(const GraphSpec& spec, unsigned reference_digits);

/// The reference side of run_check_hessian (app/hessian.cpp, compiled once: nested dual numbers of MPFR), with
/// `reference_digits` in effect: `graph` the file's graph at the engine's values (FileGraph::lifted), `engine`
/// the engine's Hessian converted exactly, `engine_tol` its precision's
/// rounding budget as a decimal, `engine_name` its name.
CheckReport check_hessian_reference(const FileGraph<mpfr_real>& graph, const Matrix<mpfr_real>& engine,
                                    const std::string& engine_tol, const std::string& engine_name);

struct GradArgs {
  std::string precision; ///< as given, for the report
  std::string format = "text";
  bool all_nodes = false;
  bool audit = false;          ///< list nodes with more than one consumer and the contributions they received
  bool stats = false;          ///< tape nodes, bytes in values and gradients, peak resident memory
  bool detect_anomaly = false; ///< the tape in anomaly mode: the first NaN or infinity is an error
  std::string jacobian;        ///< a node: print its value and its Jacobian w.r.t. every input instead
};
/// Peak resident memory of this process so far, in bytes (getrusage).
std::size_t peak_rss_bytes();

/// "tape: 17 nodes, values 1.2 KiB, gradients 1.0 KiB; peak resident memory 9.4 MiB"
template <Real T> std::string stats_line(const Tape<T>& tape);

/// The tape of the check's random case (T,D,d,r and configuration as in args), recorded and swept once in T.
template <Real T> std::string check_stats(const CheckArgs& args);

/// `tapegrad grad`: the whole output, built before anything is printed.
template <Real T> std::string run_grad(const GraphSpec& spec, const GradArgs& args);

struct DotArgs {
  bool values = false, grads = false, check = false;
  std::uint64_t seed = 1;
};
/// `tapegrad dot`: Graphviz DOT of the recorded tape.
template <Real T> std::string run_dot(const GraphSpec& spec, const DotArgs& args);

} // namespace tapegrad::app

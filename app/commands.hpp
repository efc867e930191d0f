#pragma once
// The subcommands of the tapegrad program, one file each (app/<command>.cpp). Each takes its options as the
// plain struct below (app/main.cpp declares them on the command line) and returns the exit code: 0 success,
// 1 a check failed, 2 a user error (thrown as tapegrad::Error and turned into one line by main).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tapegrad::app {

/// No arguments: the chapter's worked example 1 in double and in 50 digits, printed in full.
int run_default(std::ostream& out);

/// `tapegrad check`.
struct CheckCommand {
  std::string file; ///< a graph file, or empty for the built-in attention cases
  std::vector<std::string> inputs;
  std::string precision, reference, size, format = "text"; ///< size empty: 4,3,3,2 (4,4,4,4 with --heads)
  std::uint64_t seed = 1;
  bool directional = false;
  int directions = 3;
  unsigned threads = 0;        ///< finite-difference threads; 0: every core
  bool quiet = false;          ///< no progress bar
  bool verbose = false;        ///< text: every check's line
  bool strict = false;         ///< a node the per-node check cannot replay is a failure
  bool detect_anomaly = false; ///< anomaly mode for the engine's tapes
  bool stats = false;          ///< print the random case's tape size and the peak memory after the report
  std::string shard;           ///< "i/n": only this run's share of the work, as a partial report for `merge`
  std::string gradients;       ///< with a FILE: a gradient file to check instead of the tape (app/given.cpp)
  std::string claimed;         ///< the precision the given gradients claim; empty: double
  int order = 1;               ///< 2: add the Hessian checks (with a FILE)
  std::string jacobian;        ///< with a FILE: check this node's Jacobian instead of the output's gradient
  // The next chapters' attention: any of these switches from the chapter's graph to the extended one.
  bool causal = false;
  long offset = 0;
  int heads = 0;       ///< 0: not given
  std::string padding; ///< key flags "1,1,0"
  double dropout = 0;
  bool strict_masks = false;
  bool extended() const {
    return causal || offset != 0 || heads > 0 || !padding.empty() || dropout > 0 || strict_masks;
  }
};
int run_check_command(const CheckCommand& cmd, std::ostream& out);

/// `tapegrad merge PARTIAL...`: partial reports of `check --shard i/n` combined into the whole report.
struct MergeCommand {
  std::vector<std::string> files;
  std::string format = "text";
  bool verbose = false;
};
int run_merge_command(const MergeCommand& cmd, std::ostream& out);

/// `tapegrad grad FILE`.
struct GradCommand {
  std::string file, precision = "double", format = "text";
  bool all_nodes = false, audit = false, stats = false, detect_anomaly = false;
  std::string jacobian; ///< a node of the file: its Jacobian w.r.t. every input instead of the gradients
};
int run_grad_command(const GradCommand& cmd, std::ostream& out);

/// `tapegrad hessian FILE`.
struct HessianCommand {
  std::string file, precision = "double", format = "text";
};
int run_hessian_command(const HessianCommand& cmd, std::ostream& out);

/// `tapegrad dot FILE`.
struct DotCommand {
  std::string file, precision = "double";
  bool values = false, grads = false, check = false;
  int fault = 0;  ///< a fault of `tapegrad bugs` to inject (1, or 11 and up); 0: none
  std::string at; ///< where: a node (or, for fault 1, an input); empty: the first place it can show
};
int run_dot_command(const DotCommand& cmd, std::ostream& out);

/// `tapegrad ops`.
struct OpsCommand {
  std::string format = "text";
};
int run_ops_command(const OpsCommand& cmd, std::ostream& out);

/// `tapegrad bugs [FILE]`.
struct BugsCommand {
  std::string file; ///< a graph file to inject the faults into; empty: the built-in catalogue
  std::string format = "text";
};
int run_bugs_command(const BugsCommand& cmd, std::ostream& out);

} // namespace tapegrad::app

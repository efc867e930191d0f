#pragma once
// The subcommands of the tapegrad program, one file each. Each returns the exit code: 0 success, 1 a check
// failed, 2 a user error (thrown as tapegrad::Error and turned into one line by main).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <ostream>
#include <string>

namespace tapegrad::app {

/// No arguments: the chapter's worked example 1 in double and in 50 digits, printed in full.
int run_default(std::ostream& out);

/// `tapegrad check`.
struct CheckCommand {
  std::string precision, reference, size = "4,3,3,2", format = "text";
  std::uint64_t seed = 1;
  bool directional = false;
  int directions = 3;
};
CLI::App* add_check_command(CLI::App& cli, CheckCommand& cmd);
int run_check_command(const CheckCommand& cmd, std::ostream& out);

} // namespace tapegrad::app

// The tapegrad command line program. User errors become one line on stderr and exit code 2.
#include "commands.hpp"
#include "output.hpp"

#include <tapegrad/autodiff/error.hpp>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <map>
#include <string>

int main(int argc, char** argv) {
  CLI::App cli{"tapegrad: reverse-mode automatic differentiation on a tape, built to verify gradients.\n"
               "With no arguments it records the attention chapter's worked example 1 (single-head\n"
               "self-attention, T = D = d = r = 2) in double and in 50 digits, runs backward, and prints\n"
               "the tape, A, O, J and the gradient of J at every node.",
               "tapegrad"};
  std::string level = "warn";
  const std::map<std::string, spdlog::level::level_enum> levels{
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  cli.add_option("--log-level", level, "Log messages at this level and above, on stderr")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  std::string out_file;
  cli.add_option("--out", out_file,
                 "Write the report to FILE instead of stdout, atomically (a temporary file in the same directory, "
                 "then renamed): an interrupted or failed run never leaves a partial report");
  cli.fallthrough(); // --out and --log-level may also come after the subcommand
  tapegrad::app::CheckCommand check;
  CLI::App* check_cmd = tapegrad::app::add_check_command(cli, check);
  tapegrad::app::GradCommand grad;
  CLI::App* grad_cmd = tapegrad::app::add_grad_command(cli, grad);
  tapegrad::app::BugsCommand bugs;
  CLI::App* bugs_cmd = tapegrad::app::add_bugs_command(cli, bugs);
  tapegrad::app::MergeCommand merge;
  CLI::App* merge_cmd = tapegrad::app::add_merge_command(cli, merge);
  tapegrad::app::OpsCommand ops;
  CLI::App* ops_cmd = tapegrad::app::add_ops_command(cli, ops);
  tapegrad::app::DotCommand dot;
  CLI::App* dot_cmd = tapegrad::app::add_dot_command(cli, dot);

  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tapegrad: " << e.what() << " (see tapegrad --help)\n";
    return 2;
  }

  spdlog::set_default_logger(spdlog::stderr_color_mt("tapegrad"));
  spdlog::set_level(levels.at(level));
  try {
    return tapegrad::app::run_with_output(out_file, std::cout, [&](std::ostream& out) {
      if (check_cmd->parsed()) return tapegrad::app::run_check_command(check, out);
      if (grad_cmd->parsed()) return tapegrad::app::run_grad_command(grad, out);
      if (ops_cmd->parsed()) return tapegrad::app::run_ops_command(ops, out);
      if (dot_cmd->parsed()) return tapegrad::app::run_dot_command(dot, out);
      if (bugs_cmd->parsed()) return tapegrad::app::run_bugs_command(bugs, out);
      if (merge_cmd->parsed()) return tapegrad::app::run_merge_command(merge, out);
      return tapegrad::app::run_default(out);
    });
  } catch (const tapegrad::Error& e) {
    std::cerr << "tapegrad: error: " << e.what() << "\n";
    return 2;
  }
}

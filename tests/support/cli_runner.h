// Runs the real inferscope-cli binary (INFERSCOPE_CLI_PATH) for the CLI tests.
#pragma once

#include <string>

namespace inferscope::testing {

struct CliRun {
  int exit_code = -1;  // -1 when the binary could not be started or did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
};

// `args` is appended to the binary's path and run through the shell (quote paths with quoted()).
CliRun run_cli(const std::string& args);
// The same with environment assignments ("NAME=value NAME2=value") for the run.
CliRun run_cli_with_env(const std::string& env, const std::string& args);

// Single-quotes `s` for the shell (s must not contain a single quote).
inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace inferscope::testing

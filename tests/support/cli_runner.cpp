#include "tests/support/cli_runner.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "tests/support/scratch_dir.h"

namespace inferscope::testing {

CliRun run_cli(const std::string& args) { return run_cli_with_env("", args); }

CliRun run_cli_with_env(const std::string& env, const std::string& args) {
  const std::string err_path = (scratch_dir("cli-run") / "stderr.txt").string();
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + INFERSCOPE_CLI_PATH + " " + args + " 2>" + err_path;
  CliRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  r.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  return r;
}

}  // namespace inferscope::testing

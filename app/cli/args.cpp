#include "app/cli/args.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <CLI/CLI.hpp>

namespace inferscope::cli {

// CLI11 (Debian's libcli11-dev) parses; the options, their values and the help text stay this
// parser's: "--name value" (the last one counts, strings() keeps all), "--flag", no positionals.
Args::Args(int argc, char** argv, const char* command, const char* summary, std::vector<OptionSpec> specs)
    : command_(command), summary_(summary), specs_(std::move(specs)) {
  CLI::App app(summary_, "inferscope-cli " + command_);
  std::map<std::string, std::vector<std::string>> given;
  std::map<std::string, CLI::Option*> switches;
  for (const OptionSpec& s : specs_) {
    const std::string name = std::string("--") + s.name;
    if (s.value == nullptr) {
      switches[s.name] = app.add_flag(name, s.help);
    } else {
      app.add_option(name, given[s.name], s.help)
          ->type_name(s.value)
          ->expected(1)
          ->allow_extra_args(false)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    print_help();
    exit_code_ = 0;
    return;
  } catch (const CLI::ParseError& e) {
    fail(e.what());
    return;
  }
  for (const auto& [name, option] : switches) {
    if (option->count() > 0) flags_.insert(name);
  }
  for (auto& [name, values] : given) {
    if (values.empty()) continue;
    values_[name] = values.back();
    all_values_[name] = std::move(values);
  }
}

void Args::fail(const std::string& message) {
  std::fprintf(stderr, "inferscope-cli %s: %s (see --help)\n", command_.c_str(), message.c_str());
  exit_code_ = 2;
}

void Args::print_help() const {
  std::fprintf(stderr, "usage: inferscope-cli %s [options]\n%s\n\noptions:\n", command_.c_str(), summary_.c_str());
  for (const OptionSpec& s : specs_) {
    std::string left = std::string("--") + s.name + (s.value ? std::string(" ") + s.value : "");
    std::fprintf(stderr, "  %-24s %s\n", left.c_str(), s.help);
  }
}

std::string Args::string(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::vector<std::string> Args::strings(const std::string& name) const {
  auto it = all_values_.find(name);
  return it == all_values_.end() ? std::vector<std::string>{} : it->second;
}

int64_t Args::integer(const std::string& name, int64_t fallback, int64_t min, int64_t max) {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (errno != 0 || end == it->second.c_str() || *end != '\0' || v < min || v > max) {
    fail("--" + name + " expects an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" +
         it->second + "'");
    return fallback;
  }
  return v;
}

double Args::number(const std::string& name, double fallback, double min, double max) {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || !std::isfinite(v) || v < min || v > max) {
    fail("--" + name + " expects a number in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" +
         it->second + "'");
    return fallback;
  }
  return v;
}

std::string default_model_path() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {INFERSCOPE_DEFAULT_MODEL, INFERSCOPE_INSTALLED_MODEL};
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share/inferscope/models/stories260K.gguf");
  for (const fs::path& p : candidates) {
    if (fs::exists(p, ec)) return p.string();
  }
  return candidates.front().string();
}

}  // namespace inferscope::cli

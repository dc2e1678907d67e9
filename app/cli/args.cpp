#include "app/cli/args.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace inferscope::cli {

Args::Args(int argc, char** argv, const char* command, const char* summary, std::vector<OptionSpec> specs)
    : command_(command), summary_(summary), specs_(std::move(specs)) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      print_help();
      exit_code_ = 0;
      return;
    }
    if (arg.rfind("--", 0) != 0) {
      fail("unexpected argument '" + arg + "'");
      return;
    }
    std::string name = arg.substr(2);
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs_) {
      if (name == s.name) spec = &s;
    }
    if (spec == nullptr) {
      fail("unknown option '" + arg + "'");
      return;
    }
    if (spec->value == nullptr) {
      flags_.insert(name);
      continue;
    }
    if (i + 1 >= argc) {
      fail("option '" + arg + "' needs a value (" + spec->value + ")");
      return;
    }
    values_[name] = argv[++i];
    all_values_[name].push_back(values_[name]);
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

// The commands' option parsing (over CLI11): "--name value" options and "--flag" switches, with
// typed getters that report a clear error for a bad value, and each command's --help.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace inferscope::cli {

struct OptionSpec {
  const char* name;   // without the leading dashes
  const char* value;  // value placeholder ("N", "FILE"), or nullptr for a switch
  const char* help;
};

class Args {
 public:
  // Parses argv[1..argc) against the specs. On error (unknown option, missing value) or
  // --help, prints to stderr and sets exit_code().
  Args(int argc, char** argv, const char* command, const char* summary, std::vector<OptionSpec> specs);

  bool ok() const { return !exit_code_.has_value(); }
  int exit_code() const { return exit_code_.value_or(0); }

  bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string string(const std::string& name, const std::string& fallback = "") const;  // the last given
  std::vector<std::string> strings(const std::string& name) const;  // every value given, in order
  // Numeric getters: on a malformed or out-of-range value they print an error and mark the
  // arguments failed (check ok() afterwards).
  int64_t integer(const std::string& name, int64_t fallback, int64_t min, int64_t max);
  double number(const std::string& name, double fallback, double min, double max);
  void fail(const std::string& message);

 private:
  void print_help() const;

  std::string command_;
  std::string summary_;
  std::vector<OptionSpec> specs_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> all_values_;
  std::set<std::string> flags_;
  std::optional<int> exit_code_;
};

// The bundled default model: next to the sources, installed, or beside the executable.
std::string default_model_path();

}  // namespace inferscope::cli

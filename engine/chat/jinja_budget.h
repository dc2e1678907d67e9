// What one render of a template may spend. Templates come from model files, so they are
// untrusted: every loop, string, list and comparison draws on this budget, and the first limit
// reached stops the render with a LimitError that names it. The defaults leave real chat
// templates (a few hundred steps and kilobytes per conversation) far inside every limit and
// stop a hostile one within about a second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/chat/jinja_error.h"

namespace inferscope::jinja {

struct RenderOptions {
  size_t max_output_bytes = size_t(1) << 22;  // the output, and every string the template builds
  int64_t max_steps = int64_t(1) << 20;       // statements, loop iterations, list and dict elements built
  size_t max_work_bytes = size_t(1) << 28;    // bytes built, copied, scanned and compared in all
  int max_call_depth = 64;                    // nested macro calls
  int max_eval_depth = 512;                   // statements and expressions nested at run time
  int64_t now_unix_seconds = -1;              // strftime_now's clock; -1 = the current time
};

class Budget {
 public:
  explicit Budget(const RenderOptions& options) : options_(options) {}

  const RenderOptions& options() const { return options_; }
  size_t max_string() const { return options_.max_output_bytes; }

  // n statements, loop iterations or elements; charged before the elements are made.
  void step(int64_t n = 1);
  // Bytes read or written by an operation whose cost grows with its input.
  void work(size_t bytes);
  // Throws the output limit unless a string of `bytes` may exist.
  void fits_string(size_t bytes) const;
  // `s`, a string just built: within the output limit and charged as work.
  std::string built(std::string s);

  // One level of a nesting limit while it lives: a statement or expression inside another
  // (Evaluation), or a macro called from a macro (MacroCall).
  class Depth {
   public:
    enum Kind { Evaluation, MacroCall };
    Depth(Budget& budget, Kind kind);
    ~Depth() { --*depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;

   private:
    int* depth_;
  };

 private:
  RenderOptions options_;
  int64_t steps_ = 0;
  size_t work_ = 0;
  int eval_depth_ = 0;
  int call_depth_ = 0;
};

}  // namespace inferscope::jinja

#include "engine/chat/jinja_budget.h"

namespace inferscope::jinja {

void Budget::step(int64_t n) {
  if (n > options_.max_steps - steps_) {
    throw LimitError(Limit::Steps, "template ran past its step limit (" + std::to_string(options_.max_steps) +
                                       " statements, loop iterations and list elements)");
  }
  steps_ += n;
}

void Budget::work(size_t bytes) {
  if (bytes > options_.max_work_bytes - work_) {
    throw LimitError(Limit::Work, "template ran past its work limit (" + std::to_string(options_.max_work_bytes >> 20) +
                                      " MiB of strings built, copied and compared)");
  }
  work_ += bytes;
}

void Budget::fits_string(size_t bytes) const {
  if (bytes > options_.max_output_bytes) {
    throw LimitError(Limit::Output, "template output exceeds its limit of " + std::to_string(options_.max_output_bytes) +
                                        " bytes (the output and any one string)");
  }
}

std::string Budget::built(std::string s) {
  fits_string(s.size());
  work(s.size());
  return s;
}

Budget::Depth::Depth(Budget& budget, Kind kind)
    : depth_(kind == Evaluation ? &budget.eval_depth_ : &budget.call_depth_) {
  const int limit = kind == Evaluation ? budget.options_.max_eval_depth : budget.options_.max_call_depth;
  if (++*depth_ > limit) {
    --*depth_;
    throw kind == Evaluation
        ? LimitError(Limit::Nesting, "template evaluation nested deeper than " + std::to_string(limit) + " levels")
        : LimitError(Limit::CallDepth, "macro calls nested deeper than " + std::to_string(limit));
  }
}

}  // namespace inferscope::jinja

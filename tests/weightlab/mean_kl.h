// The mean KL divergence of a converted model from its source on a held-out text (the shipped one by default)
// (the quality report of engine/compare/quality_report.h, 2 threads, one repetition).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "engine/compare/quality_report.h"

namespace inferscope::testing {

// eval_text empty: the shipped evaluation text.
inline double mean_kl(const std::string& reference, const std::string& candidate, const std::string& eval_text = "") {
  QualityReportOptions o;
  o.reference = reference;
  o.candidate = candidate;
  o.eval_text = eval_text;
  o.n_threads = 2;
  o.reps = 1;
  o.max_tokens = 4;
  auto r = evaluate_models(o);
  EXPECT_TRUE(r) << r.message();
  return r ? r->mean_kl : 1e9;
}

}  // namespace inferscope::testing

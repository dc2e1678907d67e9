// The mean KL divergence of a converted model from its source on the shipped held-out text
// (the quality report of engine/compare/quality_report.h, 2 threads, one repetition).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "engine/compare/quality_report.h"

namespace inferscope::testing {

inline double mean_kl(const std::string& reference, const std::string& candidate) {
  QualityReportOptions o;
  o.reference = reference;
  o.candidate = candidate;
  o.n_threads = 2;
  o.reps = 1;
  o.max_tokens = 4;
  auto r = evaluate_models(o);
  EXPECT_TRUE(r) << r.message();
  return r ? r->mean_kl : 1e9;
}

}  // namespace inferscope::testing

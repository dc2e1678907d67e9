// SamplingParams::validate and BeamSearchParams::validate: defaults pass, each out-of-range
// field is rejected with a message naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "engine/sampling/beam_search.h"
#include "engine/sampling/sampler.h"
#include "engine/sampling/sampling_params.h"

namespace inferscope {
namespace {

TEST(SamplingParams, DefaultsMatchLlamaCpp) {
  const SamplingParams p;
  EXPECT_FLOAT_EQ(p.temperature, 0.8f);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_FLOAT_EQ(p.top_p, 0.95f);
  EXPECT_FLOAT_EQ(p.min_p, 0.05f);
  EXPECT_FLOAT_EQ(p.repeat_penalty, 1.0f);
  EXPECT_EQ(p.repeat_last_n, 64);
  EXPECT_EQ(p.seed, 0xFFFFFFFFu);
  EXPECT_TRUE(p.validate().is_ok()) << p.validate().message();
}

TEST(SamplingParams, BoundaryValuesAreValid) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.repeat_last_n = -1;
  p.frequency_penalty = -0.5f;
  p.presence_penalty = 2.0f;
  EXPECT_TRUE(p.validate().is_ok()) << p.validate().message();
  p.min_p = 1.0f;
  EXPECT_TRUE(p.validate().is_ok()) << p.validate().message();
}

void expect_rejected(const std::function<void(SamplingParams&)>& change, const std::string& field) {
  SamplingParams p;
  change(p);
  const Status st = p.validate();
  ASSERT_FALSE(st.is_ok()) << field;
  EXPECT_NE(st.message().find(field), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("expected"), std::string::npos) << st.message();
}

TEST(SamplingParams, OutOfRangeValuesAreRejectedByName) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  expect_rejected([](SamplingParams& p) { p.temperature = -0.1f; }, "temperature");
  expect_rejected([&](SamplingParams& p) { p.temperature = nan; }, "temperature");
  expect_rejected([&](SamplingParams& p) { p.temperature = inf; }, "temperature");
  expect_rejected([](SamplingParams& p) { p.top_k = -1; }, "top_k");
  expect_rejected([](SamplingParams& p) { p.top_p = 0.0f; }, "top_p");
  expect_rejected([](SamplingParams& p) { p.top_p = 1.01f; }, "top_p");
  expect_rejected([&](SamplingParams& p) { p.top_p = nan; }, "top_p");
  expect_rejected([](SamplingParams& p) { p.min_p = -0.01f; }, "min_p");
  expect_rejected([](SamplingParams& p) { p.min_p = 1.5f; }, "min_p");
  expect_rejected([](SamplingParams& p) { p.repeat_penalty = 0.0f; }, "repeat_penalty");
  expect_rejected([&](SamplingParams& p) { p.repeat_penalty = inf; }, "repeat_penalty");
  expect_rejected([](SamplingParams& p) { p.repeat_last_n = -2; }, "repeat_last_n");
  expect_rejected([&](SamplingParams& p) { p.frequency_penalty = nan; }, "frequency_penalty");
  expect_rejected([&](SamplingParams& p) { p.presence_penalty = -inf; }, "presence_penalty");
}

TEST(SamplingParams, MessageShowsTheValue) {
  SamplingParams p;
  p.top_p = 1.5f;
  EXPECT_NE(p.validate().message().find("top_p = 1.5"), std::string::npos) << p.validate().message();
}

TEST(SamplingParams, SamplerCreateValidates) {
  SamplingParams bad;
  bad.temperature = -1.0f;
  auto r = Sampler::create(bad, 10);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.message().find("temperature"), std::string::npos);
  auto no_vocab = Sampler::create(SamplingParams{}, 0);
  ASSERT_FALSE(no_vocab.is_ok());
  EXPECT_NE(no_vocab.message().find("n_vocab"), std::string::npos);
  auto good = Sampler::create(SamplingParams{}, 10);
  ASSERT_TRUE(good.is_ok()) << good.message();
  EXPECT_EQ(good->n_vocab(), 10);
}

TEST(BeamSearchParams, Validate) {
  BeamSearchParams p;
  EXPECT_TRUE(p.validate().is_ok());
  p.beam_width = 0;
  EXPECT_NE(p.validate().message().find("beam_width"), std::string::npos);
  p = {};
  p.max_tokens = -1;
  EXPECT_NE(p.validate().message().find("max_tokens"), std::string::npos);
  p = {};
  p.length_penalty = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(p.validate().message().find("length_penalty"), std::string::npos);
}

}  // namespace
}  // namespace inferscope

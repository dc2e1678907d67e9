#include "tests/support/reference_2026.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "engine/core/sha256.h"
#include "engine/model/quant_mix.h"
#include "engine/model/random_model.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope::testing {

namespace {

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Sha256 h;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) h.update(buffer, static_cast<size_t>(in.gcount()));
  return Sha256::hex(h.finish());
}

// log_softmax of one row of logits.
std::vector<double> log_probs(const float* logits, int64_t n) {
  const double max = *std::max_element(logits, logits + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(logits[i] - max);
  const double lse = max + std::log(sum);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = logits[i] - lse;
  return out;
}

}  // namespace

Result<Reference2026> load_reference_2026(const std::string& name) {
  const std::string json_path = std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/llama.cpp-2026/" + name + ".json";
  std::ifstream in(json_path);
  if (!in) return Status::error("cannot read " + json_path);
  const auto j = nlohmann::json::parse(in);
  const auto& m = j.at("model");
  Reference2026 r;
  r.name = name;
  if (m.contains("file")) {
    r.model_path = std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/llama.cpp-2026/" + m.at("file").get<std::string>();
  } else {
    RandomModelSpec spec;
    if (!random_model_preset(m.at("preset").get<std::string>(), &spec.shape)) return Status::error("unknown preset");
    const auto mix = quant_mix_from_name(m.at("type").get<std::string>());
    if (!mix) return Status::error("unknown type");
    spec.mix = *mix;
    spec.seed = m.at("seed").get<uint64_t>();
    spec.name = m.at("preset").get<std::string>();
    spec.vocab_path = testdata(m.at("vocab").get<std::string>());
    r.model_path = (scratch_dir("reference-2026-" + name) / (name + ".gguf")).string();
    INFERSCOPE_RETURN_IF_ERROR(write_random_model(spec, r.model_path));
  }
  const std::string sha = file_sha256(r.model_path);
  if (sha != m.at("sha256").get<std::string>()) {
    return Status::error("make-model wrote a different " + name + " (sha256 " + sha + ") than the reference was made from: "
                         "regenerate tests/data/llama.cpp-2026 as its README says");
  }
  if (j.contains("dequantized_sha256")) {
    for (const auto& [tensor, hash] : j.at("dequantized_sha256").items()) r.dequantized_sha256[tensor] = hash;
  }
  r.prompt_ids = j.at("prompt_ids").get<std::vector<int32_t>>();
  if (m.at("type").get<std::string>() != "f32") {
    r.tolerance = 0.15;
    r.near_tie = 0.1;
  }
  bool apart = true;
  for (const auto& s : j.at("steps")) {
    r.steps.push_back(s.at("id").get<int32_t>());
    auto& top = r.top5.emplace_back();
    for (const auto& pair : s.at("top5")) top.emplace_back(pair[0].get<int32_t>(), pair[1].get<double>());
    const bool decisive = top.size() >= 2 && top[0].second - top[1].second >= r.near_tie;
    r.decisive += decisive;
    apart = apart && decisive;
    if (apart) ++r.trusted;
  }
  return r;
}

void expect_matches_reference_2026(ForwardExecutor& fp, const Reference2026& ref) {
  const int64_t n_vocab = fp.output_width();
  std::vector<int32_t> forced = ref.prompt_ids;
  forced.insert(forced.end(), ref.steps.begin(), ref.steps.end());
  std::vector<float> logits(forced.size() * static_cast<size_t>(n_vocab));
  fp.clear();
  Status st = fp.forward(0, forced, true, logits.data());
  ASSERT_TRUE(st) << st.message();
  double worst = 0;
  for (size_t i = 0; i < ref.steps.size(); ++i) {
    const auto lp = log_probs(logits.data() + (ref.prompt_ids.size() - 1 + i) * n_vocab, n_vocab);
    for (const auto& [id, expected] : ref.top5[i]) {
      EXPECT_NEAR(lp[static_cast<size_t>(id)], expected, ref.tolerance) << ref.name << " step " << i << " token " << id;
      worst = std::max(worst, std::fabs(lp[static_cast<size_t>(id)] - expected));
    }
    if (ref.top5[i][0].second - ref.top5[i][1].second >= ref.near_tie) {
      const auto best = std::max_element(lp.begin(), lp.end()) - lp.begin();
      EXPECT_EQ(best, ref.steps[i]) << ref.name << " teacher-forced step " << i;
    }
  }
  std::printf("%s on %s: max |log-prob - llama.cpp| over the top-5 of %zu steps %.3g\n", ref.name.c_str(),
              fp.backend_name().c_str(), ref.steps.size(), worst);

  fp.clear();
  std::vector<float> last(static_cast<size_t>(n_vocab));
  st = fp.forward(0, ref.prompt_ids, false, last.data());
  std::vector<int32_t> greedy;
  for (size_t i = 0; st && i < ref.steps.size(); ++i) {
    const auto best = static_cast<int32_t>(std::max_element(last.begin(), last.end()) - last.begin());
    greedy.push_back(best);
    st = fp.forward(0, std::span<const int32_t>(&best, 1), false, last.data());
  }
  ASSERT_TRUE(st) << st.message();
  EXPECT_GE(ref.decisive, ref.steps.size() / 2) << ref.name << ": too many near-ties for a useful reference";
  for (size_t i = 0; i < ref.trusted; ++i) EXPECT_EQ(greedy[i], ref.steps[i]) << ref.name << " step " << i;
}

}  // namespace inferscope::testing

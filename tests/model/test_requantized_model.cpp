// Requantize on load: the model converted in memory holds, tensor for tensor, the bytes the
// quantize command writes to a file, and runs like that file.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/model/quantize_model.h"
#include "engine/model/requantized_model.h"
#include "engine/runtime/session.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

void expect_same_tensors(const std::string& source, const char* mix_name) {
  SCOPED_TRACE(source + " to " + mix_name);
  const QuantMix mix = quant_mix_from_name(mix_name).value();
  const std::string written = (testing::scratch_dir("requantize") / "written.gguf").string();
  ASSERT_TRUE(quantize_model(source, written, QuantizeOptions{mix, 2, nullptr}));
  auto file = gguf::File::open(written);
  ASSERT_TRUE(file) << file.message();
  std::vector<double> progress;
  ModelLoadOptions options;
  options.on_progress = [&](double f) { progress.push_back(f); };
  auto model = load_requantized(source, mix, options, 2);
  ASSERT_TRUE(model) << model.message();
  const gguf::File& memory = (*model)->file();
  EXPECT_EQ(memory.path(), requantized_name(source, mix));
  ASSERT_EQ(memory.tensors().size(), (*file)->tensors().size());
  for (size_t i = 0; i < memory.tensors().size(); ++i) {
    const gguf::TensorInfo& a = (*file)->tensors()[i];
    const gguf::TensorInfo& b = memory.tensors()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type) << a.name;
    ASSERT_EQ(a.n_bytes, b.n_bytes) << a.name;
    EXPECT_EQ(std::memcmp(a.data, b.data, a.n_bytes), 0) << a.name;
  }
  EXPECT_EQ(memory.metadata().size(), (*file)->metadata().size());
  EXPECT_EQ(memory.get_int("general.file_type").value(), mix.file_type);
  ASSERT_FALSE(progress.empty());
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_EQ(progress.back(), 1.0);
}

TEST(RequantizedModel, HoldsTheBytesQuantizeWrites) {
  expect_same_tensors(testing::testdata("quant/base-f32.gguf"), "q4_k_m");
  expect_same_tensors(testing::testdata("quant/base-f32.gguf"), "q8_0");
  expect_same_tensors(testing::testdata("quant/base-f32.gguf"), "tq2_0");
  expect_same_tensors(testing::testdata("stories260K.gguf"), "q4_0");
  expect_same_tensors(testing::testdata("stories260K.gguf"), "iq4_nl");
}

TEST(RequantizedModel, GeneratesWhatTheWrittenFileGenerates) {
  const QuantMix mix = quant_mix_from_name("q4_0").value();
  const std::string source = testing::testdata("stories260K.gguf");
  const std::string written = (testing::scratch_dir("requantize-run") / "q4_0.gguf").string();
  ASSERT_TRUE(quantize_model(source, written, QuantizeOptions{mix, 2, nullptr}));
  auto from_file = Model::load(written);
  auto in_memory = load_requantized(source, mix, {}, 2);
  ASSERT_TRUE(from_file && in_memory);
  std::vector<std::string> texts;
  for (const auto& model : {*from_file, *in_memory}) {
    SessionOptions so;
    so.n_threads = 2;
    auto session = Session::create(model, so);
    ASSERT_TRUE(session) << session.message();
    GenerateRequest request;
    request.prompt = "Once upon a time";
    request.max_tokens = 32;
    request.sampling.temperature = 0;
    auto result = (*session)->generate(request);
    ASSERT_TRUE(result) << result.message();
    texts.push_back(result->text);
  }
  EXPECT_EQ(texts[0], texts[1]);
}

TEST(RequantizedModel, AFileThatCannotBeReadFailsWithItsName) {
  auto model = load_requantized("/nonexistent/m.gguf", quant_mix_from_name("q8_0").value(), {}, 1);
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("/nonexistent/m.gguf"), std::string::npos);
}

}  // namespace
}  // namespace inferscope

// The GGUF reader on every real file of the shared test data: header summaries against
// PROVENANCE.md ("Output of the GGUF reader for every file") and the quant/*.gguf.json references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope::gguf {
namespace {

using inferscope::testing::testdata;

std::shared_ptr<const File> open_or_fail(const std::string& path) {
  auto r = File::open(path);
  EXPECT_TRUE(r.is_ok()) << r.message();
  return r.is_ok() ? r.value() : nullptr;
}

// Structural invariants every valid file must satisfy, whatever its content.
void expect_consistent_layout(const File& f) {
  EXPECT_EQ(f.data_offset() % f.alignment(), 0u) << f.path();
  uint64_t expected_offset = 0;
  for (const TensorInfo& t : f.tensors()) {
    SCOPED_TRACE(f.path() + " " + t.name);
    EXPECT_LT(t.name.size(), 64u);
    EXPECT_EQ(t.offset, expected_offset);
    EXPECT_EQ(t.offset % f.alignment(), 0u);
    kernels::TypeInfo info = kernels::type_info(t.type);
    uint64_t n = 1;
    for (int64_t d : t.ne) n *= static_cast<uint64_t>(d);
    EXPECT_EQ(t.n_elements, n);
    EXPECT_EQ(t.ne[0] % info.block_size, 0);
    EXPECT_EQ(t.row_bytes, t.ne[0] / info.block_size * info.type_size);
    EXPECT_EQ(t.n_bytes, static_cast<uint64_t>(t.row_bytes) * (n / static_cast<uint64_t>(t.ne[0])));
    EXPECT_LE(f.data_offset() + t.offset + t.n_bytes, f.file_size());
    ASSERT_NE(t.data, nullptr);
    EXPECT_EQ(f.find_tensor(t.name), &t);
    expected_offset += (t.n_bytes + f.alignment() - 1) / f.alignment() * f.alignment();
  }
  for (const KeyValue& kv : f.metadata()) EXPECT_EQ(f.find(kv.key), &kv.value) << kv.key;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(GgufReader, Stories260KHeaderAndMetadata) {
  auto f = open_or_fail(testdata("stories260K.gguf"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->file_size(), 1185376u);
  EXPECT_EQ(f->tensors().size(), 48u);
  EXPECT_EQ(f->metadata().size(), 19u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->data_offset(), 14176u);
  expect_consistent_layout(*f);

  // Metadata in file order, with exact on-disk types.
  std::vector<std::string> keys;
  for (const KeyValue& kv : f->metadata()) keys.push_back(kv.key);
  const std::vector<std::string> file_order = {
      "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.model",
      "general.architecture", "general.name", "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.bos_token_id",
      "tokenizer.ggml.eos_token_id", "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.padding_token_id",
      "llama.context_length", "llama.embedding_length", "llama.feed_forward_length",
      "llama.attention.head_count", "llama.attention.head_count_kv", "llama.block_count",
      "llama.rope.dimension_count", "llama.attention.layer_norm_rms_epsilon"};
  EXPECT_EQ(keys, file_order);
  EXPECT_EQ(f->get_string("general.architecture").value(), "llama");
  EXPECT_EQ(f->get_string("general.name").value(), "llama");
  EXPECT_EQ(f->get_int("llama.context_length").value(), 2048);
  EXPECT_EQ(f->get_int("llama.embedding_length").value(), 64);
  EXPECT_EQ(f->get_int("llama.feed_forward_length").value(), 172);
  EXPECT_EQ(f->get_int("llama.attention.head_count").value(), 8);
  EXPECT_EQ(f->get_int("llama.attention.head_count_kv").value(), 4);
  EXPECT_EQ(f->get_int("llama.block_count").value(), 5);
  EXPECT_EQ(f->get_int("llama.rope.dimension_count").value(), 8);
  const Value* eps = f->find("llama.attention.layer_norm_rms_epsilon");
  ASSERT_TRUE(eps);
  EXPECT_EQ(eps->type, ValueType::FLOAT32);
  EXPECT_EQ(eps->real, 9.999999747378752e-06);
  EXPECT_EQ(f->get_string("tokenizer.ggml.model").value(), "llama");
  const Value* sep = f->find("tokenizer.ggml.seperator_token_id");
  ASSERT_TRUE(sep);
  EXPECT_EQ(sep->type, ValueType::UINT32);
  EXPECT_EQ(sep->integer, 4294967295);
  EXPECT_EQ(f->get_int("tokenizer.ggml.bos_token_id").value(), 1);
  EXPECT_EQ(f->get_int("tokenizer.ggml.eos_token_id").value(), 2);
  EXPECT_FALSE(f->has("general.alignment"));
  EXPECT_FALSE(f->has("llama.rope.freq_base"));

  auto tokens = f->get_string_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens) << tokens.message();
  ASSERT_EQ((*tokens)->size(), 512u);
  EXPECT_EQ((**tokens)[0], "<unk>");
  EXPECT_EQ((**tokens)[1], "<s>");
  EXPECT_EQ((**tokens)[2], "</s>");
  auto scores = f->get_float_array("tokenizer.ggml.scores");
  ASSERT_TRUE(scores) << scores.message();
  EXPECT_EQ(scores->size(), 512u);
  EXPECT_EQ(f->find("tokenizer.ggml.scores")->array_type, ValueType::FLOAT32);
  auto types = f->get_int_array("tokenizer.ggml.token_type");
  ASSERT_TRUE(types) << types.message();
  EXPECT_EQ(types->size(), 512u);
  EXPECT_EQ(f->find("tokenizer.ggml.token_type")->array_type, ValueType::INT32);
  EXPECT_EQ((*types)[0], 2);  // <unk> is UNKNOWN
  EXPECT_EQ((*types)[1], 3);  // <s> is CONTROL
}

TEST(GgufReader, Stories260KTensors) {
  auto f = open_or_fail(testdata("stories260K.gguf"));
  ASSERT_TRUE(f);
  struct Expected {
    const char* name;
    std::vector<int64_t> ne;
  };
  const std::vector<Expected> expected = {
      {"token_embd.weight", {64, 512}},       {"output_norm.weight", {64}},
      {"output.weight", {64, 512}},           {"blk.0.attn_q.weight", {64, 64}},
      {"blk.0.attn_k.weight", {64, 32}},      {"blk.0.attn_v.weight", {64, 32}},
      {"blk.0.attn_output.weight", {64, 64}}, {"blk.0.attn_norm.weight", {64}},
      {"blk.0.ffn_gate.weight", {64, 172}},   {"blk.0.ffn_down.weight", {172, 64}},
      {"blk.0.ffn_up.weight", {64, 172}},     {"blk.0.ffn_norm.weight", {64}},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.name);
    const TensorInfo* t = f->find_tensor(e.name);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->type, kernels::GgmlType::F32);
    for (size_t d = 0; d < 4; ++d) EXPECT_EQ(t->ne[d], d < e.ne.size() ? e.ne[d] : 1) << "dim " << d;
  }
  EXPECT_EQ(f->find_tensor("token_embd.weight")->shape_string(), "[64, 512]");
  EXPECT_EQ(f->find_tensor("output_norm.weight")->shape_string(), "[64]");
  EXPECT_EQ(f->find_tensor("token_embd.weight")->n_bytes, 64u * 512u * 4u);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->row_bytes, 256);
  EXPECT_EQ(f->find_tensor("missing.weight"), nullptr);
  EXPECT_EQ(f->tensors().back().name, "blk.4.ffn_norm.weight");
  EXPECT_EQ(f->tensors().back().offset, 1170944u);

  // Tensor pointers address the file's bytes at data_offset + offset.
  std::vector<uint8_t> bytes = read_file_bytes(testdata("stories260K.gguf"));
  ASSERT_EQ(bytes.size(), f->file_size());
  for (const TensorInfo& t : f->tensors()) {
    ASSERT_EQ(0, std::memcmp(t.data, bytes.data() + f->data_offset() + t.offset, t.n_bytes)) << t.name;
  }
}

TEST(GgufReader, ParseFromMemoryMatchesOpen) {
  std::vector<uint8_t> bytes = read_file_bytes(testdata("stories260K.gguf"));
  auto parsed = File::parse(bytes, "in-memory stories");
  ASSERT_TRUE(parsed) << parsed.message();
  auto opened = open_or_fail(testdata("stories260K.gguf"));
  ASSERT_TRUE(opened);
  EXPECT_EQ((*parsed)->path(), "in-memory stories");
  EXPECT_EQ((*parsed)->data_offset(), opened->data_offset());
  ASSERT_EQ((*parsed)->tensors().size(), opened->tensors().size());
  for (size_t i = 0; i < opened->tensors().size(); ++i) {
    const TensorInfo& a = (*parsed)->tensors()[i];
    const TensorInfo& b = opened->tensors()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.offset, b.offset);
    EXPECT_EQ(0, std::memcmp(a.data, b.data, a.n_bytes)) << a.name;
  }
}

TEST(GgufReader, TypedGettersReportFileKeyAndExpectedType) {
  auto f = open_or_fail(testdata("stories260K.gguf"));
  ASSERT_TRUE(f);
  auto missing = f->get_int("llama.expert_count");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("stories260K.gguf"), std::string::npos) << missing.message();
  EXPECT_NE(missing.message().find("llama.expert_count"), std::string::npos) << missing.message();
  auto wrong = f->get_int("general.architecture");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("general.architecture"), std::string::npos) << wrong.message();
  EXPECT_NE(wrong.message().find("STRING"), std::string::npos) << wrong.message();
  EXPECT_FALSE(f->get_string("llama.block_count"));
  EXPECT_FALSE(f->get_string_array("tokenizer.ggml.scores"));
  EXPECT_FALSE(f->get_float_array("tokenizer.ggml.tokens"));
  EXPECT_EQ(f->get_int_or("llama.expert_count", 0).value(), 0);
  EXPECT_EQ(f->get_float_or("llama.rope.freq_base", 10000.0).value(), 10000.0);
  EXPECT_FALSE(f->get_int_or("general.name", 0));  // present with the wrong type: still an error
  EXPECT_EQ(f->get_float("llama.attention.layer_norm_rms_epsilon").value(), 9.999999747378752e-06);
}

TEST(GgufReader, OpenMissingFileNamesThePath) {
  auto r = File::open("/nonexistent/dir/model.gguf");
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("/nonexistent/dir/model.gguf"), std::string::npos) << r.message();
}

TEST(GgufReader, OpenEmptyFileFailsCleanly) {
  auto dir = inferscope::testing::scratch_dir("gguf-empty");
  std::string path = (dir / "empty.gguf").string();
  std::ofstream(path, std::ios::binary).close();
  auto r = File::open(path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find(path), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("magic"), std::string::npos) << r.message();
}

TEST(GgufReader, OpenDirectoryFailsCleanly) {
  auto r = File::open(testdata("quant"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("quant"), std::string::npos) << r.message();
}

// Summaries from PROVENANCE.md, "Output of the GGUF reader for every file".
struct Summary {
  const char* path;
  uint64_t file_size;
  size_t n_tensors;
  size_t n_kv;
  const char* arch;
  size_t vocab;
  uint64_t data_start;      // 0: not listed (vocab-only files)
  const char* last_tensor;  // with its offset below
  uint64_t last_offset;
  std::map<std::string, int> type_counts;
};

const std::vector<Summary>& summaries() {
  static const std::vector<Summary> s = {
      {"stories260K.gguf", 1185376, 48, 19, "llama", 512, 14176, "blk.4.ffn_norm.weight", 1170944, {{"f32", 48}}},
      {"llama-2-tiny-random.gguf", 1750560, 12, 18, "llama", 32000, 724416, "output.weight", 514144,
       {{"f16", 9}, {"f32", 3}}},
      {"derived/stories260K-moe4-identical.gguf", 3172544, 53, 21, "llama", 512, 14784,
       "blk.4.ffn_down_exps.weight", 2981632, {{"f32", 53}}},
      {"derived/stories260K-moe4-distinct.gguf", 3172544, 53, 21, "llama", 512, 14784,
       "blk.4.ffn_down_exps.weight", 2981632, {{"f32", 53}}},
      {"derived/stories260K-qwen2moe.gguf", 3838976, 88, 22, "qwen2moe", 512, 16896,
       "blk.4.ffn_down_shexp.weight", 3778048, {{"f32", 88}}},
      {"derived/tiny-random-bert-bge.gguf", 2642368, 37, 21, "bert", 30522, 629696,
       "blk.1.layer_output_norm.bias", 2012608, {{"f32", 37}}},
      {"llama.cpp-vocab/ggml-vocab-baichuan.gguf", 1340998, 0, 18, "baichuan", 64000, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-bert-bge.gguf", 627549, 0, 20, "bert", 30522, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-deepseek-coder.gguf", 1156067, 0, 25, "llama", 32256, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-deepseek-llm.gguf", 3970167, 0, 23, "llama", 102400, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-falcon.gguf", 2287728, 0, 18, "falcon", 65024, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-gpt-2.gguf", 1766807, 0, 16, "gpt2", 50257, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-gpt-neox.gguf", 1771431, 0, 17, "gptneox", 50432, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-llama-spm.gguf", 723869, 0, 22, "llama", 32000, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-mpt.gguf", 1771393, 0, 17, "mpt", 50432, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-phi-3.gguf", 726019, 0, 26, "phi3", 32064, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-refact.gguf", 1720710, 0, 18, "refact", 49216, 0, "", 0, {}},
      {"llama.cpp-vocab/ggml-vocab-starcoder.gguf", 1719346, 0, 19, "starcoder2", 49152, 0, "", 0, {}},
      {"derived/ggml-vocab-llama-bpe.gguf", 7818272, 0, 21, "llama", 128256, 0, "", 0, {}},
      {"derived/ggml-vocab-qwen2.gguf", 5928384, 0, 19, "qwen2", 151936, 0, "", 0, {}},
  };
  return s;
}

class GgufReaderSummary : public ::testing::TestWithParam<Summary> {};

TEST_P(GgufReaderSummary, MatchesProvenance) {
  const Summary& e = GetParam();
  auto f = open_or_fail(testdata(e.path));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->file_size(), e.file_size);
  EXPECT_EQ(f->tensors().size(), e.n_tensors);
  EXPECT_EQ(f->metadata().size(), e.n_kv);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->get_string("general.architecture").value(), e.arch);
  auto tokens = f->get_string_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens) << tokens.message();
  EXPECT_EQ((*tokens)->size(), e.vocab);
  expect_consistent_layout(*f);
  if (e.n_tensors > 0) {
    EXPECT_EQ(f->data_offset(), e.data_start);
    EXPECT_EQ(f->tensors().back().name, e.last_tensor);
    EXPECT_EQ(f->tensors().back().offset, e.last_offset);
    // "data ends at <file size>": the last tensor reaches exactly the end of these files.
    const TensorInfo& last = f->tensors().back();
    EXPECT_EQ(f->data_offset() + last.offset + last.n_bytes, f->file_size());
  }
  std::map<std::string, int> counts;
  for (const TensorInfo& t : f->tensors()) counts[kernels::type_name(t.type)]++;
  EXPECT_EQ(counts, e.type_counts);
}

INSTANTIATE_TEST_SUITE_P(AllFiles, GgufReaderSummary, ::testing::ValuesIn(summaries()),
                         [](const ::testing::TestParamInfo<Summary>& info) {
                           std::string name = std::filesystem::path(info.param.path).stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(GgufReader, EveryShippedGgufOpens) {
  // Catches files added to the shared data later without a summary above.
  size_t n = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(inferscope::testing::testdata_dir())) {
    if (entry.path().extension() != ".gguf") continue;
    auto r = File::open(entry.path().string());
    EXPECT_TRUE(r) << r.message();
    if (r) expect_consistent_layout(**r);
    ++n;
  }
  EXPECT_GE(n, summaries().size() + 17);
}

// quant/*.gguf against their <file>.json: sizes, tensor names, types, shapes and element counts.
class GgufReaderQuant : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufReaderQuant, MatchesJsonReference) {
  const std::string path = testdata("quant/" + GetParam());
  std::ifstream in(path + ".json");
  ASSERT_TRUE(in) << path << ".json";
  nlohmann::json ref = nlohmann::json::parse(in);
  auto f = open_or_fail(path);
  ASSERT_TRUE(f);
  expect_consistent_layout(*f);
  EXPECT_EQ(f->file_size(), ref["file_size"].get<uint64_t>());
  EXPECT_EQ(f->get_int("general.file_type").value(), ref["general_file_type"].get<int64_t>());
  EXPECT_EQ(f->get_string("general.name").value(), "quant-conformance-llama-e512-l1");
  ASSERT_EQ(f->tensors().size(), ref["tensors"].size());
  std::map<std::string, int> counts;
  for (const auto& t : ref["tensors"]) {
    const std::string name = t["name"].get<std::string>();
    SCOPED_TRACE(name);
    const TensorInfo* info = f->find_tensor(name);
    ASSERT_TRUE(info);
    EXPECT_EQ(static_cast<uint32_t>(info->type), t["ggml_type_id"].get<uint32_t>());
    auto shape = t["shape"].get<std::vector<int64_t>>();
    for (size_t d = 0; d < 4; ++d) EXPECT_EQ(info->ne[d], d < shape.size() ? shape[d] : 1) << "dim " << d;
    EXPECT_EQ(info->n_elements, t["n_elements"].get<uint64_t>());
    std::string upper = kernels::type_name(info->type);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(upper, t["ggml_type"].get<std::string>());
    counts[t["ggml_type"].get<std::string>()]++;
  }
  EXPECT_EQ(counts, ref["tensor_type_counts"].get<decltype(counts)>());
}

std::vector<std::string> quant_files() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(testdata("quant"))) {
    if (entry.path().extension() == ".gguf") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GgufReaderQuant, ::testing::ValuesIn(quant_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(GgufReader, QuantSetHasEveryExpectedFile) { EXPECT_EQ(quant_files().size(), 17u); }

}  // namespace
}  // namespace inferscope::gguf

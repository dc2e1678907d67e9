// GGUF writer: round trips through the reader (every value type, arrays, alignment, tensor
// types, streamed sources), byte-exact rewrites of real files, and the writer's own validation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope::gguf {
namespace {

using inferscope::testing::testdata;
using kernels::GgmlType;

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::shared_ptr<const File> round_trip(const Writer& w, const std::string& name = "roundtrip.gguf") {
  auto bytes = w.write_to_memory();
  EXPECT_TRUE(bytes) << bytes.message();
  if (!bytes) return nullptr;
  auto f = File::parse(std::move(bytes.value()), name);
  EXPECT_TRUE(f) << f.message();
  return f ? f.value() : nullptr;
}

bool same_value(const Value& a, const Value& b) {
  if (a.type != b.type) return false;
  if (a.type == ValueType::ARRAY) {
    return a.array_type == b.array_type && a.integers == b.integers && a.reals == b.reals && a.strings == b.strings;
  }
  if (a.type == ValueType::STRING) return a.string == b.string;
  if (is_float(a.type)) return a.real == b.real || (std::isnan(a.real) && std::isnan(b.real));
  return a.integer == b.integer;
}

TEST(GgufWriter, EveryScalarTypeRoundTrips) {
  Writer w;
  w.add_u8("t.u8", 255);
  w.add_i8("t.i8", -128);
  w.add_u16("t.u16", 65535);
  w.add_i16("t.i16", -32768);
  w.add_u32("t.u32", 0xFFFFFFFFu);
  w.add_i32("t.i32", std::numeric_limits<int32_t>::min());
  w.add_u64("t.u64", std::numeric_limits<uint64_t>::max());
  w.add_i64("t.i64", std::numeric_limits<int64_t>::min());
  w.add_f32("t.f32", 1e-5f);
  w.add_f64("t.f64", -1.0 / 3.0);
  w.add_bool("t.true", true);
  w.add_bool("t.false", false);
  w.add_string("t.str", "h\xC3\xA9llo \xE2\x96\x81world");
  w.add_string("t.empty_str", "");
  w.add_string("t.nul", std::string("a\0b", 3));
  auto f = round_trip(w);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->tensors().size(), 0u);
  ASSERT_EQ(f->metadata().size(), 15u);
  EXPECT_EQ(f->find("t.u8")->type, ValueType::UINT8);
  EXPECT_EQ(f->find("t.u8")->integer, 255);
  EXPECT_EQ(f->find("t.i8")->type, ValueType::INT8);
  EXPECT_EQ(f->find("t.i8")->integer, -128);
  EXPECT_EQ(f->find("t.u16")->integer, 65535);
  EXPECT_EQ(f->find("t.i16")->integer, -32768);
  EXPECT_EQ(f->find("t.u32")->integer, 0xFFFFFFFFll);
  EXPECT_EQ(f->find("t.i32")->integer, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(f->find("t.u64")->type, ValueType::UINT64);
  EXPECT_EQ(static_cast<uint64_t>(f->find("t.u64")->integer), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f->find("t.i64")->integer, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f->find("t.f32")->type, ValueType::FLOAT32);
  EXPECT_EQ(f->find("t.f32")->real, static_cast<double>(1e-5f));
  EXPECT_EQ(f->find("t.f64")->real, -1.0 / 3.0);
  EXPECT_EQ(f->get_bool("t.true").value(), true);
  EXPECT_EQ(f->get_bool("t.false").value(), false);
  EXPECT_EQ(f->get_string("t.str").value(), "h\xC3\xA9llo \xE2\x96\x81world");
  EXPECT_EQ(f->get_string("t.empty_str").value(), "");
  EXPECT_EQ(f->find("t.nul")->string, std::string("a\0b", 3));
  // Insertion order is file order.
  EXPECT_EQ(f->metadata()[0].key, "t.u8");
  EXPECT_EQ(f->metadata()[14].key, "t.nul");
}

TEST(GgufWriter, ArraysOfEveryElementTypeRoundTrip) {
  Writer w;
  w.add("a.u8", make_array(ValueType::UINT8, std::vector<int64_t>{0, 1, 255}));
  w.add("a.i8", make_array(ValueType::INT8, std::vector<int64_t>{-128, 0, 127}));
  w.add("a.u16", make_array(ValueType::UINT16, std::vector<int64_t>{0, 65535}));
  w.add("a.i16", make_array(ValueType::INT16, std::vector<int64_t>{-32768, 32767}));
  w.add("a.u32", make_array(ValueType::UINT32, std::vector<int64_t>{0, 0xFFFFFFFFll}));
  w.add("a.i32", make_array(ValueType::INT32, std::vector<int64_t>{-1, 2, -3}));
  w.add("a.u64", make_array(ValueType::UINT64, std::vector<int64_t>{-1, 5}));  // -1 = UINT64_MAX bit-for-bit
  w.add("a.i64", make_array(ValueType::INT64, std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 7}));
  w.add("a.bool", make_array(ValueType::BOOL, std::vector<int64_t>{1, 0, 1}));
  w.add("a.f32", make_array(ValueType::FLOAT32, std::vector<double>{0.5, -2.25, 1048576.0}));
  w.add("a.f64", make_array(ValueType::FLOAT64, std::vector<double>{0.1, -1e300}));
  w.add_string_array("a.str", {"<unk>", "", "\xE2\x96\x81the", std::string(1000, 'x')});
  w.add_f32_array("a.scores", {0.0f, -1.5f, 3.25f});
  w.add_i32_array("a.types", {2, 3, 1});
  w.add("a.empty_u32", make_array(ValueType::UINT32, std::vector<int64_t>{}));
  w.add("a.empty_f32", make_array(ValueType::FLOAT32, std::vector<double>{}));
  w.add_string_array("a.empty_str", {});
  auto f = round_trip(w);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->metadata().size(), 17u);
  Writer expected = w;
  for (const KeyValue& kv : f->metadata()) {
    const Value* want = expected.find(kv.key);
    ASSERT_TRUE(want) << kv.key;
    EXPECT_TRUE(same_value(kv.value, *want)) << kv.key << " = " << kv.value.to_display_string();
  }
  EXPECT_EQ(f->find("a.u64")->integers[0], -1);
  EXPECT_EQ(f->find("a.empty_u32")->array_size(), 0u);
  EXPECT_EQ(f->find("a.empty_u32")->array_type, ValueType::UINT32);
  EXPECT_EQ(f->find("a.empty_str")->array_type, ValueType::STRING);
  EXPECT_EQ(f->get_string_array("a.empty_str").value()->size(), 0u);
  EXPECT_EQ(f->get_float_array("a.scores").value(), (std::vector<float>{0.0f, -1.5f, 3.25f}));
  EXPECT_EQ(f->get_int_array("a.types").value(), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(f->get_string_array("a.str").value()->at(3).size(), 1000u);
}

TEST(GgufWriter, AddReplacesExistingKeyInPlace) {
  Writer w;
  w.add_u32("a", 1);
  w.add_string("b", "x");
  w.add_u32("c", 3);
  w.add_string("a", "replaced");
  EXPECT_EQ(w.metadata_count(), 3u);
  EXPECT_TRUE(w.remove("c"));
  EXPECT_FALSE(w.remove("c"));
  auto f = round_trip(w);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->metadata().size(), 2u);
  EXPECT_EQ(f->metadata()[0].key, "a");
  EXPECT_EQ(f->get_string("a").value(), "replaced");
  EXPECT_EQ(f->metadata()[1].key, "b");
}

// Adds one tensor per interesting type with random bytes; returns them for comparison.
std::map<std::string, std::vector<uint8_t>> add_typed_tensors(Writer& w) {
  struct Spec {
    const char* name;
    std::vector<int64_t> ne;
    GgmlType type;
  };
  const std::vector<Spec> specs = {
      {"f32.vec", {7}, GgmlType::F32},                // 28 bytes: padding needed
      {"f16.mat", {3, 5}, GgmlType::F16},             // 30 bytes
      {"bf16.mat", {8, 2, 3}, GgmlType::BF16},
      {"q4_0.mat", {64, 3}, GgmlType::Q4_0},          // 2 blocks/row * 18 bytes * 3 rows
      {"q8_0.mat", {32, 2, 2, 2}, GgmlType::Q8_0},
      {"q4_k.mat", {256, 2}, GgmlType::Q4_K},
      {"q6_k.mat", {512, 1}, GgmlType::Q6_K},         // trailing 1 kept as written
      {"iq4_nl.vec", {32}, GgmlType::IQ4_NL},
      {"tq2_0.vec", {256}, GgmlType::TQ2_0},
      {"i8.vec", {5}, GgmlType::I8},
      {"i32.vec", {3}, GgmlType::I32},
      {"f64.vec", {2}, GgmlType::F64},
  };
  std::map<std::string, std::vector<uint8_t>> out;
  uint32_t seed = 1;
  for (const Spec& s : specs) {
    int64_t rows = 1;
    for (size_t d = 1; d < s.ne.size(); ++d) rows *= s.ne[d];
    auto bytes = random_bytes(static_cast<size_t>(kernels::row_bytes(s.type, s.ne[0]) * rows), seed++);
    out[s.name] = bytes;
    w.add_tensor(s.name, s.ne, s.type, bytes);
  }
  return out;
}

TEST(GgufWriter, TensorsOfDifferentTypesRoundTripWithAlignment64) {
  Writer w;
  w.add_string("general.architecture", "test");
  w.set_alignment(64);
  EXPECT_EQ(w.alignment(), 64u);
  auto expected = add_typed_tensors(w);
  auto f = round_trip(w);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->get_int("general.alignment").value(), 64);
  EXPECT_EQ(f->find("general.alignment")->type, ValueType::UINT32);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  ASSERT_EQ(f->tensors().size(), expected.size());
  uint64_t end = 0;
  for (const TensorInfo& t : f->tensors()) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.offset % 64, 0u);
    const auto& want = expected.at(t.name);
    ASSERT_EQ(t.n_bytes, want.size());
    EXPECT_EQ(0, std::memcmp(t.data, want.data(), want.size()));
    end = f->data_offset() + t.offset + (t.n_bytes + 63) / 64 * 64;
  }
  EXPECT_EQ(f->file_size(), end);  // the last tensor is padded too, as gguf.cpp and gguf-py do
  const TensorInfo* q6 = f->find_tensor("q6_k.mat");
  EXPECT_EQ(q6->n_dims, 2);
  EXPECT_EQ(q6->ne[1], 1);
  const TensorInfo* q8 = f->find_tensor("q8_0.mat");
  EXPECT_EQ(q8->n_dims, 4);
  EXPECT_EQ(q8->shape_string(), "[32, 2, 2, 2]");
  EXPECT_EQ(f->find_tensor("q4_0.mat")->row_bytes, 36);
  EXPECT_EQ(f->tensors()[0].name, "f32.vec");  // insertion order
}

TEST(GgufWriter, DefaultAlignmentWritesNoKey) {
  Writer w;
  add_typed_tensors(w);
  EXPECT_EQ(w.alignment(), 32u);
  auto f = round_trip(w);
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->has("general.alignment"));
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->data_offset() % 32, 0u);
  for (const TensorInfo& t : f->tensors()) EXPECT_EQ(t.offset % 32, 0u);
}

TEST(GgufWriter, ExactLayoutOfASmallFile) {
  Writer w;
  w.add_u32("k", 7);
  w.add_tensor("t", {3}, GgmlType::F32, random_bytes(12, 9));
  auto bytes = w.write_to_memory();
  ASSERT_TRUE(bytes);
  // header 24 + kv (8+1+4+4) 17 + tensor info (8+1+4+8+4+8) 33 = 74 -> data at 96, 12 bytes + 20 padding.
  ASSERT_EQ(bytes->size(), 128u);
  const uint8_t head[] = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(0, std::memcmp(bytes->data(), head, sizeof head));
  for (size_t i = 74; i < 96; ++i) EXPECT_EQ((*bytes)[i], 0) << i;
  for (size_t i = 108; i < 128; ++i) EXPECT_EQ((*bytes)[i], 0) << i;
  auto f = File::parse(*bytes, "small");
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ((*f)->data_offset(), 96u);
}

TEST(GgufWriter, MetadataOnlyFileHasNoPadding) {
  // As llama.cpp's vocab-only files: without tensors there is no data section to align.
  Writer w;
  w.add_u32("k", 7);
  auto bytes = w.write_to_memory();
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->size(), 41u);
  auto f = File::parse(*bytes, "vocab-only");
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ((*f)->tensors().size(), 0u);
}

TEST(GgufWriter, StreamedSourceTensor) {
  const auto want = random_bytes(4 * 1000 * 3, 42);
  Writer w;
  w.add_tensor_source("streamed", {1000, 3}, GgmlType::F32, [&](ByteSink& out) -> Status {
    for (size_t i = 0; i < want.size(); i += 777) {
      INFERSCOPE_RETURN_IF_ERROR(out.write(want.data() + i, std::min<size_t>(777, want.size() - i)));
    }
    return Status::ok();
  });
  w.add_tensor("after", {8}, GgmlType::F32, random_bytes(32, 1));
  auto f = round_trip(w);
  ASSERT_TRUE(f);
  const TensorInfo* t = f->find_tensor("streamed");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->n_bytes, want.size());
  EXPECT_EQ(0, std::memcmp(t->data, want.data(), want.size()));
  EXPECT_EQ(f->find_tensor("after")->offset, 12000u);
}

TEST(GgufWriter, SourceProducingTheWrongByteCountFails) {
  Writer shortw;
  shortw.add_tensor_source("short", {16}, GgmlType::F32, [](ByteSink& out) {
    uint8_t b[10] = {};
    return out.write(b, sizeof b);
  });
  auto r = shortw.write_to_memory();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("'short'"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("64"), std::string::npos) << r.message();

  Writer longw;
  longw.add_tensor_source("long", {4}, GgmlType::F32, [](ByteSink& out) {
    uint8_t b[20] = {};
    (void)out.write(b, sizeof b);  // ignores the sink's refusal
    return Status::ok();
  });
  r = longw.write_to_memory();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("'long'"), std::string::npos) << r.message();

  Writer failing;
  failing.add_tensor_source("failing", {4}, GgmlType::F32,
                            [](ByteSink&) { return Status::error("quantizer ran out of memory"); });
  r = failing.write_to_memory();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("'failing'"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("quantizer ran out of memory"), std::string::npos) << r.message();
}

TEST(GgufWriter, WritesToDiskAtomically) {
  auto dir = inferscope::testing::scratch_dir("gguf-writer-disk");
  const std::string path = (dir / "model.gguf").string();
  Writer w;
  w.add_string("general.architecture", "llama");
  auto expected = add_typed_tensors(w);
  Status st = w.write(path);
  ASSERT_TRUE(st) << st.message();
  auto f = File::open(path);
  ASSERT_TRUE(f) << f.message();
  for (const TensorInfo& t : (*f)->tensors()) {
    EXPECT_EQ(0, std::memcmp(t.data, expected.at(t.name).data(), t.n_bytes)) << t.name;
  }
  auto mem = w.write_to_memory();
  ASSERT_TRUE(mem);
  EXPECT_EQ(read_file_bytes(path), *mem);

  // A failing write leaves neither a partial file nor a changed old file.
  Writer bad;
  bad.add_tensor_source("boom", {4}, GgmlType::F32, [](ByteSink&) { return Status::error("boom"); });
  st = bad.write(path);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_EQ(read_file_bytes(path), *mem);
  size_t n_files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n_files;
  EXPECT_EQ(n_files, 1u);

  st = w.write((dir / "no-such-dir" / "x.gguf").string());
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("no-such-dir"), std::string::npos) << st.message();
}

// Rewriting a real file through the writer (all metadata, tensors copied from the mapping)
// reproduces it byte for byte: same record encoding, padding and offsets as gguf-py.
class GgufWriterRewrite : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufWriterRewrite, IsByteIdentical) {
  const std::string path = testdata(GetParam());
  auto src = File::open(path);
  ASSERT_TRUE(src) << src.message();
  Writer w;
  EXPECT_EQ(w.copy_metadata(**src, ""), (*src)->metadata().size());
  for (const TensorInfo& t : (*src)->tensors()) w.add_tensor_copy(*src, t);
  auto bytes = w.write_to_memory();
  ASSERT_TRUE(bytes) << bytes.message();
  std::vector<uint8_t> original = read_file_bytes(path);
  ASSERT_EQ(bytes->size(), original.size());
  auto mismatch = std::mismatch(bytes->begin(), bytes->end(), original.begin());
  EXPECT_TRUE(mismatch.first == bytes->end()) << "first difference at byte " << (mismatch.first - bytes->begin());
}

INSTANTIATE_TEST_SUITE_P(RealFiles, GgufWriterRewrite,
                         ::testing::Values("stories260K.gguf", "llama-2-tiny-random.gguf",
                                           "derived/stories260K-qwen2moe.gguf", "quant/q4_k_m.gguf",
                                           "quant/tq1_0.gguf", "llama.cpp-vocab/ggml-vocab-llama-spm.gguf"));

TEST(GgufWriter, CopyTokenizerKeysBuildsANewModelAroundAVocabulary) {
  auto src = File::open(testdata("stories260K.gguf"));
  ASSERT_TRUE(src) << src.message();
  Writer w;
  w.add_string("general.architecture", "llama");
  EXPECT_EQ(w.copy_metadata(**src, "tokenizer."), 9u);
  w.add_tensor_copy(*src, *(*src)->find_tensor("token_embd.weight"), "renamed.weight");
  src->reset();  // the writer keeps the source alive
  auto f = round_trip(w);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->metadata().size(), 10u);
  EXPECT_EQ(f->get_string_array("tokenizer.ggml.tokens").value()->size(), 512u);
  EXPECT_EQ(f->find("tokenizer.ggml.seperator_token_id")->type, ValueType::UINT32);
  EXPECT_EQ(f->find("tokenizer.ggml.seperator_token_id")->integer, 4294967295);
  const TensorInfo* t = f->find_tensor("renamed.weight");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->shape_string(), "[64, 512]");
}

Status write_error(const Writer& w) {
  auto r = w.write_to_memory();
  return r ? Status::ok() : r.status();
}

void expect_writer_error(const Writer& w, std::initializer_list<const char*> parts) {
  Status st = write_error(w);
  ASSERT_FALSE(st) << "writer accepted invalid content";
  for (const char* p : parts) EXPECT_NE(st.message().find(p), std::string::npos) << st.message();
}

TEST(GgufWriter, RefusesWhatTheReaderWouldReject) {
  {
    Writer w;
    w.add_tensor(std::string(64, 'n'), {4}, GgmlType::F32, std::vector<uint8_t>(16));
    expect_writer_error(w, {"name", "64"});
  }
  {
    Writer w;
    w.add_tensor(std::string(63, 'n'), {4}, GgmlType::F32, std::vector<uint8_t>(16));
    EXPECT_TRUE(write_error(w)) << "63-byte names are legal";
  }
  {
    Writer w;
    w.add_tensor("dup", {4}, GgmlType::F32, std::vector<uint8_t>(16));
    w.add_tensor("dup", {4}, GgmlType::F32, std::vector<uint8_t>(16));
    expect_writer_error(w, {"'dup'", "duplicate"});
  }
  {
    Writer w;
    w.add_tensor("q", {48}, GgmlType::Q4_0, std::vector<uint8_t>(27));
    expect_writer_error(w, {"'q'", "block size"});
  }
  {
    Writer w;
    w.add_tensor("size", {4, 2}, GgmlType::F32, std::vector<uint8_t>(16));
    expect_writer_error(w, {"'size'", "32"});
  }
  {
    Writer w;
    w.add_tensor("dims", {1, 1, 1, 1, 1}, GgmlType::F32, std::vector<uint8_t>(4));
    expect_writer_error(w, {"'dims'", "n_dims"});
  }
  {
    Writer w;
    w.add_tensor("zero", {4, 0}, GgmlType::F32, {});
    expect_writer_error(w, {"'zero'", "ne[1]"});
  }
  {
    Writer w;
    w.add_tensor("retired", {4}, static_cast<GgmlType>(4), std::vector<uint8_t>(16));
    expect_writer_error(w, {"'retired'", "type"});
  }
  {
    Writer w;
    w.add_tensor("huge", {1ll << 40, 1ll << 40}, GgmlType::F32, {});
    expect_writer_error(w, {"'huge'", "overflow"});
  }
  {
    Writer w;
    w.set_alignment(48);
    expect_writer_error(w, {"general.alignment", "power of two"});
  }
  {
    Writer w;
    w.set_alignment(0);
    expect_writer_error(w, {"general.alignment"});
  }
  {
    Writer w;
    w.add_u64("general.alignment", 32);
    expect_writer_error(w, {"general.alignment", "UINT32"});
  }
  {
    Writer w;
    w.add_u32("", 1);
    expect_writer_error(w, {"empty"});
  }
  {
    Writer w;
    Value nested = make_array(ValueType::ARRAY, std::vector<int64_t>{});
    w.add("nested", nested);
    expect_writer_error(w, {"'nested'", "nested"});
  }
  {
    Writer w;
    w.add("range", make_array(ValueType::UINT8, std::vector<int64_t>{1, 256}));
    expect_writer_error(w, {"'range'", "256"});
  }
  {
    Writer w;
    Value v = make_u32(0);
    v.integer = -1;
    w.add("neg", v);
    expect_writer_error(w, {"'neg'", "UINT32"});
  }
  {
    Writer w;
    Value v = make_u8(0);
    v.type = static_cast<ValueType>(13);
    w.add("badtype", v);
    expect_writer_error(w, {"'badtype'", "13"});
  }
}

TEST(GgufWriter, AlignmentKeyAddedDirectlyIsHonoured) {
  Writer w;
  w.add_u32("general.alignment", 128);
  w.add_tensor("t", {3}, GgmlType::F32, random_bytes(12, 3));
  w.add_tensor("u", {3}, GgmlType::F32, random_bytes(12, 4));
  auto f = round_trip(w);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->alignment(), 128u);
  EXPECT_EQ(f->data_offset() % 128, 0u);
  EXPECT_EQ(f->find_tensor("u")->offset, 128u);
  EXPECT_EQ(f->file_size(), f->data_offset() + 256);
}

}  // namespace
}  // namespace inferscope::gguf

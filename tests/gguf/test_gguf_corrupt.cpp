// Hostile and corrupt GGUF input (GGUF-FORMATS.md 1.9 and 1.10): every case must fail with an
// error naming the file and the field, never crash, hang or allocate without bound.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "tests/gguf/gguf_bytes.h"
#include "tests/support/scratch_dir.h"

// Counts heap bytes requested while a parse runs, so "no huge allocation" is a checked property
// rather than a hope. Replacing the global operator new is confined to this test executable.
namespace {
std::atomic<bool> g_tracking{false};
std::atomic<uint64_t> g_allocated{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_tracking.load(std::memory_order_relaxed)) g_allocated.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// noinline: once inlined, GCC pairs operator new with free() and warns (-Wmismatched-new-delete).
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace inferscope::gguf {
namespace {

using testing::Bytes;
constexpr uint64_t kHuge63 = 1ull << 63;
constexpr uint64_t kHuge40 = 1ull << 40;
constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
const std::string kName = "corrupt-test.gguf";

// Parses with allocation accounting; fails the test when the parser allocated far more than the
// input could justify (bounded records, 8-byte widening of 1-byte array elements, index nodes).
Result<std::shared_ptr<const File>> parse_bounded(const std::vector<uint8_t>& bytes, const std::string& name = kName) {
  std::vector<uint8_t> copy = bytes;
  g_allocated = 0;
  g_tracking = true;
  auto r = File::parse(std::move(copy), name);
  g_tracking = false;
  const uint64_t limit = 64 * static_cast<uint64_t>(bytes.size()) + (1u << 20);
  EXPECT_LE(g_allocated.load(), limit) << "parser allocated " << g_allocated.load() << " bytes for a "
                                       << bytes.size() << "-byte input";
  return r;
}

// Each group lists acceptable spellings of one fact the message must contain.
using Alternatives = std::vector<std::string>;

void expect_rejected(const std::vector<uint8_t>& bytes, const std::vector<Alternatives>& groups) {
  auto r = parse_bounded(bytes);
  ASSERT_FALSE(r) << "corrupt file was accepted";
  const std::string& m = r.message();
  EXPECT_NE(m.find(kName), std::string::npos) << "error does not name the file: " << m;
  for (const Alternatives& g : groups) {
    bool found = false;
    for (const std::string& s : g) found = found || m.find(s) != std::string::npos;
    std::string wanted;
    for (const std::string& s : g) wanted += (wanted.empty() ? "'" : " or '") + s + "'";
    EXPECT_TRUE(found) << "error lacks " << wanted << ": " << m;
  }
}

void expect_accepted(const std::vector<uint8_t>& bytes) {
  auto r = parse_bounded(bytes);
  EXPECT_TRUE(r) << r.message();
}

// A header with one KV record (for cases about the header and the KV section).
Bytes with_kv(uint64_t n_tensors = 0, uint64_t n_kv = 1) {
  Bytes b;
  b.header(n_tensors, n_kv);
  return b;
}

// A small valid file: 3 KV records (string, u32, string array), 3 tensors (F32, Q8_0, F32) whose
// last one ends exactly at the end of the file (no trailing padding), so every shorter prefix
// is invalid.
Bytes valid_file() {
  Bytes b;
  b.header(3, 3);
  b.kv_string("general.architecture", "llama");
  b.kv_u32("llama.block_count", 5);
  b.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(2).str("a").str("bc");
  b.tensor("a", {8}, 0, 0);
  b.tensor("q", {32}, 8, 32);
  b.tensor("b", {8, 2}, 0, 96);
  b.pad_to(32);
  for (int i = 0; i < 32 + 64 + 64; ++i) b.u8(static_cast<uint8_t>(i * 7 + 1));
  return b;
}

// One F32 tensor info with the given fields and enough data behind it when it is small.
Bytes one_tensor(const std::string& name, const std::vector<int64_t>& ne, uint32_t type, uint64_t offset = 0,
                 size_t data_bytes = 64) {
  Bytes b;
  b.header(1, 0);
  b.tensor(name, ne, type, offset);
  b.pad_to(32);
  b.zeros(data_bytes);
  return b;
}

TEST(GgufCorrupt, BaselineFilesAreValid) {
  auto r = parse_bounded(valid_file().data);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ((*r)->tensors().size(), 3u);
  EXPECT_EQ((*r)->data_offset() + 96 + 64, (*r)->file_size());
  expect_accepted(one_tensor("t", {16}, 0).data);
  Bytes empty;
  empty.header(0, 0);
  expect_accepted(empty.data);  // 24 bytes: no metadata, no tensors
}

TEST(GgufCorrupt, BadMagic) {
  Bytes b = valid_file();
  b.data[3] = 'X';
  expect_rejected(b.data, {{"magic"}});
  Bytes lower = valid_file();
  lower.data[0] = 'g';
  expect_rejected(lower.data, {{"magic"}});
}

TEST(GgufCorrupt, UnsupportedVersions) {
  for (uint32_t version : {0u, 1u, 4u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(version);
    Bytes b = valid_file();
    b.put_u32(4, version);
    expect_rejected(b.data, {{"version"}, {std::to_string(version)}});
  }
  Bytes v2 = valid_file();
  v2.put_u32(4, 2);
  expect_accepted(v2.data);  // v2 reads exactly like v3
}

TEST(GgufCorrupt, BigEndianFile) {
  // Version 3 written big-endian reads as 0x03000000 little-endian; the counts are swapped too.
  Bytes b;
  b.raw("GGUF", 4);
  const uint8_t version_be[4] = {0, 0, 0, 3};
  b.raw(version_be, 4);
  const uint8_t one_be[8] = {0, 0, 0, 0, 0, 0, 0, 1};
  b.raw(one_be, 8).raw(one_be, 8);
  b.zeros(64);
  expect_rejected(b.data, {{"version"}, {"big-endian", "big endian"}});
}

TEST(GgufCorrupt, TruncationAtEveryByteOffset) {
  const std::vector<uint8_t> full = valid_file().data;
  for (size_t n = 0; n < full.size(); ++n) {
    SCOPED_TRACE("truncated to " + std::to_string(n) + " of " + std::to_string(full.size()) + " bytes");
    std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    expect_rejected(prefix, {{"truncated", "exceeds", "cannot fit", "past the end", "end of file"}});
    if (::testing::Test::HasFailure()) break;  // one report is enough
  }
}

TEST(GgufCorrupt, TruncatedFilesOnDisk) {
  // The mmap path (File::open) with a few cut points, including an empty file.
  const std::vector<uint8_t> full = valid_file().data;
  auto dir = inferscope::testing::scratch_dir("gguf-truncated");
  for (size_t n : {size_t{0}, size_t{3}, size_t{23}, size_t{40}, full.size() - 70, full.size() - 1}) {
    std::string path = (dir / ("cut-" + std::to_string(n) + ".gguf")).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(full.data()), static_cast<std::streamsize>(n));
    auto r = File::open(path);
    ASSERT_FALSE(r) << path;
    EXPECT_NE(r.message().find(path), std::string::npos) << r.message();
  }
}

TEST(GgufCorrupt, HugeMetadataCount) {
  for (uint64_t n : {kHuge63, kHuge40, kMax64, uint64_t{1} << 32}) {
    SCOPED_TRACE(n);
    Bytes b = valid_file();
    b.put_u64(16, n);
    expect_rejected(b.data, {{"n_kv", "metadata count", "key/value count"}});
  }
}

TEST(GgufCorrupt, HugeTensorCount) {
  for (uint64_t n : {kHuge63, kHuge40, kMax64, uint64_t{1} << 32}) {
    SCOPED_TRACE(n);
    Bytes b = valid_file();
    b.put_u64(8, n);
    expect_rejected(b.data, {{"n_tensors", "tensor count"}});
  }
}

TEST(GgufCorrupt, HugeStringLengths) {
  for (uint64_t n : {kHuge63, kHuge40, kMax64}) {
    SCOPED_TRACE(n);
    Bytes key = with_kv();
    key.u64(n).raw("general.name", 12).u32(8).str("x");
    expect_rejected(key.data, {{"key"}, {"length"}});

    Bytes value = with_kv();
    value.str("general.name").u32(8).u64(n).raw("abc", 3);
    expect_rejected(value.data, {{"general.name"}, {"length"}});

    Bytes element = with_kv();
    element.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(2).str("a").u64(n).raw("b", 1);
    expect_rejected(element.data, {{"tokenizer.ggml.tokens"}, {"length"}});

    Bytes tensor_name;
    tensor_name.header(1, 0).u64(n).raw("t", 1).u32(1).i64(4).u32(0).u64(0).zeros(64);
    expect_rejected(tensor_name.data, {{"tensor"}, {"name"}, {"length"}});
  }
}

TEST(GgufCorrupt, HugeArrayCounts) {
  for (uint32_t element : {0u, 4u, 8u, 10u, 12u}) {  // u8, u32, string, u64, f64
    for (uint64_t n : {kHuge63, kHuge40, kMax64, uint64_t{1} << 61}) {
      SCOPED_TRACE("element type " + std::to_string(element) + ", count " + std::to_string(n));
      Bytes b = with_kv();
      b.str("tokenizer.ggml.scores").u32(9).u32(element).u64(n).zeros(64);
      expect_rejected(b.data, {{"tokenizer.ggml.scores"}, {"array", "count"}});
    }
  }
}

TEST(GgufCorrupt, NestedArray) {
  Bytes b = with_kv();
  b.str("nested").u32(9).u32(9).u64(1).u32(4).u64(1).u32(7);
  expect_rejected(b.data, {{"nested"}, {"nested array", "ARRAY"}});
  Bytes empty_nested = with_kv();
  empty_nested.str("nested").u32(9).u32(9).u64(0);
  expect_rejected(empty_nested.data, {{"'nested'"}});
}

TEST(GgufCorrupt, UnknownValueTypes) {
  for (uint32_t t : {13u, 100u, 0x80000000u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(t);
    Bytes scalar = with_kv();
    scalar.str("odd.key").u32(t).u32(0).zeros(16);
    expect_rejected(scalar.data, {{"odd.key"}, {"type"}, {std::to_string(t), std::to_string(static_cast<int32_t>(t))}});
    Bytes element = with_kv();
    element.str("odd.array").u32(9).u32(t).u64(1).zeros(16);
    expect_rejected(element.data, {{"odd.array"}, {"type"}});
  }
}

TEST(GgufCorrupt, DuplicateKey) {
  Bytes b = with_kv(0, 2);
  b.kv_u32("llama.block_count", 5).kv_string("llama.block_count", "again");
  expect_rejected(b.data, {{"llama.block_count"}, {"duplicate"}});
}

TEST(GgufCorrupt, EmptyKey) {
  Bytes b = with_kv();
  b.kv_u32("", 5);
  expect_rejected(b.data, {{"empty"}, {"key"}});
}

TEST(GgufCorrupt, AlignmentWrongType) {
  Bytes u64 = with_kv();
  u64.str("general.alignment").u32(10).u64(32);
  expect_rejected(u64.data, {{"general.alignment"}, {"UINT32"}});
  Bytes i32 = with_kv();
  i32.str("general.alignment").u32(5).i32(32);
  expect_rejected(i32.data, {{"general.alignment"}, {"UINT32"}});
  Bytes str = with_kv();
  str.kv_string("general.alignment", "32");
  expect_rejected(str.data, {{"general.alignment"}, {"UINT32"}});
  Bytes arr = with_kv();
  arr.str("general.alignment").u32(9).u32(4).u64(1).u32(32);
  expect_rejected(arr.data, {{"general.alignment"}, {"UINT32"}});
}

TEST(GgufCorrupt, AlignmentZeroOrNotPowerOfTwo) {
  for (uint32_t a : {0u, 3u, 48u, 0x80000001u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(a);
    Bytes b = with_kv(1, 1);
    b.kv_u32("general.alignment", a);
    b.tensor("t", {4}, 0, 0).zeros(64);
    expect_rejected(b.data, {{"general.alignment"}, {"power of two"}});
  }
  for (uint32_t a : {1u, 8u, 64u, 0x80000000u}) {  // legal; 2^31 pads up to data_start past the file
    SCOPED_TRACE(a);
    Bytes b = with_kv(0, 1);
    b.kv_u32("general.alignment", a);
    auto r = parse_bounded(b.data);
    ASSERT_TRUE(r) << r.message();
    EXPECT_EQ((*r)->alignment(), a);
  }
}

TEST(GgufCorrupt, HugeAlignmentWithTensorFailsCleanly) {
  // data_start rounds up to 2^31 while the file is tiny: the tensor lies past the end.
  Bytes b = with_kv(1, 1);
  b.kv_u32("general.alignment", 0x80000000u);
  b.tensor("t", {4}, 0, 0).zeros(64);
  expect_rejected(b.data, {{"'t'"}, {"past the end", "truncated", "end of the file"}});
}

TEST(GgufCorrupt, TensorNameLength) {
  expect_rejected(one_tensor(std::string(64, 'n'), {16}, 0).data, {{"name"}, {"64"}});
  expect_rejected(one_tensor(std::string(1000, 'n'), {16}, 0).data, {{"name"}, {"1000"}});
  expect_accepted(one_tensor(std::string(63, 'n'), {16}, 0).data);
}

TEST(GgufCorrupt, DuplicateTensorName) {
  Bytes b;
  b.header(2, 0);
  b.tensor("blk.0.attn_q.weight", {8}, 0, 0).tensor("blk.0.attn_q.weight", {8}, 0, 32);
  b.pad_to(32).zeros(64);
  expect_rejected(b.data, {{"blk.0.attn_q.weight"}, {"duplicate"}});
}

TEST(GgufCorrupt, TooManyDimensions) {
  for (uint32_t n_dims : {5u, 64u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(n_dims);
    Bytes b;
    b.header(1, 0).str("t").u32(n_dims);
    for (int i = 0; i < 5; ++i) b.i64(1);
    b.u32(0).u64(0).pad_to(32).zeros(64);
    expect_rejected(b.data, {{"'t'"}, {"n_dims"}, {std::to_string(n_dims)}});
  }
}

TEST(GgufCorrupt, ZeroOrNegativeDimension) {
  const std::vector<std::vector<int64_t>> shapes = {{0}, {4, 0}, {4, 2, 0}, {4, 1, 1, 0}, {-4}, {4, -1},
                                                    {std::numeric_limits<int64_t>::min(), 1}};
  for (const auto& ne : shapes) {
    SCOPED_TRACE(::testing::PrintToString(ne));
    expect_rejected(one_tensor("t", ne, 0).data, {{"'t'"}, {"dimension", "ne["}});
  }
}

TEST(GgufCorrupt, ElementCountOverflow) {
  const std::vector<std::vector<int64_t>> shapes = {{1ll << 32, 1ll << 32},
                                                    {1ll << 62, 4},
                                                    {std::numeric_limits<int64_t>::max(), 2},
                                                    {1ll << 16, 1ll << 16, 1ll << 16, 1ll << 16},
                                                    {2, 1ll << 62, 1, 2}};
  for (const auto& ne : shapes) {
    SCOPED_TRACE(::testing::PrintToString(ne));
    expect_rejected(one_tensor("t", ne, 0).data, {{"'t'"}, {"overflow"}});
  }
  // Element counts that fit int64 while the row's byte size does not fit 64 bits (or int64).
  expect_rejected(one_tensor("t", {1ll << 61}, 28).data, {{"'t'"}, {"overflow"}});      // F64: 2^64 bytes
  expect_rejected(one_tensor("t", {1ll << 62}, 0).data, {{"'t'"}, {"overflow"}});       // F32: 2^64 bytes
  expect_rejected(one_tensor("t", {1ll << 62, 1}, 1).data, {{"'t'"}, {"overflow", "past the end"}});  // F16: 2^63
  expect_rejected(one_tensor("t", {1ll << 60}, 27).data, {{"'t'"}, {"overflow", "past the end"}});  // I64: 2^63
}

TEST(GgufCorrupt, HugeButRepresentableTensorIsPastTheEnd) {
  expect_rejected(one_tensor("big", {1ll << 30, 1ll << 30}, 0).data,
                  {{"'big'"}, {"past the end", "truncated", "end of the file"}});
}

TEST(GgufCorrupt, UnknownOrRetiredTensorType) {
  for (uint32_t type : {4u, 5u, 31u, 32u, 33u, 36u, 38u, 43u, 1000u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(type);
    expect_rejected(one_tensor("t", {256}, type, 0, 1024).data, {{"'t'"}, {"type"}, {std::to_string(type)}});
  }
}

TEST(GgufCorrupt, RowLengthNotAMultipleOfTheBlockSize) {
  expect_rejected(one_tensor("t", {48}, 2).data, {{"'t'"}, {"block size"}, {"48"}});   // Q4_0, block 32
  expect_rejected(one_tensor("t", {128}, 12).data, {{"'t'"}, {"block size"}, {"128"}});  // Q4_K, block 256
  expect_rejected(one_tensor("t", {31, 2}, 8).data, {{"'t'"}, {"block size"}});       // Q8_0
}

TEST(GgufCorrupt, OffsetsNotThePackedSequence) {
  auto file_with_offsets = [](uint64_t first, uint64_t second) {
    Bytes b;
    b.header(2, 0);
    b.tensor("first", {3}, 0, first).tensor("second", {8}, 0, second);
    b.pad_to(32).zeros(256);
    return b.data;
  };
  expect_accepted(file_with_offsets(0, 32));
  expect_rejected(file_with_offsets(32, 64), {{"'first'"}, {"offset"}});
  expect_rejected(file_with_offsets(0, 64), {{"'second'"}, {"offset"}, {"32"}});   // aligned but not packed
  expect_rejected(file_with_offsets(0, 12), {{"'second'"}, {"offset"}});           // unaligned
  expect_rejected(file_with_offsets(0, 0), {{"'second'"}, {"offset"}});            // overlapping
  expect_rejected(file_with_offsets(kMax64 - 31, 0), {{"'first'"}, {"offset"}});
}

TEST(GgufCorrupt, DataPastEndOfFile) {
  Bytes b = valid_file();
  b.data.resize(b.size() - 1);
  expect_rejected(b.data, {{"'b'"}, {"past the end", "truncated", "end of the file"}});
  Bytes no_data = one_tensor("t", {16}, 0, 0, 0);
  expect_rejected(no_data.data, {{"'t'"}, {"past the end", "truncated", "end of the file"}});
}

TEST(GgufCorrupt, DataStartPlusOffsetOverflow) {
  for (uint64_t offset : {kMax64 - 31, kMax64 - 63, kHuge63, kMax64}) {
    SCOPED_TRACE(offset);
    expect_rejected(one_tensor("t", {4}, 0, offset).data, {{"'t'"}, {"offset", "past the end"}});
  }
}

TEST(GgufCorrupt, LenientValuesAcceptedAsLlamaCppDoes) {
  Bytes b = with_kv(0, 1);
  b.str("flag").u32(7).u8(2);  // bool byte 2: llama.cpp treats any non-zero byte as true
  auto r = parse_bounded(b.data);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ((*r)->get_bool("flag").value(), true);
  Bytes zero_dims;
  zero_dims.header(1, 0).str("scalar").u32(0).u32(0).u64(0).pad_to(32).zeros(32);
  auto s = parse_bounded(zero_dims.data);  // n_dims 0 is accepted by gguf.cpp: shape (1,1,1,1)
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ((*s)->tensors()[0].n_elements, 1u);
}

// Random byte flips in a valid file (fixed seed): open must succeed or fail with a message that
// names the file; never crash, hang or allocate without bound.
TEST(GgufCorrupt, RandomByteFlips) {
  Writer w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 2);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_bool("flag", true);
  w.add_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "bb", "ccc"});
  w.add_f32_array("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -3});
  w.add_i32_array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1});
  w.add("empty", make_array(ValueType::UINT8, std::vector<int64_t>{}));
  w.add_tensor("token_embd.weight", {32, 6}, kernels::GgmlType::Q8_0, std::vector<uint8_t>(34 * 6, 1));
  w.add_tensor("output_norm.weight", {32}, kernels::GgmlType::F32, std::vector<uint8_t>(128, 2));
  w.add_tensor("blk.0.attn_q.weight", {256, 1}, kernels::GgmlType::Q4_K, std::vector<uint8_t>(144, 3));
  auto base = w.write_to_memory();
  ASSERT_TRUE(base) << base.message();
  ASSERT_TRUE(parse_bounded(*base));
  auto parsed = File::parse(*base, kName);
  const size_t header_bytes = static_cast<size_t>((*parsed)->data_offset());

  std::mt19937_64 rng(20240611);
  int accepted = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<uint8_t> bytes = *base;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      // Most flips land in the header, KV and tensor-info bytes, where parsing decisions are made.
      size_t at = rng() % 8 != 0 ? rng() % header_bytes : rng() % bytes.size();
      switch (rng() % 4) {
        case 0: bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: bytes[at] = static_cast<uint8_t>(rng()); break;
        case 2: bytes[at] = 0xFF; break;
        default: bytes[at] = 0x00; break;
      }
    }
    if (rng() % 16 == 0) bytes.resize(rng() % bytes.size());
    auto r = parse_bounded(bytes);
    if (r) {
      ++accepted;
      for (const TensorInfo& t : (*r)->tensors()) {
        ASSERT_LE((*r)->data_offset() + t.offset + t.n_bytes, (*r)->file_size()) << "iteration " << iter;
      }
    } else {
      ASSERT_NE(r.message().find(kName), std::string::npos) << "iteration " << iter << ": " << r.message();
    }
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "iteration " << iter;
      break;
    }
  }
  // Flips inside tensor data or string bytes leave the file valid: both outcomes must occur.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 2000);
}

}  // namespace
}  // namespace inferscope::gguf

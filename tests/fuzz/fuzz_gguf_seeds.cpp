// Writes a small seed corpus for fuzz_gguf: valid GGUF files of a few KB that exercise every
// value type, arrays, alignments and tensor types. The shared model files are too large to be
// good seeds (libFuzzer mutates small inputs far faster), so a model's metadata is reused with
// tiny tensors instead.
//   usage: fuzz_gguf_seeds <out-dir> [model.gguf ...]
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"

namespace {

using namespace inferscope;
using gguf::ValueType;
using gguf::Writer;
using kernels::GgmlType;

std::vector<uint8_t> filler(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31);
  return v;
}

void add(Writer& w, const char* name, std::vector<int64_t> ne, GgmlType type) {
  int64_t rows = 1;
  for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
  size_t n = static_cast<size_t>(kernels::row_bytes(type, ne[0]) * rows);
  w.add_tensor(name, std::move(ne), type, filler(n, static_cast<uint8_t>(n)));
}

bool save(const Writer& w, const std::filesystem::path& path) {
  Status st = w.write(path.string());
  if (!st) std::fprintf(stderr, "%s\n", st.message().c_str());
  return st.is_ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <out-dir> [model.gguf ...]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  bool ok = true;

  {  // header only
    Writer w;
    ok &= save(w, out / "empty.gguf");
  }
  {  // every value type, empty arrays, alignment 64
    Writer w;
    w.add_string("general.architecture", "llama");
    w.set_alignment(64);
    w.add_u8("t.u8", 200);
    w.add_i8("t.i8", -5);
    w.add_u16("t.u16", 60000);
    w.add_i16("t.i16", -3000);
    w.add_u32("t.u32", 4000000000u);
    w.add_i32("t.i32", -2000000000);
    w.add_u64("t.u64", 1ull << 40);
    w.add_i64("t.i64", -(1ll << 40));
    w.add_f32("t.f32", 1e-5f);
    w.add_f64("t.f64", 0.125);
    w.add_bool("t.bool", true);
    w.add_string("t.str", "\xE2\x96\x81hello");
    w.add_string_array("t.strs", {"<unk>", "<s>", "</s>", "a"});
    w.add_f32_array("t.f32s", {0.0f, -1.0f, 2.5f});
    w.add_i32_array("t.i32s", {1, 2, 3});
    w.add("t.u8s", gguf::make_array(ValueType::UINT8, std::vector<int64_t>{1, 2, 3}));
    w.add("t.bools", gguf::make_array(ValueType::BOOL, std::vector<int64_t>{1, 0}));
    w.add("t.u64s", gguf::make_array(ValueType::UINT64, std::vector<int64_t>{7}));
    w.add("t.f64s", gguf::make_array(ValueType::FLOAT64, std::vector<double>{0.5}));
    w.add("t.empty", gguf::make_array(ValueType::INT16, std::vector<int64_t>{}));
    w.add_string_array("t.empty_strs", {});
    add(w, "token_embd.weight", {8, 4}, GgmlType::F32);
    add(w, "output_norm.weight", {8}, GgmlType::F32);
    ok &= save(w, out / "all-value-types.gguf");
  }
  {  // one tensor per block geometry
    Writer w;
    w.add_string("general.architecture", "llama");
    add(w, "f32", {4, 2}, GgmlType::F32);
    add(w, "f16", {6}, GgmlType::F16);
    add(w, "bf16", {2, 2, 2}, GgmlType::BF16);
    add(w, "q4_0", {32, 2}, GgmlType::Q4_0);
    add(w, "q8_0", {64}, GgmlType::Q8_0);
    add(w, "q4_k", {256}, GgmlType::Q4_K);
    add(w, "q6_k", {256, 1, 1, 1}, GgmlType::Q6_K);
    add(w, "iq4_nl", {32}, GgmlType::IQ4_NL);
    add(w, "tq1_0", {256}, GgmlType::TQ1_0);
    add(w, "i32", {3}, GgmlType::I32);
    ok &= save(w, out / "tensor-types.gguf");
  }
  {  // alignment 1 and 8
    for (uint32_t a : {1u, 8u}) {
      Writer w;
      w.set_alignment(a);
      add(w, "a", {3}, GgmlType::F16);
      add(w, "b", {5}, GgmlType::F32);
      ok &= save(w, out / ("alignment-" + std::to_string(a) + ".gguf"));
    }
  }
  // Real metadata (tokenizer, hyperparameters) around tiny tensors of the same names and types.
  for (int i = 2; i < argc; ++i) {
    auto f = gguf::File::open(argv[i]);
    if (!f) {
      std::fprintf(stderr, "%s\n", f.message().c_str());
      ok = false;
      continue;
    }
    Writer w;
    w.copy_metadata(**f, "");
    size_t n = 0;
    for (const gguf::TensorInfo& t : (*f)->tensors()) {
      if (n++ == 6) break;
      add(w, t.name.c_str(), {kernels::type_info(t.type).block_size}, t.type);
    }
    ok &= save(w, out / ("meta-" + std::filesystem::path(argv[i]).filename().string()));
  }
  return ok ? 0 : 1;
}

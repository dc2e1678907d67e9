// libFuzzer target for the GGUF parser. Every input must either be rejected cleanly or give a
// File whose tensors lie inside the input; an accepted file must also survive a rewrite through
// the Writer and parse back to the same metadata, shapes and tensor bytes.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using inferscope::gguf::File;
using inferscope::gguf::KeyValue;
using inferscope::gguf::TensorInfo;
using inferscope::gguf::Value;
using inferscope::gguf::ValueType;

[[noreturn]] void fail(const char* what, const std::string& detail) { inferscope::fuzz::fail("fuzz_gguf", what, detail); }

bool same_real(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool same_value(const Value& a, const Value& b) {
  if (a.type != b.type) return false;
  if (a.type == ValueType::ARRAY) {
    if (a.array_type != b.array_type || a.integers != b.integers || a.strings != b.strings) return false;
    if (a.reals.size() != b.reals.size()) return false;
    for (size_t i = 0; i < a.reals.size(); ++i) {
      if (!same_real(a.reals[i], b.reals[i])) return false;
    }
    return true;
  }
  if (a.type == ValueType::STRING) return a.string == b.string;
  if (inferscope::gguf::is_float(a.type)) return same_real(a.real, b.real);
  return a.integer == b.integer;
}

void check_invariants(const File& f) {
  if (f.data_offset() % f.alignment() != 0) fail("data section not aligned", f.path());
  for (const TensorInfo& t : f.tensors()) {
    if (t.name.size() >= 64) fail("tensor name too long accepted", t.name);
    uint64_t end = f.data_offset() + t.offset + t.n_bytes;
    if (end > f.file_size() || end < t.offset) fail("tensor data outside the file", t.name);
    uint64_t n = 1;
    for (int64_t d : t.ne) {
      if (d <= 0) fail("non-positive dimension accepted", t.name);
      n *= static_cast<uint64_t>(d);
    }
    if (n != t.n_elements) fail("n_elements mismatch", t.name);
    auto info = inferscope::kernels::type_info(static_cast<uint32_t>(t.type));
    if (!info) fail("unknown type accepted", t.name);
    // The byte size must be exactly what the shape needs (no silently wrapped arithmetic).
    if (t.row_bytes <= 0 ||
        static_cast<uint64_t>(t.row_bytes) / static_cast<uint64_t>(info->type_size) !=
            static_cast<uint64_t>(t.ne[0] / info->block_size) ||
        t.n_bytes / static_cast<uint64_t>(t.row_bytes) != n / static_cast<uint64_t>(t.ne[0])) {
      fail("byte size inconsistent with the shape", t.name + " " + t.shape_string());
    }
    if (t.n_bytes > 0) {
      // Touch the first and last byte so ASan sees any pointer outside the buffer.
      volatile uint8_t first = t.data[0];
      volatile uint8_t last = t.data[t.n_bytes - 1];
      (void)first;
      (void)last;
    }
  }
}

void check_rewrite(const std::shared_ptr<const File>& f) {
  for (const TensorInfo& t : f->tensors()) {
    if (t.name.empty()) return;  // the Writer refuses empty tensor names (the reader accepts them)
  }
  inferscope::gguf::Writer w;
  w.copy_metadata(*f, "");
  for (const TensorInfo& t : f->tensors()) w.add_tensor_copy(f, t);
  auto bytes = w.write_to_memory();
  if (!bytes) fail("writer rejected a file the reader accepted", bytes.message());
  auto g = File::parse(std::move(bytes.value()), "rewrite");
  if (!g) fail("reader rejected the writer's output", g.message());
  const File& r = **g;
  if (r.metadata().size() != f->metadata().size()) fail("metadata count changed", "");
  for (size_t i = 0; i < r.metadata().size(); ++i) {
    const KeyValue& a = f->metadata()[i];
    const KeyValue& b = r.metadata()[i];
    if (a.key != b.key || !same_value(a.value, b.value)) fail("metadata changed", a.key);
  }
  if (r.alignment() != f->alignment()) fail("alignment changed", "");
  if (r.tensors().size() != f->tensors().size()) fail("tensor count changed", "");
  for (size_t i = 0; i < r.tensors().size(); ++i) {
    const TensorInfo& a = f->tensors()[i];
    const TensorInfo& b = r.tensors()[i];
    if (a.name != b.name || a.ne != b.ne || a.type != b.type || a.offset != b.offset || a.n_bytes != b.n_bytes) {
      fail("tensor info changed", a.name);
    }
    if (a.n_bytes > 0 && std::memcmp(a.data, b.data, a.n_bytes) != 0) fail("tensor bytes changed", a.name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  auto f = File::parse(std::move(bytes), "fuzz-input");
  if (!f) {
    if (f.message().rfind("fuzz-input: ", 0) != 0) fail("error does not start with the file name", f.message());
    return 0;
  }
  check_invariants(**f);
  check_rewrite(*f);
  return 0;
}

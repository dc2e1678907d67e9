#include "engine/weightlab/imatrix_file.h"

#include <cstring>
#include <fstream>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"

namespace inferscope {

namespace {

constexpr const char* kInSum2 = ".in_sum2";
constexpr const char* kCounts = ".counts";

std::vector<uint8_t> float_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

std::vector<float> floats_of(const gguf::TensorInfo& t) {
  std::vector<float> v(t.n_elements);
  std::memcpy(v.data(), t.data, t.n_elements * sizeof(float));
  return v;
}

Result<ImportanceMatrix> read_gguf(const std::string& path) {
  auto file = gguf::File::open(path);
  if (!file) return file.status();
  const gguf::File& f = **file;
  auto type = f.get_string_or("general.type", "");
  if (!type || *type != "imatrix") return Status::error(path + ": not an importance matrix (general.type is not \"imatrix\")");
  ImportanceMatrix im;
  if (auto v = f.get_int_or("imatrix.chunk_count", 0)) im.chunk_count = *v;
  if (auto v = f.get_int_or("imatrix.chunk_size", 0)) im.chunk_size = *v;
  if (f.has("imatrix.datasets")) {
    auto d = f.get_string_array("imatrix.datasets");
    if (!d) return d.status();
    im.datasets = **d;
  }
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (!t.name.ends_with(kInSum2)) continue;
    const std::string name = t.name.substr(0, t.name.size() - std::strlen(kInSum2));
    const gguf::TensorInfo* counts = f.find_tensor(name + kCounts);
    if (counts == nullptr) return Status::error(path + ": " + t.name + " has no " + name + kCounts);
    if (t.type != kernels::GgmlType::F32 || counts->type != kernels::GgmlType::F32) {
      return Status::error(path + ": " + name + ": the sums and counts must be F32");
    }
    if (t.n_dims > 2 || counts->n_elements != static_cast<uint64_t>(t.ne[1]) || t.ne[0] < 1) {
      return Status::error(path + ": " + name + ": " + t.shape_string() + " sums do not match " +
                           counts->shape_string() + " counts");
    }
    im.entries[name] = ImatrixEntry{floats_of(t), floats_of(*counts)};
  }
  if (im.entries.empty()) return Status::error(path + ": the importance matrix has no entries");
  return im;
}

// Reads n values of T, or fails with the file's name.
class DatReader {
 public:
  explicit DatReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {}
  bool open() const { return static_cast<bool>(in_); }
  template <typename T>
  Status read(T* out, size_t n = 1) {
    if (!in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n * sizeof(T)))) {
      return Status::error(path_ + ": the importance matrix ends early");
    }
    return Status::ok();
  }
  Result<int32_t> count(const char* what, int32_t limit) {
    int32_t v = 0;
    INFERSCOPE_RETURN_IF_ERROR(read(&v));
    if (v < 0 || v > limit) return Status::error(path_ + ": " + what + " " + std::to_string(v) + " is out of range");
    return v;
  }

 private:
  std::string path_;
  std::ifstream in_;
};

Result<ImportanceMatrix> read_dat(const std::string& path) {
  DatReader r(path);
  if (!r.open()) return Status::error("cannot read " + path);
  constexpr int32_t kMaxEntries = 1 << 20, kMaxName = 4096, kMaxValues = 1 << 28;
  auto n_entries = r.count("entry count", kMaxEntries);
  if (!n_entries) return n_entries.status();
  ImportanceMatrix im;
  for (int32_t i = 0; i < *n_entries; ++i) {
    auto len = r.count("name length", kMaxName);
    if (!len) return len.status();
    std::string name(static_cast<size_t>(*len), '\0');
    INFERSCOPE_RETURN_IF_ERROR(r.read(name.data(), name.size()));
    auto ncall = r.count("call count", kMaxValues);
    if (!ncall) return ncall.status();
    auto nval = r.count("value count", kMaxValues);
    if (!nval) return nval.status();
    ImatrixEntry e;
    e.in_sum2.resize(static_cast<size_t>(*nval));
    INFERSCOPE_RETURN_IF_ERROR(r.read(e.in_sum2.data(), e.in_sum2.size()));
    e.counts.assign(1, static_cast<float>(*ncall));
    im.entries[name] = std::move(e);
  }
  // The chunk count and the dataset's name (absent in the oldest files).
  int32_t chunks = 0;
  if (r.read(&chunks)) {
    im.chunk_count = chunks;
    auto len = r.count("dataset name length", kMaxName);
    if (len) {
      std::string dataset(static_cast<size_t>(*len), '\0');
      if (r.read(dataset.data(), dataset.size())) im.datasets.push_back(dataset);
    }
  }
  if (im.entries.empty()) return Status::error(path + ": the importance matrix has no entries");
  return im;
}

}  // namespace

Status write_imatrix(const ImportanceMatrix& im, const std::string& path) {
  gguf::Writer w;
  w.add_string("general.type", "imatrix");
  w.add_string_array("imatrix.datasets", im.datasets);
  w.add_u32("imatrix.chunk_count", static_cast<uint32_t>(im.chunk_count));
  w.add_u32("imatrix.chunk_size", static_cast<uint32_t>(im.chunk_size));
  for (const auto& [name, e] : im.entries) {  // a std::map: sorted by name, as the reference writes them
    w.add_tensor(name + kInSum2, {e.values_per_mat(), e.n_mat()}, kernels::GgmlType::F32, float_bytes(e.in_sum2));
    w.add_tensor(name + kCounts, {1, e.n_mat()}, kernels::GgmlType::F32, float_bytes(e.counts));
  }
  return w.write(path);
}

Result<ImportanceMatrix> read_imatrix(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("cannot read " + path);
  char magic[4] = {};
  in.read(magic, 4);
  if (in && std::memcmp(magic, "GGUF", 4) == 0) return read_gguf(path);
  return read_dat(path);
}

}  // namespace inferscope

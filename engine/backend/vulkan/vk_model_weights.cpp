#include "engine/backend/vulkan/vk_model_weights.h"

#include <algorithm>

namespace inferscope::vulkan {

namespace {

constexpr uint64_t kArenaBytes = 256ull << 20;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Places tensors into arena buffers, in order; with dry_run it only counts the bytes.
class WeightPacker {
 public:
  WeightPacker(Device& device, bool dry_run) : device_(device), dry_run_(dry_run) {
    align_ = std::max<uint64_t>(256, device.info().min_storage_buffer_offset_alignment);
    max_part_ = std::min(device.max_storage_buffer_range(), device.max_allocation_size()) / align_ * align_;
  }

  Status matrix(const WeightMatrix& w, DeviceMatrix& out) {
    if (!w.present()) return Status::ok();
    out.type = w.type;
    out.cols = w.cols;
    out.rows = w.rows;
    out.n_mats = w.n_mats;
    out.row_bytes = w.row_bytes;
    if (w.n_mats > 1) return expert_stack(w, out);
    const int64_t rows_per_part = std::max<int64_t>(1, static_cast<int64_t>((max_part_ - 16) / w.row_bytes));
    for (int64_t r = 0; r < w.rows; r += rows_per_part) {
      const int64_t n = std::min(rows_per_part, w.rows - r);
      auto span = place(w.row(r), static_cast<uint64_t>(n * w.row_bytes));
      if (!span) return span.status();
      out.parts.push_back({WeightView{w.type, w.cols, n, w.row_bytes, *span, 0, 0, 1}, r});
    }
    return Status::ok();
  }

  Status vector(const WeightVector& v, DeviceVector& out) {
    if (!v.present()) return Status::ok();
    return vector(v.data, v.size, out);
  }
  Status vector(const float* data, int64_t n, DeviceVector& out) {
    if (!data) return Status::ok();
    auto span = place(reinterpret_cast<const uint8_t*>(data), static_cast<uint64_t>(n) * sizeof(float));
    if (!span) return span.status();
    out.span = *span;
    out.size = n;
    return Status::ok();
  }

  uint64_t bytes() const { return bytes_; }
  std::vector<std::unique_ptr<Buffer>> take_arenas() { return std::move(arenas_); }
  void set_progress(std::function<void(double)> f, uint64_t total) {
    progress_ = std::move(f);
    total_ = total;
  }

 private:
  Status expert_stack(const WeightMatrix& w, DeviceMatrix& out) {
    const uint64_t bytes = w.bytes();
    if (bytes + 16 > max_part_) {
      return Status::error("expert tensor " + (w.tensor ? w.tensor->name : std::string("?")) + " (" + mib(bytes) +
                           ") is larger than " + device_.info().name + " can bind at once (" + mib(max_part_) + ")");
    }
    auto span = place(w.data, bytes);
    if (!span) return span.status();
    out.parts.push_back({WeightView{w.type, w.cols, w.rows, w.row_bytes, *span, 0,
                                    static_cast<uint64_t>(w.rows * w.row_bytes), w.n_mats}, 0});
    return Status::ok();
  }

  // Copies `bytes` of host data into the current arena (a new one when full). The span is
  // padded to a multiple of 4 bytes plus slack, as the shaders' 32-bit reads need.
  Result<BufferSpan> place(const uint8_t* data, uint64_t bytes) {
    const uint64_t padded = align_up(bytes, 4) + 16;
    if (padded > max_part_) return Status::error("internal: tensor part above the binding limit");
    if (dry_run_) {
      bytes_ += align_up(padded, align_);
      return BufferSpan{};
    }
    if (arenas_.empty() || used_ + padded > arenas_.back()->size()) {
      const uint64_t size = std::min(device_.max_allocation_size(), std::max(kArenaBytes, align_up(padded, align_)));
      auto arena = device_.create_buffer(size, MemoryUse::Weights);
      if (!arena) return arena.status();
      arenas_.push_back(std::move(*arena));
      used_ = 0;
    }
    Buffer& arena = *arenas_.back();
    INFERSCOPE_RETURN_IF_ERROR(device_.upload(arena, used_, data, bytes));
    BufferSpan span{&arena, used_, padded};
    used_ = align_up(used_ + padded, align_);
    bytes_ += align_up(padded, align_);
    if (progress_ && total_) progress_(std::min(1.0, static_cast<double>(bytes_) / static_cast<double>(total_)));
    return span;
  }

  Device& device_;
  bool dry_run_;
  uint64_t align_ = 256, max_part_ = 0, used_ = 0, bytes_ = 0, total_ = 0;
  std::vector<std::unique_ptr<Buffer>> arenas_;
  std::function<void(double)> progress_;
};

Status pack_all(WeightPacker& p, const ModelWeights& w, std::unordered_map<const uint8_t*, DeviceMatrix>& matrices,
                std::unordered_map<const float*, DeviceVector>& vectors) {
  Status status = Status::ok();
  w.for_each_matrix([&](const WeightMatrix& m) {
    if (status) status = p.matrix(m, matrices[m.data]);
  });
  w.for_each_vector([&](const WeightVector& v) {
    if (status) status = p.vector(v, vectors[v.data]);
  });
  return status;
}

}  // namespace

Result<uint64_t> DeviceWeights::bytes_needed(Device& device, const ModelWeights& weights) {
  WeightPacker packer(device, true);
  DeviceWeights scratch;
  INFERSCOPE_RETURN_IF_ERROR(pack_all(packer, weights, scratch.matrices_, scratch.vectors_));
  return packer.bytes();
}

Result<std::unique_ptr<DeviceWeights>> DeviceWeights::upload(Device& device, const ModelWeights& weights,
                                                             const std::function<void(double)>& progress) {
  auto out = std::unique_ptr<DeviceWeights>(new DeviceWeights());
  WeightPacker packer(device, false);
  auto total = bytes_needed(device, weights);
  if (!total) return total.status();
  packer.set_progress(progress, *total);
  INFERSCOPE_RETURN_IF_ERROR(pack_all(packer, weights, out->matrices_, out->vectors_));
  out->bytes_ = packer.bytes();
  out->arenas_ = packer.take_arenas();
  return out;
}

const DeviceMatrix* DeviceWeights::matrix(const WeightMatrix& w) const {
  auto it = w.present() ? matrices_.find(w.data) : matrices_.end();
  return it == matrices_.end() ? nullptr : &it->second;
}

const DeviceVector* DeviceWeights::vector(const float* data) const {
  auto it = data ? vectors_.find(data) : vectors_.end();
  return it == vectors_.end() ? nullptr : &it->second;
}

}  // namespace inferscope::vulkan

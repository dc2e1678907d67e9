// Device buffers and recordings for the Vulkan op tests; failures throw (GoogleTest reports
// them as test failures).
#pragma once

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"

namespace inferscope::testing {

class Gpu {
 public:
  // pad: bytes added after the data of every upload (and the least any buffer holds), for
  // kernels that read whole words past the end; 0 gives buffers of exactly the asked size.
  explicit Gpu(vulkan::Device& device, uint64_t pad = 0) : device_(device), recorder_(device), pad_(pad) {}

  template <class T>
  const vulkan::Buffer& upload(const std::vector<T>& data) {
    return upload(data, pad_);
  }
  template <class T>
  const vulkan::Buffer& upload(const std::vector<T>& data, uint64_t pad) {
    const vulkan::Buffer& b = allocate(data.size() * sizeof(T) + pad);
    check(device_.upload(b, 0, data.data(), data.size() * sizeof(T)), "upload");
    return b;
  }
  const vulkan::Buffer& allocate(uint64_t bytes) {
    auto b = device_.create_buffer((std::max<uint64_t>(bytes, std::max<uint64_t>(pad_, 4)) + 3) / 4 * 4,
                                   vulkan::MemoryUse::Scratch);
    check(b.status(), "create_buffer");
    buffers_.push_back(std::move(*b));
    return *buffers_.back();
  }
  const vulkan::Buffer& filled(size_t n_floats, float value) { return upload(std::vector<float>(n_floats, value), 0); }
  template <class T>
  std::vector<T> read(const vulkan::Buffer& b, size_t n, uint64_t offset = 0) {
    std::vector<T> v(n);
    check(device_.download(b, offset, v.data(), n * sizeof(T)), "download");
    return v;
  }

  vulkan::Recorder& recorder() { return recorder_; }
  void begin() { check(recorder_.begin(), "Recorder::begin"); }
  void submit() { check(recorder_.submit_and_wait(), "submit_and_wait"); }
  // Records with `op` (a Status-returning call), submits and waits.
  template <class F>
  void run(F&& op) {
    begin();
    check(op(), "recording");
    submit();
  }

  static void check(const Status& s, const char* what) {
    if (!s) throw std::runtime_error(std::string(what) + ": " + s.message());
  }

 private:
  vulkan::Device& device_;
  vulkan::Recorder recorder_;
  uint64_t pad_;
  std::vector<std::unique_ptr<vulkan::Buffer>> buffers_;
};

}  // namespace inferscope::testing

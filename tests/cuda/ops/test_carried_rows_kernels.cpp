// The MTP block's carried rows on the CUDA emulator (kernels/cuda/carried_rows.h) against the
// rule of BackendOps::carry_hidden written out here: a chunk whose rows belong to two slots,
// interleaved (a slot going on, a slot starting at position 0, each slot's second stretch after
// the other's), with the last rows kept over the carried ones and the first rows over the row
// states. Exact: the kernels only move values.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/cuda/carried_rows.h"
#include "tests/cuda/ops/device_buffer.h"
#include "tests/cuda/ops/kernel_check.h"

namespace inferscope::cuda_test {
namespace {

namespace ck = cuda_kernels;

const std::vector<int32_t> kSlots = {1, 1, 0, 0, 1, 0};
const std::vector<int32_t> kPos = {5, 6, 0, 1, 7, 2};
constexpr int64_t kWidth = 300, kStride = 1000, kCarry = 700;  // the carried row 700 floats into a state
constexpr int kStates = 4;  // two slots, then two row states
constexpr int64_t kKept = 2;

TEST(CudaCarriedRowsKernels, RowsPairWithTheRowBeforeThemInTheirSlot) {
  const auto n = static_cast<int64_t>(kSlots.size());
  const std::vector<float> in = random_values(static_cast<size_t>(n * kWidth), 1);
  const std::vector<float> states = random_values(static_cast<size_t>(kStates * kStride), 2);
  std::vector<float> want(in.size()), want_states = states;
  std::vector<int64_t> last_of_slot = {-1, -1};
  for (size_t t = 0; t < kSlots.size(); ++t) {
    const int64_t before = last_of_slot[static_cast<size_t>(kSlots[t])];
    const float* from = before >= 0 ? in.data() + before * kWidth : states.data() + kSlots[t] * kStride + kCarry;
    for (int64_t i = 0; i < kWidth; ++i) want[t * kWidth + i] = kPos[t] == 0 ? 0.0f : from[i];
    last_of_slot[static_cast<size_t>(kSlots[t])] = static_cast<int64_t>(t);
  }
  for (int slot = 0; slot < 2; ++slot) {
    std::copy_n(in.data() + last_of_slot[static_cast<size_t>(slot)] * kWidth, kWidth,
                want_states.data() + slot * kStride + kCarry);
  }
  for (int64_t t = 0; t < kKept; ++t) {
    std::copy_n(in.data() + t * kWidth, kWidth, want_states.data() + (2 + t) * kStride + kCarry);
  }

  DeviceBuffer<float> din(in), dout(want.size()), ds(states);
  DeviceBuffer<int32_t> pos(kPos), slot(kSlots);
  const ck::ChunkRows rows{pos.get(), nullptr, nullptr, nullptr, slot.get()};
  float* carried = ds.get() + kCarry;
  ASSERT_EQ(ck::launch_gather_carried(din.get(), dout.get(), carried, kStride, rows, n, kWidth, nullptr), cudaSuccess);
  EXPECT_EQ(dout.read(), want);
  ASSERT_EQ(ck::launch_keep_carried(din.get(), carried, carried + 2 * kStride, kStride, rows, n, kWidth, true, kKept,
                                    nullptr),
            cudaSuccess);
  EXPECT_EQ(ds.read(), want_states);
}

}  // namespace
}  // namespace inferscope::cuda_test

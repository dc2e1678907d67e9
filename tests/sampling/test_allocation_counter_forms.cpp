// The allocation counter itself: every form of new is counted, and aligned memory comes back
// aligned. (Under AddressSanitizer, a form left unreplaced shows as an alloc-dealloc mismatch;
// tests/sanitize.sh runs these.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "tests/sampling/allocation_counter.h"

namespace inferscope {
namespace {

struct alignas(128) Wide {
  char bytes[128];
};

// Keeps the compiler from eliding a new/delete pair.
void* volatile sink;

bool aligned_to(const void* p, std::uintptr_t alignment) { return reinterpret_cast<std::uintptr_t>(p) % alignment == 0; }

TEST(AllocationCounter, CountsEveryFormOfNew) {
  alloc_counter::start();
  int* one = new int(1);
  sink = one;
  delete one;
  int* many = new int[3];
  sink = many;
  delete[] many;
  int* quiet = new (std::nothrow) int(2);
  sink = quiet;
  delete quiet;
  int* quiet_many = new (std::nothrow) int[3];
  sink = quiet_many;
  delete[] quiet_many;
  Wide* wide = new Wide;
  sink = wide;
  delete wide;
  Wide* wides = new Wide[2];
  sink = wides;
  delete[] wides;
  Wide* quiet_wide = new (std::nothrow) Wide;
  sink = quiet_wide;
  delete quiet_wide;
  EXPECT_EQ(alloc_counter::stop(), 7);
}

TEST(AllocationCounter, AlignedFormsHonourTheAlignment) {
  alloc_counter::start();
  Wide* wide = new Wide;
  Wide* wides = new Wide[3];
  void* raw = ::operator new(1, std::align_val_t(4096));
  const long counted = alloc_counter::stop();
  EXPECT_TRUE(aligned_to(wide, alignof(Wide)));
  EXPECT_TRUE(aligned_to(wides, alignof(Wide)));
  EXPECT_TRUE(aligned_to(raw, 4096));
  ::operator delete(raw, std::align_val_t(4096));
  delete[] wides;
  delete wide;
  EXPECT_EQ(counted, 3);
}

TEST(AllocationCounter, CountsTheStableSortBuffer) {
  std::vector<int> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int>((i * 7919) % 1000);
  alloc_counter::start();
  std::stable_sort(values.begin(), values.end());  // a temporary buffer from nothrow new
  EXPECT_GE(alloc_counter::stop(), 1);
  EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
}

}  // namespace
}  // namespace inferscope

// Replaces the global operator new so sampling tests can assert "no allocations in this
// section". Its own file so the compiler never sees the replacement and its callers together.
#include <cstdlib>
#include <new>

namespace {
thread_local bool counting = false;
thread_local long allocations = 0;
}  // namespace

namespace inferscope::alloc_counter {
void start() {
  allocations = 0;
  counting = true;
}
long stop() {
  counting = false;
  return allocations;
}
}  // namespace inferscope::alloc_counter

void* operator new(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

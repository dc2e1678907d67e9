// Replaces the global operator new and delete so sampling tests can count allocations
// (allocation_counter.h). Its own file so the compiler never sees the replacement and its
// callers together. Every form is replaced: a form left to the runtime (the nothrow new that
// std::stable_sort's buffer uses, say) would allocate with the runtime's allocator and be freed
// here with free(), which AddressSanitizer reports as a mismatch.
#include <cstdlib>
#include <new>

#include "tests/sampling/allocation_counter.h"

namespace {

thread_local bool counting = false;
thread_local long allocations = 0;

void* allocate(std::size_t size) noexcept {
  if (counting) ++allocations;
  return std::malloc(size == 0 ? 1 : size);
}

void* allocate_aligned(std::size_t size, std::align_val_t alignment) noexcept {
  if (counting) ++allocations;
  const auto align = static_cast<std::size_t>(alignment);
  const std::size_t rounded = (size + align - 1) / align * align;  // aligned_alloc wants a multiple
  return std::aligned_alloc(align, rounded == 0 ? align : rounded);
}

void* or_throw(void* p) {
  if (!p) throw std::bad_alloc();
  return p;
}

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

void* operator new(std::size_t size) { return or_throw(allocate(size)); }
void* operator new[](std::size_t size) { return or_throw(allocate(size)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new(std::size_t size, std::align_val_t a) { return or_throw(allocate_aligned(size, a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return or_throw(allocate_aligned(size, a)); }
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept { return allocate_aligned(size, a); }
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept { return allocate_aligned(size, a); }

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

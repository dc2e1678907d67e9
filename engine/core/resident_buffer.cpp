#include "engine/core/resident_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace inferscope {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}

uint64_t available_memory_bytes() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kib = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "MemAvailable: %lu kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib * 1024;
}

Result<std::unique_ptr<ResidentBuffer>> ResidentBuffer::allocate(size_t bytes) {
  const size_t mapped = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  const uint64_t available = available_memory_bytes();
  if (available != 0 && mapped > available) {
    return Status::error("out of memory: " + std::to_string(mapped >> 20) + " MiB needed, " +
                         std::to_string(available >> 20) + " MiB available");
  }
  // One extra huge page so the start can be aligned to a huge-page boundary.
  void* p = ::mmap(nullptr, mapped + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return Status::error("out of memory: cannot reserve " + std::to_string(mapped >> 20) + " MiB: " +
                         std::strerror(errno));
  }
  auto* base = static_cast<uint8_t*>(p);
  auto* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(base) + kHugePage - 1) / kHugePage * kHugePage);
  ::madvise(aligned, mapped, MADV_HUGEPAGE);  // a hint: without THP the buffer still works
  return std::unique_ptr<ResidentBuffer>(new ResidentBuffer(base, aligned, bytes, mapped + kHugePage));
}

ResidentBuffer::~ResidentBuffer() { ::munmap(mapping_, mapped_); }

}  // namespace inferscope

#include "engine/backend/backend_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include <thread>

#include "engine/core/resident_buffer.h"

namespace inferscope {

namespace {

std::filesystem::path executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

std::vector<std::filesystem::path> search_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("INFERSCOPE_BACKEND_DIR"); env && *env) dirs.emplace_back(env);
  if (auto exe = executable_dir(); !exe.empty()) dirs.push_back(exe / ".." / "lib" / "inferscope");
#ifdef INFERSCOPE_BACKEND_BUILD_DIR
  dirs.emplace_back(INFERSCOPE_BACKEND_BUILD_DIR);
#endif
  return dirs;
}

std::string cpu_description() {
  return std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
}

Result<BackendPlugin*> open_plugin(BackendKind kind) {
  const std::string file = std::string("libinferscope_") + backend_kind_name(kind) + ".so";
  std::string tried;
  for (const auto& dir : search_dirs()) {
    const auto path = dir / file;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + dir.string();
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return Status::error(std::string("cannot load ") + path.string() + ": " + dlerror());
    auto entry = reinterpret_cast<BackendEntryPoint>(dlsym(handle, kBackendEntryPoint));
    if (!entry) return Status::error(path.string() + " is not an Inferscope backend (no " + kBackendEntryPoint + ")");
    BackendPlugin* plugin = entry(kBackendAbiVersion);
    if (!plugin) return Status::error(path.string() + " was built for another version of Inferscope");
    return plugin;  // kept loaded for the life of the process
  }
  return Status::error("the " + std::string(backend_kind_name(kind)) + " backend is not installed (" + file +
                       " not found in " + tried + ")");
}

}  // namespace

const char* backend_kind_name(BackendKind kind) {
  switch (kind) {
    case BackendKind::Cpu: return "cpu";
    case BackendKind::Vulkan: return "vulkan";
    case BackendKind::Cuda: return "cuda";
  }
  return "?";
}

std::optional<BackendKind> backend_kind_from_name(std::string_view name) {
  for (BackendKind k : {BackendKind::Cpu, BackendKind::Vulkan, BackendKind::Cuda}) {
    if (name == backend_kind_name(k)) return k;
  }
  return std::nullopt;
}

Result<BackendPlugin*> load_backend(BackendKind kind) {
  if (kind == BackendKind::Cpu) return Status::error("the CPU backend is built in");
  static std::mutex mutex;
  static std::map<BackendKind, Result<BackendPlugin*>> loaded;
  std::lock_guard lock(mutex);
  auto it = loaded.find(kind);
  if (it == loaded.end()) it = loaded.emplace(kind, open_plugin(kind)).first;
  return it->second;
}

BackendDevices list_backend_devices(BackendKind kind) {
  BackendDevices result;
  result.kind = kind;
  if (kind == BackendKind::Cpu) {
    BackendDevice cpu;
    cpu.name = "CPU";
    cpu.memory_bytes = available_memory_bytes();
    cpu.properties = {{"threads", cpu_description()}};
    result.devices.push_back(cpu);
    return result;
  }
  auto plugin = load_backend(kind);
  if (!plugin) {
    result.unavailable_reason = plugin.message();
    return result;
  }
  auto devices = (*plugin)->devices();
  if (!devices) result.unavailable_reason = devices.message();
  else if (devices->empty()) result.unavailable_reason = "no device found";
  else result.devices = std::move(*devices);
  return result;
}

}  // namespace inferscope

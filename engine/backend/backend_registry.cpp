#include "engine/backend/backend_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

#include "engine/backend/cpu/cpu_plugin.h"

namespace inferscope {

namespace {

constexpr std::string_view kLibraryPrefix = "libinferscope_";
constexpr std::string_view kLibrarySuffix = ".so";

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

// The plug-ins this build configured, "name:Label" pairs separated by commas (set by CMake's
// inferscope_add_backend on this file), so that a configured backend is named and labelled
// even when its library is missing or cannot load.
std::vector<std::pair<std::string, std::string>> configured_plugins() {
  std::vector<std::pair<std::string, std::string>> out;
#ifdef INFERSCOPE_CONFIGURED_BACKENDS
  std::string_view list = INFERSCOPE_CONFIGURED_BACKENDS;
  while (!list.empty()) {
    const size_t comma = std::min(list.find(','), list.size());
    const std::string_view item = list.substr(0, comma);
    const size_t eq = item.find(':');
    if (eq != std::string_view::npos) out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
#endif
  return out;
}

bool valid_plugin_name(std::string_view name) {
  return !name.empty() && name != kCpuBackend &&
         std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

// Names of the backend libraries in the search folders.
std::vector<std::string> installed_plugins() {
  std::vector<std::string> names;
  for (const auto& dir : search_dirs()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      if (!file.starts_with(kLibraryPrefix) || !file.ends_with(kLibrarySuffix)) continue;
      const std::string name = file.substr(kLibraryPrefix.size(), file.size() - kLibraryPrefix.size() - kLibrarySuffix.size());
      if (valid_plugin_name(name)) names.push_back(name);
    }
  }
  return names;
}

Result<BackendPlugin*> open_plugin(const std::string& name) {
  const std::string file = std::string(kLibraryPrefix) + name + std::string(kLibrarySuffix);
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
    if (plugin->name() != name) {
      return Status::error(path.string() + " calls itself '" + plugin->name() + "', not '" + name + "'");
    }
    return plugin;  // kept loaded for the life of the process
  }
  return Status::error("the " + name + " backend is not installed (" + file + " not found in " + tried + ")");
}

std::mutex& plugins_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, Result<BackendPlugin*>, std::less<>>& loaded_plugins() {
  static std::map<std::string, Result<BackendPlugin*>, std::less<>> loaded;
  return loaded;
}

}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& [name, label] : configured_plugins()) names.push_back(name);
  for (auto& name : installed_plugins()) names.push_back(std::move(name));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  names.insert(names.begin(), std::string(kCpuBackend));
  return names;
}

bool is_backend_name(std::string_view name) {
  const auto names = backend_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string backend_label(std::string_view name) {
  if (name == kCpuBackend) return cpu_backend_plugin().label();
  for (const auto& [configured, label] : configured_plugins()) {
    if (configured == name) return label;
  }
  std::lock_guard lock(plugins_mutex());
  auto it = loaded_plugins().find(name);
  if (it != loaded_plugins().end() && it->second) return (*it->second)->label();
  return std::string(name);
}

Result<BackendPlugin*> load_backend(std::string_view name) {
  if (name == kCpuBackend) return &cpu_backend_plugin();
  if (!valid_plugin_name(name)) return Status::error("'" + std::string(name) + "' is not a backend name");
  std::lock_guard lock(plugins_mutex());
  auto& loaded = loaded_plugins();
  auto it = loaded.find(name);
  if (it == loaded.end()) it = loaded.emplace(std::string(name), open_plugin(std::string(name))).first;
  return it->second;
}

BackendDevices list_backend_devices(std::string_view name) {
  BackendDevices result;
  result.backend = std::string(name);
  auto plugin = load_backend(name);
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

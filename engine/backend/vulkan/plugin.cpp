// The entry point of libinferscope_vulkan.so: lists Vulkan devices and creates VulkanOps on
// them (engine/backend/backend_plugin.h).
#include <cstdio>

#include "engine/backend/backend_plugin.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_ops.h"

namespace inferscope::vulkan {
namespace {

std::string yes_no(bool b) { return b ? "yes" : "no"; }

BackendDevice describe(const DeviceInfo& d) {
  BackendDevice b;
  b.index = static_cast<int>(d.index);
  b.name = d.name;
  b.memory_bytes = d.memory_bytes;
  b.properties = {
      {"type", d.type},
      {"driver", d.driver},
      {"Vulkan", d.api_version},
      {"memory", std::to_string(d.memory_bytes >> 20) + " MiB"},
      {"subgroup size", std::to_string(d.subgroup_size)},
      {"max storage buffer range", std::to_string(d.max_storage_buffer_range >> 20) + " MiB"},
      {"max allocation", std::to_string(d.max_allocation_size >> 20) + " MiB"},
      {"shared memory", std::to_string(d.max_shared_memory / 1024) + " KiB"},
      {"max workgroup invocations", std::to_string(d.max_workgroup_invocations)},
      {"16-bit storage", yes_no(d.storage_16bit)},
      {"8-bit storage", yes_no(d.storage_8bit)},
      {"int8", yes_no(d.shader_int8)},
      {"int8 dot product", d.integer_dot_product
                               ? (d.integer_dot_product_accelerated ? "yes (accelerated)" : "yes (not accelerated)")
                               : "no (emulated with shifts and multiplies)"},
      {"float16", yes_no(d.shader_float16)},
      {"timestamps", yes_no(d.timestamps)},
  };
  return b;
}

class VulkanPlugin : public BackendPlugin {
 public:
  const char* name() const override { return "vulkan"; }
  const char* label() const override { return "Vulkan"; }

  Result<std::vector<BackendDevice>> devices() override {
    auto instance = Instance::create();
    if (!instance) return instance.status();
    std::vector<BackendDevice> out;
    for (const DeviceInfo& d : (*instance)->devices()) out.push_back(describe(d));
    return out;
  }

  Result<std::unique_ptr<BackendOps>> create_ops(std::shared_ptr<const Model> model, int device,
                                                 ThreadPool*) override {
    if (device < 0) return Status::error("Vulkan device numbers start at 0");
    auto dev = Device::create(static_cast<uint32_t>(device));
    if (!dev) return dev.status();
    return std::unique_ptr<BackendOps>(std::make_unique<VulkanOps>(std::move(model), std::move(*dev)));
  }
};

}  // namespace
}  // namespace inferscope::vulkan

INFERSCOPE_BACKEND_ENTRY_POINT(inferscope::vulkan::VulkanPlugin)

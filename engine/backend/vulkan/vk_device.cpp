#include "engine/backend/vulkan/vk_device.h"

#include <algorithm>
#include <cstring>

#include "kernels/vulkan/shader_table.h"

namespace inferscope::vulkan {

namespace {

constexpr uint32_t kPushConstantBytes = 128;
constexpr uint64_t kStagingChunk = 64ull << 20;

const EmbeddedShader* find_shader(std::string_view name) {
  for (const EmbeddedShader& s : embedded_shaders()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

std::string gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

}  // namespace

Result<std::unique_ptr<Device>> Device::create(uint32_t index, const DeviceOptions& options) {
  auto instance = Instance::create(options.validation);
  if (!instance) return instance.status();
  if ((*instance)->devices().empty()) return Status::error("no Vulkan 1.2 device found");
  if (index >= (*instance)->devices().size()) {
    return Status::error("Vulkan device " + std::to_string(index) + " does not exist (" +
                         std::to_string((*instance)->devices().size()) + " found)");
  }
  auto device = std::unique_ptr<Device>(new Device());
  device->instance_ = std::move(*instance);
  device->options_ = options;
  INFERSCOPE_RETURN_IF_ERROR(device->init_device(index));
  return device;
}

Status Device::init_device(uint32_t index) {
  physical_ = instance_->physical_devices()[index];
  info_ = instance_->devices()[index];
  if (options_.memory_bytes) info_.memory_bytes = std::min(info_.memory_bytes, options_.memory_bytes);
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_props_);
  max_range_ = info_.max_storage_buffer_range;
  if (options_.max_storage_buffer_range) max_range_ = std::min(max_range_, options_.max_storage_buffer_range);
  max_alloc_ = info_.max_allocation_size ? info_.max_allocation_size : (1ull << 30);
  if (options_.max_allocation_size) max_alloc_ = std::min(max_alloc_, options_.max_allocation_size);

  uint32_t n_families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n_families, nullptr);
  std::vector<VkQueueFamilyProperties> families(n_families);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n_families, families.data());
  int compute = -1;
  for (uint32_t i = 0; i < n_families; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    // Prefer a compute family without graphics (a dedicated async compute queue).
    if (compute < 0 || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) compute = static_cast<int>(i);
  }
  if (compute < 0) return Status::error(info_.name + " has no compute queue");
  queue_family_ = static_cast<uint32_t>(compute);
  timestamps_ = options_.timestamps && info_.timestamps && families[queue_family_].timestampValidBits > 0;

  // Every shader has a variant without optional features (weights are read as 32-bit words,
  // see weights.glsl); integer dot products and 16-bit storage are enabled where present for
  // the int8 matvec's native variant (matvec_q8.comp, quantize_q8.comp).
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  storage16.storageBuffer16BitAccess = info_.storage_16bit ? VK_TRUE : VK_FALSE;
  dci.pNext = &storage16;
  VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
  const char* dot_extension = VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME;
  if (info_.integer_dot_product) {
    dot.shaderIntegerDotProduct = VK_TRUE;
    storage16.pNext = &dot;
    dci.enabledExtensionCount = 1;
    dci.ppEnabledExtensionNames = &dot_extension;
  }
  INFERSCOPE_VK_CHECK(vkCreateDevice(physical_, &dci, nullptr, &device_));
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queue_family_;
  INFERSCOPE_VK_CHECK(vkCreateCommandPool(device_, &pci, nullptr, &command_pool_));
  VkPipelineCacheCreateInfo cache{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  INFERSCOPE_VK_CHECK(vkCreatePipelineCache(device_, &cache, nullptr, &pipeline_cache_));
  return Status::ok();
}

Device::~Device() {
  if (!device_) return;
  vkDeviceWaitIdle(device_);
  tables_.clear();
  for (auto& [key, k] : kernels_) {
    vkDestroyPipeline(device_, k->pipeline, nullptr);
    vkDestroyPipelineLayout(device_, k->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, k->set_layout, nullptr);
  }
  vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  vkDestroyCommandPool(device_, command_pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

Status Device::note_result(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return Status::ok();
  if (result == VK_ERROR_DEVICE_LOST) lost_ = true;
  return Status::error(std::string(what) + " failed on " + info_.name + ": " + vk_result_name(result));
}

Result<uint32_t> Device::memory_type(uint32_t type_bits, bool host_visible) const {
  const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Unified-memory devices (CPU drivers, integrated GPUs) map device memory directly.
  const bool unified = info_.type == "CPU" || info_.type == "integrated GPU";
  auto pick = [&](VkMemoryPropertyFlags required) -> int {
    for (uint32_t i = 0; i < memory_props_.memoryTypeCount; ++i) {
      if ((type_bits & (1u << i)) && (memory_props_.memoryTypes[i].propertyFlags & required) == required) {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  int t = -1;
  if (host_visible) {
    t = pick(coherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (t < 0) t = pick(coherent);
  } else {
    if (unified) t = pick(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | coherent);
    if (t < 0) t = pick(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (t < 0) t = pick(0);
  }
  if (t < 0) return Status::error("no suitable Vulkan memory type on " + info_.name);
  return static_cast<uint32_t>(t);
}

Result<std::unique_ptr<Buffer>> Device::create_buffer(uint64_t bytes, MemoryUse use) {
  if (lost_) return Status::error("the Vulkan device was lost; reload the model");
  bytes = std::max<uint64_t>(16, (bytes + 15) / 16 * 16);
  if (bytes > max_alloc_) {
    return Status::error("a " + gib(bytes) + " " + memory_use_name(use) + " buffer exceeds " + info_.name +
                         "'s allocation limit of " + gib(max_alloc_));
  }
  auto buffer = std::unique_ptr<Buffer>(new Buffer());
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  INFERSCOPE_RETURN_IF_ERROR(note_result(vkCreateBuffer(device_, &bci, nullptr, &buffer->buffer_), "vkCreateBuffer"));
  buffer->device_ = this;
  buffer->size_ = bytes;
  buffer->use_ = use;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, buffer->buffer_, &req);
  auto type = memory_type(req.memoryTypeBits, use == MemoryUse::Staging);
  if (!type) return type.status();
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  VkResult r = vkAllocateMemory(device_, &mai, nullptr, &buffer->memory_);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    return Status::error("out of device memory allocating " + gib(bytes) + " for " + memory_use_name(use) + " on " +
                         info_.name + " (" + gib(allocated_bytes(MemoryUse::Weights) + allocated_bytes(MemoryUse::Kv) +
                                                  allocated_bytes(MemoryUse::Scratch)) +
                         " already in use)");
  }
  INFERSCOPE_RETURN_IF_ERROR(note_result(r, "vkAllocateMemory"));
  INFERSCOPE_RETURN_IF_ERROR(note_result(vkBindBufferMemory(device_, buffer->buffer_, buffer->memory_, 0), "vkBindBufferMemory"));
  const VkMemoryPropertyFlags flags = memory_props_.memoryTypes[*type].propertyFlags;
  const bool may_map = use == MemoryUse::Staging || options_.map_device_buffers;
  if (may_map && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
    INFERSCOPE_RETURN_IF_ERROR(note_result(vkMapMemory(device_, buffer->memory_, 0, VK_WHOLE_SIZE, 0, &buffer->mapped_), "vkMapMemory"));
  }
  allocated_[static_cast<size_t>(use)] += bytes;
  return buffer;
}

void Device::release(Buffer& buffer) {
  if (buffer.mapped_) vkUnmapMemory(device_, buffer.memory_);
  if (buffer.buffer_) vkDestroyBuffer(device_, buffer.buffer_, nullptr);
  if (buffer.memory_) {
    vkFreeMemory(device_, buffer.memory_, nullptr);
    allocated_[static_cast<size_t>(buffer.use_)] -= buffer.size_;
  }
}

Status Device::upload(const Buffer& dst, uint64_t offset, const void* data, uint64_t bytes) {
  if (offset + bytes > dst.size()) return Status::error("upload past the end of a Vulkan buffer");
  if (dst.mapped()) {
    std::memcpy(static_cast<uint8_t*>(dst.mapped()) + offset, data, bytes);
    return Status::ok();
  }
  return copy_via_staging(dst, offset, const_cast<void*>(data), bytes, true);
}

Status Device::download(const Buffer& src, uint64_t offset, void* data, uint64_t bytes) {
  if (offset + bytes > src.size()) return Status::error("download past the end of a Vulkan buffer");
  if (src.mapped()) {
    std::memcpy(data, static_cast<const uint8_t*>(src.mapped()) + offset, bytes);
    return Status::ok();
  }
  return copy_via_staging(src, offset, data, bytes, false);
}

Status Device::copy_via_staging(const Buffer& device_buffer, uint64_t offset, void* host, uint64_t bytes,
                                bool to_device) {
  if (lost_) return Status::error("the Vulkan device was lost; reload the model");
  auto staging = create_buffer(std::min(bytes, kStagingChunk), MemoryUse::Staging);
  if (!staging) return staging.status();
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd;
  INFERSCOPE_RETURN_IF_ERROR(note_result(vkAllocateCommandBuffers(device_, &ai, &cmd), "vkAllocateCommandBuffers"));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  Status status = note_result(vkCreateFence(device_, &fci, nullptr, &fence), "vkCreateFence");
  for (uint64_t done = 0; status && done < bytes;) {
    const uint64_t n = std::min(bytes - done, kStagingChunk);
    uint8_t* h = static_cast<uint8_t*>(host) + done;
    if (to_device) std::memcpy((*staging)->mapped(), h, n);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &bi);
    VkBufferCopy region{to_device ? 0 : offset + done, to_device ? offset + done : 0, n};
    vkCmdCopyBuffer(cmd, to_device ? (*staging)->handle() : device_buffer.handle(),
                    to_device ? device_buffer.handle() : (*staging)->handle(), 1, &region);
    vkEndCommandBuffer(cmd);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    status = note_result(vkQueueSubmit(queue_, 1, &si, fence), "vkQueueSubmit");
    if (status) status = note_result(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    vkResetFences(device_, 1, &fence);
    vkResetCommandBuffer(cmd, 0);
    if (status && !to_device) std::memcpy(h, (*staging)->mapped(), n);
    done += n;
  }
  vkDestroyFence(device_, fence, nullptr);
  vkFreeCommandBuffers(device_, command_pool_, 1, &cmd);
  return status;
}

bool Device::has_shader(std::string_view name) const { return find_shader(name) != nullptr; }

Result<const Buffer*> Device::constant_table(const std::string& name,
                                             const std::function<std::vector<uint32_t>()>& make) {
  if (auto it = tables_.find(name); it != tables_.end()) return static_cast<const Buffer*>(it->second.get());
  const std::vector<uint32_t> words = make();
  auto buffer = create_buffer(words.size() * 4, MemoryUse::Weights);
  if (!buffer) return buffer.status();
  INFERSCOPE_RETURN_IF_ERROR(upload(**buffer, 0, words.data(), words.size() * 4));
  const Buffer* table = buffer->get();
  tables_.emplace(name, std::move(*buffer));
  return table;
}

Result<const Kernel*> Device::kernel(std::string_view name, uint32_t n_bindings, std::span<const uint32_t> spec) {
  const std::string chosen(name);
  std::string key = chosen;
  for (uint32_t v : spec) key += "/" + std::to_string(v);
  if (auto it = kernels_.find(key); it != kernels_.end()) return static_cast<const Kernel*>(it->second.get());
  const EmbeddedShader* shader = find_shader(chosen);
  if (!shader) return Status::error("no Vulkan shader named " + chosen);

  auto k = std::make_unique<Kernel>();
  k->name = chosen;
  k->n_bindings = n_bindings;
  std::vector<VkDescriptorSetLayoutBinding> bindings(n_bindings);
  for (uint32_t i = 0; i < n_bindings; ++i) {
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dl.bindingCount = n_bindings;
  dl.pBindings = bindings.data();
  INFERSCOPE_RETURN_IF_ERROR(note_result(vkCreateDescriptorSetLayout(device_, &dl, nullptr, &k->set_layout), "vkCreateDescriptorSetLayout"));
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &k->set_layout;
  pl.pushConstantRangeCount = 1;
  pl.pPushConstantRanges = &push;
  INFERSCOPE_RETURN_IF_ERROR(note_result(vkCreatePipelineLayout(device_, &pl, nullptr, &k->layout), "vkCreatePipelineLayout"));

  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = shader->word_count * 4;
  smi.pCode = shader->words;
  VkShaderModule module;
  INFERSCOPE_RETURN_IF_ERROR(note_result(vkCreateShaderModule(device_, &smi, nullptr, &module), "vkCreateShaderModule"));
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4, 4};
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), spec.size() * 4, spec.data()};
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = module;
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  cpi.layout = k->layout;
  VkResult r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &cpi, nullptr, &k->pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  INFERSCOPE_RETURN_IF_ERROR(note_result(r, ("building Vulkan kernel " + chosen).c_str()));
  const Kernel* result = k.get();
  kernels_.emplace(std::move(key), std::move(k));
  return result;
}

}  // namespace inferscope::vulkan

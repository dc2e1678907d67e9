#include "engine/backend/vulkan/vk_instance.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace inferscope::vulkan {

namespace {

const char* device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

std::string version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

bool layer_available(const char* name) {
  uint32_t count = 0;
  if (vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const auto& l : layers) {
    if (std::strcmp(l.layerName, name) == 0) return true;
  }
  return false;
}

bool has_device_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t count = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, extensions.data()) != VK_SUCCESS) return false;
  for (const auto& e : extensions) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

VKAPI_ATTR VkBool32 VKAPI_CALL report_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    std::fprintf(stderr, "vulkan validation: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

// Properties and features of one physical device, as the kernels and the UI need them.
DeviceInfo describe(VkPhysicalDevice pd, uint32_t index) {
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  driver.pNext = &subgroup;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &driver;
  vkGetPhysicalDeviceProperties2(pd, &props);
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props_m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props_m3.pNext = &m3;
  vkGetPhysicalDeviceProperties2(pd, &props_m3);

  const bool has_dot = has_device_extension(pd, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
  VkPhysicalDeviceShaderIntegerDotProductPropertiesKHR dot_props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES_KHR};
  if (has_dot) {
    VkPhysicalDeviceProperties2 props_dot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props_dot.pNext = &dot_props;
    vkGetPhysicalDeviceProperties2(pd, &props_dot);
  }

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  if (has_dot) f12.pNext = &dot;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f11;
  vkGetPhysicalDeviceFeatures2(pd, &features);

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);

  const VkPhysicalDeviceLimits& lim = props.properties.limits;
  DeviceInfo info;
  info.index = index;
  info.name = props.properties.deviceName;
  info.type = device_type_name(props.properties.deviceType);
  info.driver = std::string(driver.driverName) + " " + driver.driverInfo;
  info.api_version = version_string(props.properties.apiVersion);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      info.memory_bytes = std::max<uint64_t>(info.memory_bytes, mem.memoryHeaps[i].size);
    }
  }
  info.subgroup_size = subgroup.subgroupSize;
  info.subgroup_broadcast = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BALLOT_BIT) &&
                            (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
  info.max_storage_buffer_range = lim.maxStorageBufferRange;
  info.max_allocation_size = m3.maxMemoryAllocationSize;
  info.max_shared_memory = lim.maxComputeSharedMemorySize;
  info.max_workgroup_invocations = lim.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) info.max_workgroup_count[i] = lim.maxComputeWorkGroupCount[i];
  info.min_storage_buffer_offset_alignment = lim.minStorageBufferOffsetAlignment;
  info.storage_16bit = f11.storageBuffer16BitAccess;
  info.storage_8bit = f12.storageBuffer8BitAccess;
  info.shader_int8 = f12.shaderInt8;
  info.shader_float16 = f12.shaderFloat16;
  info.integer_dot_product = has_dot && dot.shaderIntegerDotProduct;
  info.integer_dot_product_accelerated = info.integer_dot_product &&
                                         dot_props.integerDotProduct4x8BitPackedSignedAccelerated &&
                                         dot_props.integerDotProduct4x8BitPackedMixedSignednessAccelerated;
  info.timestamps = lim.timestampComputeAndGraphics && lim.timestampPeriod > 0.0f;
  info.timestamp_period_ns = lim.timestampPeriod;
  return info;
}

}  // namespace

Result<std::shared_ptr<Instance>> Instance::create(bool validation) {
  if (const char* env = std::getenv("INFERSCOPE_VULKAN_VALIDATION"); env && std::strcmp(env, "1") == 0) {
    validation = true;
  }
  auto instance = std::shared_ptr<Instance>(new Instance());
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "Inferscope";
  app.pEngineName = "Inferscope";
  app.apiVersion = VK_API_VERSION_1_2;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* debug_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  instance->validation_ = validation && layer_available(layer);
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  if (instance->validation_) {
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = &layer;
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = &debug_ext;
  }
  VkResult r = vkCreateInstance(&ci, nullptr, &instance->instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) return Status::error("no Vulkan driver is installed (VK_ERROR_INCOMPATIBLE_DRIVER)");
  if (r != VK_SUCCESS) return Status::error(std::string("vkCreateInstance failed: ") + vk_result_name(r));
  if (instance->validation_) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create_messenger) {
      VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
      mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
      mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
      mi.pfnUserCallback = report_validation;
      create_messenger(instance->instance_, &mi, nullptr, &instance->messenger_);
    }
  }
  uint32_t count = 0;
  INFERSCOPE_VK_CHECK(vkEnumeratePhysicalDevices(instance->instance_, &count, nullptr));
  instance->physical_.resize(count);
  INFERSCOPE_VK_CHECK(vkEnumeratePhysicalDevices(instance->instance_, &count, instance->physical_.data()));
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(instance->physical_[i], &p);
    if (p.apiVersion < VK_API_VERSION_1_2) continue;  // the kernels need Vulkan 1.2
    instance->usable_.push_back(instance->physical_[i]);
    instance->infos_.push_back(describe(instance->physical_[i], static_cast<uint32_t>(instance->infos_.size())));
  }
  return instance;
}

Instance::~Instance() {
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

const char* vk_result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY (out of host memory)";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY (out of device memory)";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST (the device was lost)";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult error";
  }
}

}  // namespace inferscope::vulkan

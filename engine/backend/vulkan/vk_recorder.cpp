#include "engine/backend/vulkan/vk_recorder.h"

#include <algorithm>
#include <vector>

namespace inferscope::vulkan {

namespace {

constexpr uint32_t kSetsPerPool = 1024;
constexpr uint32_t kBuffersPerPool = kSetsPerPool * 6;
constexpr uint32_t kInitialQueries = 2048;

}  // namespace

Recorder::Recorder(Device& device) : device_(device) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = device.command_pool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  error_ = device.note_result(vkAllocateCommandBuffers(device.handle(), &ai, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (error_) error_ = device.note_result(vkCreateFence(device.handle(), &fci, nullptr, &fence_), "vkCreateFence");
}

Recorder::~Recorder() {
  VkDevice d = device_.handle();
  if (pending_) vkWaitForFences(d, 1, &fence_, VK_TRUE, UINT64_MAX);
  for (VkDescriptorPool p : pools_) vkDestroyDescriptorPool(d, p, nullptr);
  if (queries_) vkDestroyQueryPool(d, queries_, nullptr);
  if (fence_) vkDestroyFence(d, fence_, nullptr);
  if (cmd_) vkFreeCommandBuffers(d, device_.command_pool(), 1, &cmd_);
}

Status Recorder::begin(bool timed) {
  if (!cmd_ || !fence_) return error_;
  if (device_.lost()) return Status::error("the Vulkan device was lost; reload the model");
  VkDevice d = device_.handle();
  if (pending_) {
    vkWaitForFences(d, 1, &fence_, VK_TRUE, UINT64_MAX);
    pending_ = false;
  }
  vkResetFences(d, 1, &fence_);
  for (VkDescriptorPool p : pools_) vkResetDescriptorPool(d, p, 0);
  pool_in_use_ = 0;
  error_ = Status::ok();
  // Grow the timestamp pool to the size the previous recording needed.
  const uint32_t wanted = std::max(kInitialQueries, dispatches_ + 1);
  if (device_.timestamps() && query_capacity_ < wanted) {
    if (queries_) vkDestroyQueryPool(d, queries_, nullptr);
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = wanted * 2;
    INFERSCOPE_RETURN_IF_ERROR(device_.note_result(vkCreateQueryPool(d, &qi, nullptr, &queries_), "vkCreateQueryPool"));
    query_capacity_ = qi.queryCount;
  }
  dispatches_ = 0;
  labels_.clear();
  vkResetCommandBuffer(cmd_, 0);
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  INFERSCOPE_RETURN_IF_ERROR(device_.note_result(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer"));
  timed_ = timed && queries_ != VK_NULL_HANDLE;
  if (timed_) vkCmdResetQueryPool(cmd_, queries_, 0, query_capacity_);
  return Status::ok();
}

VkDescriptorSet Recorder::allocate_set(const Kernel& k) {
  VkDevice d = device_.handle();
  for (;; ++pool_in_use_) {
    if (pool_in_use_ == pools_.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kBuffersPerPool};
      VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pi.maxSets = kSetsPerPool;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &size;
      VkDescriptorPool pool;
      Status s = device_.note_result(vkCreateDescriptorPool(d, &pi, nullptr, &pool), "vkCreateDescriptorPool");
      if (!s) {
        error_ = s;
        return VK_NULL_HANDLE;
      }
      pools_.push_back(pool);
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pools_[pool_in_use_];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &k.set_layout;
    VkDescriptorSet set;
    VkResult r = vkAllocateDescriptorSets(d, &ai, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) {
      error_ = device_.note_result(r, "vkAllocateDescriptorSets");
      return VK_NULL_HANDLE;
    }
  }
}

void Recorder::barrier() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cmd_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Recorder::dispatch(const Kernel& k, std::initializer_list<BufferSpan> bindings, const void* push,
                        uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz, DispatchLabel label) {
  if (!error_) return;
  if (bindings.size() != k.n_bindings) {
    error_ = Status::error("kernel " + k.name + " takes " + std::to_string(k.n_bindings) + " buffers, got " +
                           std::to_string(bindings.size()));
    return;
  }
  if (gx == 0 || gy == 0 || gz == 0) return;  // nothing to compute
  const uint32_t* max_count = device_.info().max_workgroup_count;
  if (gx > max_count[0] || gy > max_count[1] || gz > max_count[2]) {
    error_ = Status::error("kernel " + k.name + " dispatch of " + std::to_string(gx) + "x" + std::to_string(gy) + "x" +
                           std::to_string(gz) + " workgroups exceeds the device limit");
    return;
  }
  VkDescriptorSet set = allocate_set(k);
  if (!set) return;
  std::vector<VkDescriptorBufferInfo> infos;
  infos.reserve(bindings.size());
  for (const BufferSpan& b : bindings) {
    if (b.bytes() > device_.max_storage_buffer_range()) {
      error_ = Status::error("kernel " + k.name + " binds " + std::to_string(b.bytes()) +
                             " bytes, above maxStorageBufferRange");
      return;
    }
    infos.push_back({b.buffer->handle(), b.offset, b.bytes()});
  }
  std::vector<VkWriteDescriptorSet> writes(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device_.handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);

  barrier();
  const bool timed = timed_ && 2 * dispatches_ + 1 < query_capacity_;
  if (timed) vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 2 * dispatches_);
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &set, 0, nullptr);
  if (push_bytes) vkCmdPushConstants(cmd_, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(cmd_, gx, gy, gz);
  if (timed) vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 2 * dispatches_ + 1);
  labels_.push_back(label);
  ++dispatches_;
}

void Recorder::copy(const BufferSpan& src, const BufferSpan& dst, uint64_t bytes) {
  if (!error_) return;
  barrier();
  VkBufferCopy region{src.offset, dst.offset, bytes};
  vkCmdCopyBuffer(cmd_, src.buffer->handle(), dst.buffer->handle(), 1, &region);
}

void Recorder::zero(const BufferSpan& dst, uint64_t bytes) {
  if (!error_) return;
  barrier();
  vkCmdFillBuffer(cmd_, dst.buffer->handle(), dst.offset, bytes, 0);
}

void Recorder::copy_regions(const Buffer& src, const Buffer& dst, std::span<const VkBufferCopy> regions) {
  if (!error_ || regions.empty()) return;
  barrier();
  vkCmdCopyBuffer(cmd_, src.handle(), dst.handle(), static_cast<uint32_t>(regions.size()), regions.data());
}

Status Recorder::discard() {
  vkEndCommandBuffer(cmd_);
  dispatches_ = 0;
  labels_.clear();
  return error_;
}

Status Recorder::submit_and_wait() {
  if (!error_) {
    vkEndCommandBuffer(cmd_);
    return error_;
  }
  VkDevice d = device_.handle();
  INFERSCOPE_RETURN_IF_ERROR(device_.note_result(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer"));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  INFERSCOPE_RETURN_IF_ERROR(device_.note_result(vkQueueSubmit(device_.queue(), 1, &si, fence_), "vkQueueSubmit"));
  ++submissions_;
  pending_ = true;
  INFERSCOPE_RETURN_IF_ERROR(device_.note_result(vkWaitForFences(d, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences"));
  pending_ = false;
  timings_.clear();
  const uint32_t timed = timed_ ? std::min(dispatches_, query_capacity_ / 2) : 0;
  if (timed > 0) {
    std::vector<uint64_t> stamps(2 * timed);
    VkResult r = vkGetQueryPoolResults(d, queries_, 0, 2 * timed, stamps.size() * sizeof(uint64_t), stamps.data(),
                                       sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r == VK_SUCCESS) {
      const double ns = device_.info().timestamp_period_ns;
      timings_.reserve(timed);
      for (uint32_t i = 0; i < timed; ++i) {
        const uint64_t t0 = stamps[2 * i], t1 = stamps[2 * i + 1];
        timings_.push_back({labels_[i], t1 > t0 ? static_cast<double>(t1 - t0) * ns * 1e-9 : 0.0});
      }
    }
  }
  return Status::ok();
}

}  // namespace inferscope::vulkan

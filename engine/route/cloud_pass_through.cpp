#include "engine/route/cloud_pass_through.h"

#include <thread>

namespace inferscope::route {

std::shared_ptr<CloudPassThrough> CloudPassThrough::start(route::CloudClient cloud, std::string api_path,
                                                          std::string body) {
  auto pipe = std::make_shared<CloudPassThrough>();
  std::thread([pipe, cloud = std::move(cloud), api_path = std::move(api_path), body = std::move(body)] {
    const Status sent = cloud.forward(
        api_path, body,
        [&](int status, const std::string& content_type) {
          std::lock_guard lock(pipe->mutex_);
          pipe->status_ = status;
          pipe->content_type_ = content_type;
          pipe->ready_.notify_all();
        },
        [&](const char* data, std::size_t size) {
          std::lock_guard lock(pipe->mutex_);
          if (pipe->abandoned_) return false;
          pipe->bytes_.append(data, size);
          pipe->ready_.notify_all();
          return true;
        });
    std::lock_guard lock(pipe->mutex_);
    if (!sent) pipe->error_ = sent.message();
    pipe->done_ = true;
    pipe->ready_.notify_all();
  }).detach();
  return pipe;
}

bool CloudPassThrough::wait_for_head(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return status_ != 0 || done_; });
  if (status_ == 0 && error_.empty()) error_ = done_ ? "the cloud tier sent no reply" : "the cloud tier did not answer in time";
  return status_ != 0;
}

int CloudPassThrough::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

std::string CloudPassThrough::content_type() const {
  std::lock_guard lock(mutex_);
  return content_type_;
}

std::string CloudPassThrough::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

std::string CloudPassThrough::take(std::chrono::milliseconds timeout, bool& done) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return !bytes_.empty() || done_; });
  std::string taken;
  taken.swap(bytes_);
  done = done_;
  return taken;
}

void CloudPassThrough::abandon() {
  std::lock_guard lock(mutex_);
  abandoned_ = true;
}

}  // namespace inferscope::route

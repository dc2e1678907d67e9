// Hands a cloud tier's reply to the HTTP thread answering the client, unchanged: a thread of
// its own runs the forwarded request (route::CloudClient::forward) and queues the status, the
// content type and the bytes as they arrive; the HTTP thread waits for the head, then streams
// or sends the bytes. A client that goes away stops the transfer. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "engine/route/cloud_client.h"

namespace inferscope::route {

class CloudPassThrough {
 public:
  // Starts forwarding `body` to the tier's `api_path` on a detached thread.
  static std::shared_ptr<CloudPassThrough> start(route::CloudClient cloud, std::string api_path, std::string body);

  // Waits up to `timeout` for the status line; false when the transfer failed first (error()).
  bool wait_for_head(std::chrono::milliseconds timeout);
  int status() const;
  std::string content_type() const;
  std::string error() const;
  // The bytes received since the last call, waiting up to `timeout`; `done` once all came.
  std::string take(std::chrono::milliseconds timeout, bool& done);
  void abandon();

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  int status_ = 0;
  std::string content_type_;
  std::string bytes_;
  std::string error_;
  bool done_ = false;
  bool abandoned_ = false;
};

}  // namespace inferscope::route

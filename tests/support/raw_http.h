// A minimal HTTP/1.1 client over a socket of its own ("Connection: close", read to the end), for
// the server's tests and bench: what the server sent, raw. cpp-httplib 0.11's client sometimes
// fails to read a reply when dozens of its clients in one process connect at once (Python's and
// curl's clients do not), so the concurrency test and the bench speak HTTP themselves.
#pragma once

#include <functional>
#include <string>

namespace inferscope::testing {

struct RawReply {
  int status = 0;    // 0 when the connection failed or the reply had no status line
  std::string text;  // everything received: status line, headers, body as sent
};

// POSTs `body` (JSON) to 127.0.0.1:port; on_data sees each piece as it arrives.
RawReply raw_post(int port, const std::string& path, const std::string& body,
                  const std::function<void(const std::string&)>& on_data = {});
// The body after the headers (as sent: a chunked body keeps its chunk framing).
std::string raw_body(const RawReply& reply);

}  // namespace inferscope::testing

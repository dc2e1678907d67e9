#include "tests/support/raw_http.h"

#include <netinet/in.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace inferscope::testing {

RawReply raw_post(int port, const std::string& path, const std::string& body,
                  const std::function<void(const std::string&)>& on_data) {
  RawReply reply;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return reply;
  const timeval limit{120, 0};  // a server that stops answering fails the test instead of hanging it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::string request = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                              "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                              "\r\n\r\n" + body;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buffer[16384];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) {
      const std::string piece(buffer, static_cast<std::size_t>(n));
      if (on_data) on_data(piece);
      reply.text += piece;
    }
  }
  ::close(fd);
  if (reply.text.rfind("HTTP/1.1 ", 0) == 0 && reply.text.size() >= 12) reply.status = std::stoi(reply.text.substr(9, 3));
  return reply;
}

std::string raw_body(const RawReply& reply) {
  const std::size_t at = reply.text.find("\r\n\r\n");
  return at == std::string::npos ? std::string() : reply.text.substr(at + 4);
}

}  // namespace inferscope::testing

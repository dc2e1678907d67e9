// The input layout of the template fuzzers, chosen so that a seed is a plain template file:
// the template is everything before the first NUL byte; after it come messages separated by
// NUL, each one's first byte choosing its role. Without a NUL the conversation is a fixed one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::fuzz {

struct FuzzMessage {
  std::string role;
  std::string content;
};

struct TemplateInput {
  std::string_view source;
  std::vector<FuzzMessage> messages;
};

inline TemplateInput split_template_input(std::string_view bytes) {
  static const char* const kRoles[] = {"system", "user", "assistant", "tool", "user", "assistant", ""};
  TemplateInput input;
  const size_t end = bytes.find('\0');
  input.source = bytes.substr(0, end);
  if (end == std::string_view::npos) {
    input.messages = {{"system", "Be brief."}, {"user", "Hello!"}, {"assistant", "Hi."}, {"user", "A story?"}};
    return input;
  }
  for (size_t pos = end + 1; pos < bytes.size();) {
    const size_t next = std::min(bytes.find('\0', pos), bytes.size());
    const std::string_view part = bytes.substr(pos, next - pos);
    if (!part.empty()) {
      const auto pick = static_cast<unsigned char>(part[0]) % (sizeof kRoles / sizeof kRoles[0]);
      input.messages.push_back({kRoles[pick], std::string(part.substr(1))});
    }
    pos = next + 1;
  }
  return input;
}

}  // namespace inferscope::fuzz

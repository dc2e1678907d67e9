#include "engine/store/message_role.h"

#include <array>
#include <utility>

namespace inferscope::store {
namespace {

constexpr std::array<std::pair<MessageRole, std::string_view>, 4> kRoleNames = {{
    {MessageRole::system, "system"},
    {MessageRole::user, "user"},
    {MessageRole::assistant, "assistant"},
    {MessageRole::tool, "tool"},
}};

}  // namespace

std::string_view role_name(MessageRole role) {
  for (const auto& [known, name] : kRoleNames) {
    if (known == role) return name;
  }
  return "unknown";
}

std::optional<MessageRole> role_from_name(std::string_view name) {
  for (const auto& [role, known] : kRoleNames) {
    if (known == name) return role;
  }
  return std::nullopt;
}

}  // namespace inferscope::store

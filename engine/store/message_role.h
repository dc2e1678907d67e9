// Who wrote a message, and its spelling in the database's `role` column.
#pragma once

#include <optional>
#include <string_view>

namespace inferscope::store {

enum class MessageRole { system, user, assistant, tool };

std::string_view role_name(MessageRole role);
std::optional<MessageRole> role_from_name(std::string_view name);

}  // namespace inferscope::store

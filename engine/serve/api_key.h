// Who may call the server: loopback needs no key unless one is set; any other address needs
// one (ServerOptions). Keys are compared in constant time.
#pragma once

#include <string_view>

namespace inferscope::serve {

// 127.0.0.0/8, ::1 or "localhost".
bool is_loopback_host(std::string_view host);
// `given` == `expected`, taking the same time for every `given` of a length.
bool same_key(std::string_view given, std::string_view expected);
// The key of an "Authorization: Bearer KEY" header value; "" when it has another form.
std::string_view bearer_token(std::string_view authorization);

}  // namespace inferscope::serve

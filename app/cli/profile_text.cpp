#include "app/cli/profile_text.h"

#include <cstdio>

namespace inferscope::cli {

void add_profile(OpProfile& total, const OpProfile& run) {
  for (size_t i = 0; i < total.seconds.size(); ++i) total.seconds[i] += run.seconds[i];
}

std::string profile_text(const OpProfile& p) {
  double sum = 0;
  for (double s : p.seconds) sum += s;
  std::string out;
  for (size_t i = 0; i < p.seconds.size(); ++i) {
    if (p.seconds[i] <= 0 || sum <= 0) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.1f%%", out.empty() ? "" : ", ", op_kind_name(static_cast<OpKind>(i)),
                  100.0 * p.seconds[i] / sum);
    out += buf;
  }
  return out;
}

}  // namespace inferscope::cli

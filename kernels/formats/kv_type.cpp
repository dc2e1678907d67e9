#include "kernels/formats/kv_type.h"

namespace inferscope::kernels {

const float kNf4Levels[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

namespace {

struct KvTypeName {
  KvType type;
  std::string_view name;
};
constexpr KvTypeName kNames[] = {
    {KvType::F16, "f16"}, {KvType::Q8_0, "q8_0"}, {KvType::Q4_0, "q4_0"}, {KvType::NF4, "nf4"}, {KvType::Int4, "int4"},
};

}  // namespace

std::string_view kv_type_name(KvType type) {
  for (const auto& n : kNames) {
    if (n.type == type) return n.name;
  }
  return "?";
}

bool parse_kv_type(std::string_view name, KvType* type) {
  for (const auto& n : kNames) {
    if (n.name == name) {
      *type = n.type;
      return true;
    }
  }
  return false;
}

int64_t kv_row_granule(KvType type) { return type == KvType::F16 ? 2 : kKvBlock; }

int64_t kv_row_bytes(KvType type, int64_t n) {
  switch (type) {
    case KvType::F16: return 2 * n;
    case KvType::Q8_0: return n / kKvBlock * kKvQ8BlockBytes;
    case KvType::Q4_0:
    case KvType::NF4:
    case KvType::Int4: return n / kKvBlock * kKvNibbleBlockBytes;
  }
  return 0;
}

}  // namespace inferscope::kernels

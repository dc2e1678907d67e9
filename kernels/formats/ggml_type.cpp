// Block geometry of every GGUF type id (GGUF-FORMATS.md section 2).
#include "kernels/formats/ggml_type.h"

#include <array>
#include <cctype>
#include <string>

namespace inferscope::kernels {
namespace {

struct Entry {
  uint32_t id;
  TypeInfo info;
};

constexpr std::array<Entry, 36> kTypes = {{
    {0, {"f32", 1, 4, true}},         {1, {"f16", 1, 2, true}},
    {2, {"q4_0", 32, 18, true}},      {3, {"q4_1", 32, 20, true}},
    {6, {"q5_0", 32, 22, true}},     {7, {"q5_1", 32, 24, true}},
    {8, {"q8_0", 32, 34, true}},      {9, {"q8_1", 32, 36, false}},
    {10, {"q2_K", 256, 84, true}},   {11, {"q3_K", 256, 110, true}},
    {12, {"q4_K", 256, 144, true}},  {13, {"q5_K", 256, 176, true}},
    {14, {"q6_K", 256, 210, true}},  {15, {"q8_K", 256, 292, false}},
    {16, {"iq2_xxs", 256, 66, true}}, {17, {"iq2_xs", 256, 74, true}},
    {18, {"iq3_xxs", 256, 98, true}}, {19, {"iq1_s", 256, 50, true}},
    {20, {"iq4_nl", 32, 18, true}},  {21, {"iq3_s", 256, 110, true}},
    {22, {"iq2_s", 256, 82, true}},  {23, {"iq4_xs", 256, 136, true}},
    {24, {"i8", 1, 1, false}},        {25, {"i16", 1, 2, false}},
    {26, {"i32", 1, 4, false}},       {27, {"i64", 1, 8, false}},
    {28, {"f64", 1, 8, false}},       {29, {"iq1_m", 256, 56, true}},
    {30, {"bf16", 1, 2, true}},       {34, {"tq1_0", 256, 54, true}},
    {35, {"tq2_0", 256, 66, true}},   {39, {"mxfp4", 32, 17, true}},
    {40, {"nvfp4", 64, 36, true}},   {41, {"q1_0", 128, 18, true}},
    {42, {"q2_0", 64, 18, true}},
    {200, {"f16_2of4", 32, 36, true}},
}};

}  // namespace

std::optional<TypeInfo> type_info(uint32_t id) {
  for (const Entry& e : kTypes) {
    if (e.id == id) return e.info;
  }
  return std::nullopt;
}

TypeInfo type_info(GgmlType type) { return *type_info(static_cast<uint32_t>(type)); }

const char* type_name(GgmlType type) { return type_info(type).name; }

std::optional<GgmlType> type_from_name(const char* name) {
  std::string lower;
  for (const char* p = name; *p; ++p) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
  for (const Entry& e : kTypes) {
    std::string candidate;
    for (const char* p = e.info.name; *p; ++p) candidate += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
    if (candidate == lower) return static_cast<GgmlType>(e.id);
  }
  return std::nullopt;
}

}  // namespace inferscope::kernels

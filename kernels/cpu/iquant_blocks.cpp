#include "kernels/cpu/iquant_blocks.h"

#include "kernels/formats/fp16.h"
#include "kernels/formats/iq_grids.h"

namespace inferscope::kernels::detail {
namespace {

constexpr int8_t kIq4nlLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

// v[j] = point[j], negated where bit first + j of `signs` is set, for j < count.
template <class Point>
inline void signed_point(int8_t* v, const Point& point, uint8_t signs, int first, int count) {
  for (int j = 0; j < count; ++j) {
    const int c = point[static_cast<size_t>(j)];
    v[j] = static_cast<int8_t>((signs >> (first + j) & 1) ? -c : c);
  }
}

// Group ib (32 values) has one scale.
inline void group_scale(IqIntBlock* out, int ib, int scale) { out->scale[2 * ib] = out->scale[2 * ib + 1] = scale; }

// IQ1: the coordinate (-1, 0, 1) plus delta (+-1/8), times 8.
inline void iq1_point(int8_t* v, const std::array<int8_t, 8>& point, bool negative_delta) {
  for (int j = 0; j < 8; ++j) v[j] = static_cast<int8_t>(8 * point[static_cast<size_t>(j)] + (negative_delta ? -1 : 1));
}

// Scales d * (0.5 + s) * 0.25 = (d / 8) * (2s + 1).
void read_iq2_xxs(const uint8_t* block, IqIntBlock* out) {
  const IqGrids& g = iq_grids();
  out->unit = iq_unit<GgmlType::IQ2_XXS>(block);
  for (int ib = 0; ib < 8; ++ib) {
    const uint8_t* words = block + 2 + 8 * ib;
    const uint32_t signs = load_u32(words + 4);
    group_scale(out, ib, 2 * static_cast<int>(signs >> 28) + 1);
    for (int l = 0; l < 4; ++l) signed_point(out->v + 32 * ib + 8 * l, g.iq2xxs[words[l]], iq_signs(signs >> 7 * l), 0, 8);
  }
}

void read_iq2_xs(const uint8_t* block, IqIntBlock* out) {
  const IqGrids& g = iq_grids();
  out->unit = iq_unit<GgmlType::IQ2_XS>(block);
  const uint8_t* scales = block + 66;
  for (int ib = 0; ib < 8; ++ib) {
    out->scale[2 * ib] = 2 * (scales[ib] & 0xF) + 1;
    out->scale[2 * ib + 1] = 2 * (scales[ib] >> 4) + 1;
    for (int l = 0; l < 4; ++l) {
      const uint16_t q = load_u16(block + 2 + 2 * (4 * ib + l));
      signed_point(out->v + 32 * ib + 8 * l, g.iq2xs[q & 511], iq_signs(q >> 9), 0, 8);
    }
  }
}

void read_iq2_s(const uint8_t* block, IqIntBlock* out) {
  const IqGrids& g = iq_grids();
  out->unit = iq_unit<GgmlType::IQ2_S>(block);
  const uint8_t* qs = block + 2;
  const uint8_t* signs = qs + 32;
  const uint8_t* qh = block + 66;
  const uint8_t* scales = block + 74;
  for (int ib = 0; ib < 8; ++ib) {
    out->scale[2 * ib] = 2 * (scales[ib] & 0xF) + 1;
    out->scale[2 * ib + 1] = 2 * (scales[ib] >> 4) + 1;
    for (int l = 0; l < 4; ++l) {
      const int index = qs[4 * ib + l] | ((qh[ib] << (8 - 2 * l)) & 0x300);
      signed_point(out->v + 32 * ib + 8 * l, g.iq2s[static_cast<size_t>(index)], signs[4 * ib + l], 0, 8);
    }
  }
}

// Scales d * (0.5 + s) * 0.5 = (d / 4) * (2s + 1).
void read_iq3_xxs(const uint8_t* block, IqIntBlock* out) {
  const IqGrids& g = iq_grids();
  out->unit = iq_unit<GgmlType::IQ3_XXS>(block);
  const uint8_t* qs = block + 2;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t word = load_u32(qs + 64 + 4 * ib);
    group_scale(out, ib, 2 * static_cast<int>(word >> 28) + 1);
    for (int l = 0; l < 4; ++l) {
      const uint8_t signs = iq_signs(word >> 7 * l);
      int8_t* v = out->v + 32 * ib + 8 * l;
      signed_point(v, g.iq3xxs[qs[8 * ib + 2 * l]], signs, 0, 4);
      signed_point(v + 4, g.iq3xxs[qs[8 * ib + 2 * l + 1]], signs, 4, 4);
    }
  }
}

// Scales d * (1 + 2 * nibble).
void read_iq3_s(const uint8_t* block, IqIntBlock* out) {
  const IqGrids& g = iq_grids();
  out->unit = iq_unit<GgmlType::IQ3_S>(block);
  const uint8_t* qs = block + 2;
  const uint8_t* qh = block + 66;
  const uint8_t* signs = block + 74;
  const uint8_t* scales = block + 106;
  for (int ib = 0; ib < 8; ++ib) {
    const int nibble = ib % 2 == 0 ? scales[ib / 2] & 0xF : scales[ib / 2] >> 4;
    group_scale(out, ib, 2 * nibble + 1);
    for (int l = 0; l < 4; ++l) {
      const int i1 = qs[8 * ib + 2 * l] | ((qh[ib] << (8 - 2 * l)) & 256);
      const int i2 = qs[8 * ib + 2 * l + 1] | ((qh[ib] << (7 - 2 * l)) & 256);
      int8_t* v = out->v + 32 * ib + 8 * l;
      signed_point(v, g.iq3s[static_cast<size_t>(i1)], signs[4 * ib + l], 0, 4);
      signed_point(v + 4, g.iq3s[static_cast<size_t>(i2)], signs[4 * ib + l], 4, 4);
    }
  }
}

// d * (2s + 1) * (coordinate + delta) = (d / 8) * (2s + 1) * (8 coordinate +- 1).
void read_iq1_s(const uint8_t* block, IqIntBlock* out) {
  const IqGrids& g = iq_grids();
  out->unit = iq_unit<GgmlType::IQ1_S>(block);
  const uint8_t* qs = block + 2;
  for (int ib = 0; ib < 8; ++ib) {
    const uint16_t qh = load_u16(block + 34 + 2 * ib);
    group_scale(out, ib, 2 * ((qh >> 12) & 7) + 1);
    for (int l = 0; l < 4; ++l) {
      iq1_point(out->v + 32 * ib + 8 * l, g.iq1s[static_cast<size_t>(qs[4 * ib + l] | (((qh >> 3 * l) & 7) << 8))],
                (qh & 0x8000) != 0);
    }
  }
}

void read_iq1_m(const uint8_t* block, IqIntBlock* out) {
  const IqGrids& g = iq_grids();
  const uint8_t* qs = block;
  const uint8_t* qh = block + 32;
  uint16_t sc[4];
  for (int i = 0; i < 4; ++i) sc[i] = load_u16(block + 48 + 2 * i);
  out->unit = iq_unit<GgmlType::IQ1_M>(block);
  for (int ib = 0; ib < 8; ++ib) {
    out->scale[2 * ib] = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 7) + 1;
    out->scale[2 * ib + 1] = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1;
    const uint8_t h0 = qh[2 * ib], h1 = qh[2 * ib + 1];
    const int index[4] = {qs[4 * ib] | ((h0 << 8) & 0x700), qs[4 * ib + 1] | ((h0 << 4) & 0x700),
                          qs[4 * ib + 2] | ((h1 << 8) & 0x700), qs[4 * ib + 3] | ((h1 << 4) & 0x700)};
    const bool negative[4] = {(h0 & 0x08) != 0, (h0 & 0x80) != 0, (h1 & 0x08) != 0, (h1 & 0x80) != 0};
    for (int l = 0; l < 4; ++l) iq1_point(out->v + 32 * ib + 8 * l, g.iq1s[static_cast<size_t>(index[l])], negative[l]);
  }
}

// Scales d * (ls - 32), values the IQ4_NL levels.
void read_iq4_xs(const uint8_t* block, IqIntBlock* out) {
  out->unit = iq_unit<GgmlType::IQ4_XS>(block);
  const uint16_t scales_h = load_u16(block + 2);
  const uint8_t* scales_l = block + 4;
  const uint8_t* qs = block + 8;
  for (int ib = 0; ib < 8; ++ib, qs += 16) {
    group_scale(out, ib, (((scales_l[ib / 2] >> 4 * (ib % 2)) & 0xF) | (((scales_h >> 2 * ib) & 3) << 4)) - 32);
    for (int j = 0; j < 16; ++j) {
      out->v[32 * ib + j] = kIq4nlLevels[qs[j] & 0xF];
      out->v[32 * ib + j + 16] = kIq4nlLevels[qs[j] >> 4];
    }
  }
}

}  // namespace

bool is_iq_block_type(GgmlType type) { return is_grid_iquant(type) || type == GgmlType::IQ4_XS; }

int iq_max_level(GgmlType type) {
  switch (type) {
    case GgmlType::IQ1_S:
    case GgmlType::IQ1_M: return 9;
    case GgmlType::IQ2_XXS:
    case GgmlType::IQ2_XS:
    case GgmlType::IQ2_S: return 43;
    case GgmlType::IQ3_XXS: return 62;
    case GgmlType::IQ3_S: return 15;
    case GgmlType::IQ4_XS: return 127;
    default: return 0;
  }
}

void read_iq_block(GgmlType type, const uint8_t* blk, IqIntBlock* out) {
  switch (type) {
    case GgmlType::IQ1_S: read_iq1_s(blk, out); break;
    case GgmlType::IQ1_M: read_iq1_m(blk, out); break;
    case GgmlType::IQ2_XXS: read_iq2_xxs(blk, out); break;
    case GgmlType::IQ2_XS: read_iq2_xs(blk, out); break;
    case GgmlType::IQ2_S: read_iq2_s(blk, out); break;
    case GgmlType::IQ3_XXS: read_iq3_xxs(blk, out); break;
    case GgmlType::IQ3_S: read_iq3_s(blk, out); break;
    case GgmlType::IQ4_XS: read_iq4_xs(blk, out); break;
    default: break;
  }
}

}  // namespace inferscope::kernels::detail

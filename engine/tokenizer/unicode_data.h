// Raw Unicode tables, generated into unicode_data.cpp by tools/gen_unicode_data.py. Only
// unicode.cpp reads them; everything else goes through the functions in unicode.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace inferscope::tok::unicode_data {

// General category (index into GeneralCategory) from `first` up to the next range's first.
struct CategoryRange {
  uint32_t first;
  uint8_t category;
};
// Full canonical decomposition of `cp`: kDecompositionPool[offset .. offset + length).
struct Decomposition {
  uint32_t cp;
  uint16_t offset;
  uint8_t length;
};
struct CaseMapping {
  uint32_t from;
  uint32_t to;
};

extern const CategoryRange kCategoryRanges[];  // sorted by first, starts at 0
extern const size_t kCategoryRangeCount;
extern const Decomposition kDecompositions[];  // sorted by cp; Hangul syllables excluded
extern const size_t kDecompositionCount;
extern const uint32_t kDecompositionPool[];
extern const CaseMapping kLowercase[];  // sorted by from; one-to-one mappings only
extern const size_t kLowercaseCount;

}  // namespace inferscope::tok::unicode_data

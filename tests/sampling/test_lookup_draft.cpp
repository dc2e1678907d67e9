// Prompt-lookup drafting: the continuation of the latest earlier occurrence of the longest
// matching tail (3 tokens down to 1), capped at the draft length; nothing without a match.
#include <gtest/gtest.h>

#include <vector>

#include "engine/sampling/lookup_draft.h"

namespace inferscope {
namespace {

using Tokens = std::vector<int32_t>;

TEST(LookupDraft, ContinuesTheLatestEarlierOccurrenceOfTheLongestTail) {
  //                  0  1  2  3  4  5  6  7  8  9 10 11
  const Tokens context{1, 2, 3, 4, 5, 9, 2, 3, 7, 8, 2, 3};
  // Tail (2, 3) last occurred at 6..7, followed by 7 8 2 3; (9? no) the 3-token tail (8, 2, 3) never occurred.
  EXPECT_EQ(lookup_draft(context, 3, 4), (Tokens{7, 8, 2, 3}));
  EXPECT_EQ(lookup_draft(context, 3, 2), (Tokens{7, 8}));
  EXPECT_EQ(lookup_draft(context, 1, 3), (Tokens{7, 8, 2})) << "tail (3) last at 7";
}

TEST(LookupDraft, PrefersALongerMatchOverALaterShorterOne) {
  //                  0  1  2  3  4  5  6  7  8
  const Tokens context{5, 6, 7, 1, 9, 7, 2, 5, 6};
  // (5, 6) occurred at 0..1 (followed by 7 1 9): a 2-token match beats a later 1-token one.
  EXPECT_EQ(lookup_draft(context, 3, 3), (Tokens{7, 1, 9}));
}

TEST(LookupDraft, NothingWithoutAnEarlierOccurrence) {
  EXPECT_TRUE(lookup_draft(Tokens{1, 2, 3, 4}, 3, 4).empty());
  EXPECT_TRUE(lookup_draft(Tokens{}, 3, 4).empty());
  EXPECT_TRUE(lookup_draft(Tokens{7}, 3, 4).empty());
  EXPECT_TRUE(lookup_draft(Tokens{7, 7}, 3, 0).empty());
  EXPECT_EQ(lookup_draft(Tokens{7, 7}, 3, 4), (Tokens{7})) << "a run drafts itself";
}

}  // namespace
}  // namespace inferscope

// StopStrings: text is released only when no stop string can start in it, and the reply ends
// before the first stop string, across pieces.
#include <gtest/gtest.h>

#include "engine/reply/stop_strings.h"

namespace inferscope::reply {
namespace {

std::string run(StopStrings& stops, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& p : pieces) out += stops.push(p);
  return out + stops.flush();
}

TEST(StopStrings, EndsBeforeAStopStringSplitAcrossPieces) {
  StopStrings stops({"END"});
  EXPECT_EQ(run(stops, {"Once up", "on a time E", "N", "D and more"}), "Once upon a time ");
  EXPECT_TRUE(stops.stopped());
}

TEST(StopStrings, HoldsBackOnlyWhatCouldStartAStopString) {
  StopStrings stops({"\n\n", "User:"});
  EXPECT_EQ(stops.push("Hello U"), "Hello ");
  EXPECT_EQ(stops.push("s"), "");
  EXPECT_EQ(stops.push("a"), "Usa");  // "Usa" cannot become "User:"
  EXPECT_EQ(stops.push("!\n"), "!");
  EXPECT_EQ(stops.flush(), "\n");  // the end of the reply releases what was held
  EXPECT_FALSE(stops.stopped());
}

TEST(StopStrings, TheEarliestOfSeveralWins) {
  StopStrings stops({"bb", "a"});
  EXPECT_EQ(run(stops, {"xxbbya"}), "xx");
  StopStrings none({});
  EXPECT_EQ(run(none, {"any ", "text"}), "any text");
}

}  // namespace
}  // namespace inferscope::reply

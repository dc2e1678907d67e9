// Presets: save (insert and overwrite), load, list by name, delete, JSON validation.
#include <gtest/gtest.h>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::scratch_file;
using testing::test_options;

TEST(Presets, SaveLoadListOverwriteDelete) {
  Result<Store> store = Store::open(scratch_file("presets"), test_options());
  ASSERT_TRUE(store) << store.message();
  PresetsRepo presets = store->presets();
  ASSERT_TRUE(presets.save("precise", R"({"temperature": 0.1, "top_k": 1})"));
  ASSERT_TRUE(presets.save("creative", R"({"temperature": 1.2})"));

  Result<Preset> precise = presets.load("precise");
  ASSERT_TRUE(precise) << precise.message();
  EXPECT_EQ(precise->settings_json, R"({"temperature": 0.1, "top_k": 1})");

  ASSERT_TRUE(presets.save("precise", R"({"temperature": 0})"));
  Result<Preset> overwritten = presets.load("precise");
  ASSERT_TRUE(overwritten) << overwritten.message();
  EXPECT_EQ(overwritten->settings_json, R"({"temperature": 0})");
  EXPECT_GT(overwritten->updated_at, precise->updated_at);

  Result<std::vector<Preset>> listed = presets.list();
  ASSERT_TRUE(listed) << listed.message();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "creative");
  EXPECT_EQ((*listed)[1].name, "precise");

  ASSERT_TRUE(presets.remove("creative"));
  EXPECT_FALSE(presets.load("creative"));
  Status again = presets.remove("creative");
  ASSERT_FALSE(again);
  EXPECT_NE(again.message().find("no preset with that name"), std::string::npos) << again.message();
}

TEST(Presets, RefusesInvalidJsonAndEmptyNames) {
  Result<Store> store = Store::open(scratch_file("presets-invalid"), test_options());
  ASSERT_TRUE(store) << store.message();
  Status invalid = store->presets().save("broken", "{temperature: ");
  ASSERT_FALSE(invalid);
  EXPECT_NE(invalid.message().find("not valid JSON"), std::string::npos) << invalid.message();
  EXPECT_FALSE(store->presets().save("", "{}"));
  Result<std::vector<Preset>> listed = store->presets().list();
  ASSERT_TRUE(listed) << listed.message();
  EXPECT_TRUE(listed->empty());
}

}  // namespace
}  // namespace inferscope::store

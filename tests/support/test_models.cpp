#include "tests/support/test_models.h"

#include <gtest/gtest.h>

#include "tests/support/testdata.h"

namespace inferscope::testing {

std::shared_ptr<const Model> load_test_model(const std::string& relative) {
  auto model = Model::load(testdata(relative));
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

}  // namespace inferscope::testing

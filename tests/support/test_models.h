// A model of the shared test data, loaded for a test.
#pragma once

#include <memory>
#include <string>

#include "engine/model/model.h"

namespace inferscope::testing {

// testdata(relative) loaded; fails the running test (and returns null) when it cannot be.
std::shared_ptr<const Model> load_test_model(const std::string& relative);

}  // namespace inferscope::testing

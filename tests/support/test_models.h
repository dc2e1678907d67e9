// A model of the shared test data, loaded for a test, and a session on it.
#pragma once

#include <memory>
#include <string>

#include "engine/model/model.h"
#include "engine/runtime/session.h"

namespace inferscope::testing {

// testdata(relative) loaded; fails the running test (and returns null) when it cannot be.
std::shared_ptr<const Model> load_test_model(const std::string& relative);

// A CPU session on `model` with a context of n_ctx and 2 threads; fails the running test (and
// returns null) when it cannot be made.
std::unique_ptr<Session> open_test_session(std::shared_ptr<const Model> model, int64_t n_ctx = 256);

// The same on `backend` ("cpu", "vulkan", ...), device 0.
std::unique_ptr<Session> open_backend_session(std::shared_ptr<const Model> model, const std::string& backend,
                                              int64_t n_ctx = 256);

}  // namespace inferscope::testing

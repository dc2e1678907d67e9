#include "tests/support/test_models.h"

#include <gtest/gtest.h>

#include "tests/support/testdata.h"

namespace inferscope::testing {

std::shared_ptr<const Model> load_test_model(const std::string& relative) {
  auto model = Model::load(testdata(relative));
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

std::unique_ptr<Session> open_test_session(std::shared_ptr<const Model> model, int64_t n_ctx) {
  return open_backend_session(std::move(model), "cpu", n_ctx);
}

std::unique_ptr<Session> open_backend_session(std::shared_ptr<const Model> model, const std::string& backend,
                                              int64_t n_ctx) {
  SessionOptions so;
  so.n_ctx = n_ctx;
  so.n_threads = 2;
  so.backend.backend = backend;
  auto s = Session::create(std::move(model), so);
  EXPECT_TRUE(s) << s.message();
  return s ? std::move(*s) : nullptr;
}

}  // namespace inferscope::testing

#include "tests/support/stories_server.h"

#include <gtest/gtest.h>

#include "tests/support/testdata.h"

namespace inferscope::testing {

std::shared_ptr<const Model> stories_model() {
  static const std::shared_ptr<const Model> model = [] {
    auto loaded = Model::load(testdata("stories260K.gguf"));
    EXPECT_TRUE(loaded) << loaded.message();
    return loaded ? *loaded : nullptr;
  }();
  return model;
}

std::unique_ptr<serve::OpenAiServer> start_stories_server(serve::ServerOptions options) {
  options.port = 0;
  options.session.n_threads = 1;
  auto server = serve::OpenAiServer::start(stories_model(), std::move(options));
  EXPECT_TRUE(server) << server.message();
  return server ? std::move(*server) : nullptr;
}

}  // namespace inferscope::testing

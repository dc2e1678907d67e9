// An OpenAI-compatible server on loopback for the tests (engine/serve): stories260K on any free
// port, one thread, with whatever else `options` sets. Plays the cloud tier in the routing tests.
#pragma once

#include <memory>

#include "engine/serve/openai_server.h"

namespace inferscope::testing {

std::shared_ptr<const Model> stories_model();
// Fails the test (and returns null) when the server cannot start.
std::unique_ptr<serve::OpenAiServer> start_stories_server(serve::ServerOptions options = {});

}  // namespace inferscope::testing

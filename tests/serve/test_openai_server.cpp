// The OpenAI-compatible server on 127.0.0.1 (a free port), driven by cpp-httplib's client: every
// endpoint's wire format (streamed and whole), replies and logprobs equal to the engine's own
// for the same request, bad input answered with 4xx error objects, API keys, the body limit,
// 64 concurrent clients against a bounded queue, a request joining a running batch, and a client
// that goes away mid-stream.
#include <httplib.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/chat/chat_prompt.h"
#include "engine/embedding/embedder.h"
#include "engine/serve/openai_server.h"
#include "tests/support/raw_http.h"
#include "tests/support/stories_server.h"

namespace inferscope::serve {
namespace {

using nlohmann::json;

std::shared_ptr<const Model> stories() { return testing::stories_model(); }

ServerOptions loopback(int parallel = 1, std::size_t queue = 16) {
  ServerOptions o;
  o.port = 0;
  o.parallel = parallel;
  o.max_waiting = queue;
  o.session.n_threads = 1;
  return o;
}

std::unique_ptr<OpenAiServer> serve(ServerOptions options = loopback()) {
  auto server = OpenAiServer::start(stories(), std::move(options));
  EXPECT_TRUE(server) << server.message();
  return server ? std::move(*server) : nullptr;
}

httplib::Client client(const OpenAiServer& server) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(std::chrono::seconds(60));
  return c;
}

json post_json(httplib::Client& c, const std::string& path, const json& body, int expected_status) {
  auto res = c.Post(path, body.dump(), "application/json");
  EXPECT_TRUE(res) << httplib::to_string(res.error());
  if (!res) return {};
  EXPECT_EQ(res->status, expected_status) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  return json::parse(res->body, nullptr, false);
}

// The data of each "data: ...\n\n" event of an SSE body, checking the framing.
std::vector<std::string> sse_events(const std::string& body) {
  std::vector<std::string> events;
  std::size_t at = 0;
  while (at < body.size()) {
    EXPECT_EQ(body.compare(at, 6, "data: "), 0) << "at " << at << ": " << body.substr(at, 40);
    const std::size_t end = body.find("\n\n", at);
    EXPECT_NE(end, std::string::npos);
    if (end == std::string::npos) break;
    events.push_back(body.substr(at + 6, end - at - 6));
    at = end + 2;
  }
  return events;
}

// The engine's own greedy reply to the same conversation (what the CLI's generate --chat does).
GenerateResult engine_reply(const std::vector<ChatMessage>& messages, int max_tokens, int top_logprobs, bool chat) {
  auto session = Session::create(stories(), loopback().session);
  EXPECT_TRUE(session);
  GenerateRequest request;
  if (chat) {
    auto tmpl = ChatTemplate::for_chat(stories()->file(), stories()->tokenizer());
    auto prompt = build_chat_prompt(stories()->tokenizer(), *tmpl, messages, (*session)->n_ctx(), max_tokens);
    request = prompt->request;
  } else {
    request.prompt = messages.front().content;
  }
  request.max_tokens = max_tokens;
  request.sampling.temperature = 0;
  request.top_logprobs = top_logprobs;
  auto r = (*session)->generate(request);
  EXPECT_TRUE(r) << r.message();
  return *r;
}

const json kStoryChat = {{"messages", {{{"role", "user"}, {"content", "Tell me a story about a cat."}}}},
                         {"max_tokens", 24},
                         {"temperature", 0}};

TEST(OpenAiServer, HealthAndModels) {
  auto server = serve();
  ASSERT_TRUE(server);
  auto c = client(*server);
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body)["status"], "ok");
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  const json m = json::parse(models->body);
  EXPECT_EQ(m["object"], "list");
  EXPECT_EQ(m["data"][0]["id"], "stories260K.gguf");
  EXPECT_EQ(m["data"][0]["object"], "model");
}

TEST(OpenAiServer, ChatCompletionIsTheEnginesReplyWholeAndStreamed) {
  auto server = serve();
  ASSERT_TRUE(server);
  auto c = client(*server);
  const json whole = post_json(c, "/v1/chat/completions", kStoryChat, 200);
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(whole["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(whole["model"], "stories260K.gguf");
  const json& choice = whole["choices"][0];
  EXPECT_EQ(choice["index"], 0);
  EXPECT_EQ(choice["message"]["role"], "assistant");
  const GenerateResult reference = engine_reply({{"user", "Tell me a story about a cat."}}, 24, 0, true);
  EXPECT_EQ(choice["message"]["content"], reference.text);
  EXPECT_EQ(choice["finish_reason"], reference.stop_reason == "max_tokens" ? "length" : "stop");
  EXPECT_EQ(whole["usage"]["completion_tokens"], reference.token_ids.size());
  EXPECT_EQ(whole["usage"]["prompt_tokens"], reference.prompt_token_ids.size());
  EXPECT_EQ(whole["usage"]["total_tokens"], reference.token_ids.size() + reference.prompt_token_ids.size());

  json streamed = kStoryChat;
  streamed["stream"] = true;
  auto res = c.Post("/v1/chat/completions", streamed.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<std::string> events = sse_events(res->body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  for (std::size_t i = 0; i + 1 < events.size(); ++i) {
    const json chunk = json::parse(events[i]);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    EXPECT_EQ(chunk["id"], json::parse(events[0])["id"]);
    const json& delta = chunk["choices"][0]["delta"];
    if (i == 0) {
      EXPECT_EQ(delta["role"], "assistant");
    }
    if (delta.contains("content")) text += delta["content"].get<std::string>();
    const bool last = i + 2 == events.size();
    EXPECT_EQ(chunk["choices"][0]["finish_reason"].is_null(), !last) << events[i];
    if (last) {
      EXPECT_EQ(chunk["usage"]["completion_tokens"], reference.token_ids.size());
    }
  }
  EXPECT_EQ(text, reference.text);
}

TEST(OpenAiServer, TextCompletionLogprobsAreTheEnginesTopLogprobs) {
  auto server = serve();
  ASSERT_TRUE(server);
  auto c = client(*server);
  const json body = {{"prompt", "Once upon a time"}, {"max_tokens", 8}, {"temperature", 0}, {"logprobs", 3}};
  const json r = post_json(c, "/v1/completions", body, 200);
  EXPECT_EQ(r["object"], "text_completion");
  const GenerateResult reference = engine_reply({{"user", "Once upon a time"}}, 8, 3, false);
  EXPECT_EQ(r["choices"][0]["text"], reference.text);
  const json& lp = r["choices"][0]["logprobs"];
  ASSERT_EQ(lp["top_logprobs"].size(), reference.steps.size());
  for (std::size_t i = 0; i < reference.steps.size(); ++i) {
    ASSERT_EQ(lp["top_logprobs"][i].size(), 3u);
    for (const TokenLogprob& alt : reference.steps[i]) {
      const std::string piece = stories()->tokenizer().token_to_piece(alt.id);
      EXPECT_FLOAT_EQ(lp["top_logprobs"][i][piece].get<float>(), alt.logprob) << "step " << i;
    }
    EXPECT_FLOAT_EQ(lp["token_logprobs"][i].get<float>(), reference.steps[i][0].logprob);  // greedy: the top one
  }

  const json chat = post_json(c, "/v1/chat/completions",
                              {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4},
                               {"temperature", 0}, {"logprobs", true}, {"top_logprobs", 2}},
                              200);
  const json& content = chat["choices"][0]["logprobs"]["content"];
  ASSERT_FALSE(content.empty());
  EXPECT_EQ(content[0]["top_logprobs"].size(), 2u);
  EXPECT_EQ(content[0]["logprob"], content[0]["top_logprobs"][0]["logprob"]);
}

TEST(OpenAiServer, EmbeddingsAreTheEmbeddersVectors) {
  auto server = serve();
  ASSERT_TRUE(server);
  auto c = client(*server);
  const json r = post_json(c, "/v1/embeddings", {{"input", {"a cat", "a dog"}}}, 200);
  EXPECT_EQ(r["object"], "list");
  ASSERT_EQ(r["data"].size(), 2u);
  auto embedder = Embedder::create(stories(), {});
  ASSERT_TRUE(embedder);
  auto cat = (*embedder)->embed("a cat");
  ASSERT_TRUE(cat);
  ASSERT_EQ(r["data"][0]["embedding"].size(), cat->values.size());
  for (std::size_t i = 0; i < cat->values.size(); ++i) {
    EXPECT_NEAR(r["data"][0]["embedding"][i].get<float>(), cat->values[i], 1e-5f);
  }
  EXPECT_EQ(r["data"][1]["index"], 1);
}

TEST(OpenAiServer, BadInputGetsAnOpenAiErrorObject) {
  auto server = serve();
  ASSERT_TRUE(server);
  auto c = client(*server);
  auto raw = c.Post("/v1/chat/completions", "{\"messages\": [", "application/json");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->status, 400);
  EXPECT_EQ(json::parse(raw->body)["error"]["type"], "invalid_request_error");
  json wrong = kStoryChat;
  wrong["max_tokens"] = "many";
  EXPECT_EQ(post_json(c, "/v1/chat/completions", wrong, 400)["error"]["param"], "max_tokens");
  json unknown = kStoryChat;
  unknown["model"] = "gpt-9";
  EXPECT_EQ(post_json(c, "/v1/chat/completions", unknown, 404)["error"]["code"], "not_found");
  EXPECT_EQ(post_json(c, "/v1/completions", {{"prompt", std::string(20000, 'a')}}, 400)["error"]["param"], "prompt");
  auto missing = c.Get("/v1/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_TRUE(json::parse(missing->body)["error"].is_object());
  auto huge = c.Post("/v1/chat/completions", std::string(2 << 20, ' '), "application/json");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
  auto health = c.Get("/health");  // still up
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST(OpenAiServer, AnApiKeyServerRefusesMissingAndWrongKeys) {
  ServerOptions options = loopback();
  options.api_key = "s3cret";
  auto server = serve(options);
  ASSERT_TRUE(server);
  auto c = client(*server);
  EXPECT_EQ(post_json(c, "/v1/chat/completions", kStoryChat, 401)["error"]["type"], "authentication_error");
  c.set_bearer_token_auth("wrong");
  EXPECT_EQ(post_json(c, "/v1/chat/completions", kStoryChat, 401)["error"]["code"], "invalid_api_key");
  c.set_bearer_token_auth("s3cret");
  post_json(c, "/v1/chat/completions", kStoryChat, 200);

  ServerOptions open = loopback();
  open.host = "0.0.0.0";
  auto refused = OpenAiServer::start(stories(), open);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("needs an API key"), std::string::npos) << refused.message();
}

TEST(OpenAiServer, SixtyFourClientsGetRepliesOr503AndTheServerStaysUp) {
  auto server = serve(loopback(/*parallel=*/4, /*queue=*/8));
  ASSERT_TRUE(server);
  std::atomic<int> ok{0}, busy{0}, other{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 64; ++i) {
    clients.emplace_back([&, i] {
      json body = kStoryChat;
      body["max_tokens"] = 16;
      body["stream"] = i % 2 == 0;
      const testing::RawReply reply = testing::raw_post(server->port(), "/v1/chat/completions", body.dump());
      const bool streamed_whole = reply.text.find("Content-Type: text/event-stream") != std::string::npos &&
                                  reply.text.find("data: [DONE]\n\n") != std::string::npos;
      const json whole = json::parse(testing::raw_body(reply), nullptr, false);
      if (reply.status == 200 && (body["stream"] ? streamed_whole : whole.contains("choices"))) {
        ok += 1;
      } else if (reply.status == 503 && reply.text.find("Retry-After: 1") != std::string::npos &&
                 whole.is_object() && whole["error"]["code"] == "overloaded") {
        busy += 1;
      } else {
        other += 1;
        ADD_FAILURE() << "client " << i << ": " << reply.text.substr(0, 400);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(ok + busy, 64);
  EXPECT_GE(ok.load(), 12);  // the running four and the queue of eight at least
  auto c = client(*server);
  post_json(c, "/v1/chat/completions", kStoryChat, 200);
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("inferscope_requests_total{endpoint=\"/v1/chat/completions\",status=\"503\"}") !=
                std::string::npos,
            busy.load() > 0);
  EXPECT_NE(metrics->body.find("inferscope_time_to_first_token_ms_bucket{le=\"+Inf\"}"), std::string::npos);
}

// The generated-tokens counter of GET /metrics.
long generated_tokens(httplib::Client& c) {
  auto metrics = c.Get("/metrics");
  if (!metrics) return -1;
  const std::string key = "\ninferscope_generated_tokens_total ";
  const std::size_t at = metrics->body.find(key);
  return at == std::string::npos ? -1 : std::stol(metrics->body.substr(at + key.size()));
}

TEST(OpenAiServer, AClientGoingAwayMidStreamFreesItsSequence) {
  constexpr int kLongReply = 4000;  // about two seconds of stories260K, with the context shifting
  ServerOptions options = loopback(/*parallel=*/1, /*queue=*/0);
  options.session.cache.context_shift = true;
  auto server = serve(options);
  ASSERT_TRUE(server);
  auto c = client(*server);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = json{{"prompt", "Once upon a time"}, {"max_tokens", kLongReply}, {"stream", true}}.dump();
  req.set_header("Content-Type", "application/json");
  int received = 0;
  req.content_receiver = [&](const char*, std::size_t, std::uint64_t, std::uint64_t) { return ++received < 2; };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  EXPECT_FALSE(c.send(req, res, error));  // the client hung up after its first chunk
  EXPECT_EQ(received, 2);

  // The one slot frees itself: a new request is served instead of refused (after a short wait
  // for the worker to notice).
  const json next = {{"prompt", "Hello"}, {"max_tokens", 4}};
  int status = 0;
  for (int attempt = 0; attempt < 100 && status != 200; ++attempt) {
    auto r = c.Post("/v1/completions", next.dump(), "application/json");
    status = r ? r->status : 0;
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(status, 200);
  const long generated = generated_tokens(c);
  EXPECT_GT(generated, 0);
  EXPECT_LT(generated, kLongReply / 2) << "the abandoned reply ran on";
}

// Continuous batching: a short request that arrives while a long one runs is answered while the
// long one is still running (it joins the running batch instead of waiting for it to end).
TEST(OpenAiServer, ARequestJoinsARunningBatch) {
  constexpr int kLongReply = 3000;
  ServerOptions options = loopback(/*parallel=*/2, /*queue=*/0);
  options.session.cache.context_shift = true;
  auto server = serve(options);
  ASSERT_TRUE(server);
  std::atomic<bool> long_started{false}, long_done{false};
  std::thread long_client([&] {
    const json body = {{"prompt", "Once upon a time"}, {"max_tokens", kLongReply}, {"stream", true}};
    const testing::RawReply reply = testing::raw_post(server->port(), "/v1/completions", body.dump(),
                                                      [&](const std::string&) { long_started = true; });
    long_done = true;
    EXPECT_EQ(reply.status, 200);
    EXPECT_NE(reply.text.find("data: [DONE]"), std::string::npos);
  });
  while (!long_started && !long_done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto c = client(*server);
  const json reply = post_json(c, "/v1/completions", {{"prompt", "Hello"}, {"max_tokens", 4}, {"temperature", 0}}, 200);
  const bool answered_while_the_long_one_ran = !long_done;
  long_client.join();
  EXPECT_TRUE(answered_while_the_long_one_ran) << "the short request waited for the long one to end";
  EXPECT_EQ(reply["usage"]["completion_tokens"], 4);
}

}  // namespace
}  // namespace inferscope::serve

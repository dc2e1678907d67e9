// The server's semantic cache (CompletionCache through OpenAiServer, stories260K as its own
// embedder): a question asked again is answered from the cache, whole and streamed, with the
// generated reply's text; a different system prompt, history, setting or endpoint is a miss;
// logprobs requests are never looked up; /metrics counts lookups, hits and entries; entries
// outlive the server in a database file.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/serve/openai_server.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/stories_server.h"

namespace inferscope::serve {
namespace {

using nlohmann::json;

std::unique_ptr<OpenAiServer> serve_cached(const std::string& database = "") {
  ServerOptions options;
  options.port = 0;
  options.session.n_threads = 1;
  options.semantic_cache = CompletionCacheOptions{database, {}};
  return testing::start_stories_server(options);
}

// One completion's reply: its status, X-Inferscope-Cache header and body.
struct Answer {
  int status = 0;
  std::string cache;  // "hit", "miss", "" (not looked up)
  std::string body;
};

Answer ask(const OpenAiServer& server, const std::string& path, const json& body) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(std::chrono::seconds(60));
  auto res = c.Post(path, body.dump(), "application/json");
  EXPECT_TRUE(res) << httplib::to_string(res.error());
  if (!res) return {};
  return {res->status, res->get_header_value("X-Inferscope-Cache"), res->body};
}

json chat(const std::string& question, const std::string& system = "") {
  json messages = json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  messages.push_back({{"role", "user"}, {"content", question}});
  return {{"messages", messages}, {"max_tokens", 16}, {"temperature", 0}};
}

std::string content_of(const std::string& body) { return json::parse(body)["choices"][0]["message"]["content"]; }

// The metric's value in a /metrics body; -1 when absent.
double metric(const OpenAiServer& server, const std::string& name) {
  httplib::Client c("127.0.0.1", server.port());
  auto res = c.Get("/metrics");
  if (!res) return -1;
  const std::string key = "\n" + name + " ";
  const std::size_t at = res->body.find(key);
  return at == std::string::npos ? -1 : std::stod(res->body.substr(at + key.size()));
}

TEST(CompletionCache, AQuestionAskedAgainIsAnsweredFromTheCacheWholeAndStreamed) {
  auto server = serve_cached();
  ASSERT_TRUE(server);
  const json question = chat("Tell me a story about a cat.");
  const Answer first = ask(*server, "/v1/chat/completions", question);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.cache, "miss");
  const std::string generated = content_of(first.body);
  ASSERT_FALSE(generated.empty());

  const Answer again = ask(*server, "/v1/chat/completions", question);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.cache, "hit");
  EXPECT_EQ(content_of(again.body), generated);
  const json usage = json::parse(again.body)["usage"];
  EXPECT_GT(usage["prompt_tokens"].get<int>(), 0);
  EXPECT_GT(usage["completion_tokens"].get<int>(), 0);

  json streamed = question;
  streamed["stream"] = true;
  const Answer live = ask(*server, "/v1/chat/completions", streamed);
  ASSERT_EQ(live.status, 200);
  EXPECT_EQ(live.cache, "hit");
  std::string text;
  std::size_t at = 0, events = 0;
  for (std::size_t end; (end = live.body.find("\n\n", at)) != std::string::npos; at = end + 2, ++events) {
    ASSERT_EQ(live.body.compare(at, 6, "data: "), 0) << live.body;
    const std::string data = live.body.substr(at + 6, end - at - 6);
    if (data == "[DONE]") break;
    const json chunk = json::parse(data);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    if (chunk["choices"][0]["delta"].contains("content")) text += chunk["choices"][0]["delta"]["content"];
  }
  EXPECT_EQ(text, generated);
  EXPECT_EQ(live.body.substr(at), "data: [DONE]\n\n");

  EXPECT_EQ(metric(*server, "inferscope_semantic_cache_lookups_total"), 3);
  EXPECT_EQ(metric(*server, "inferscope_semantic_cache_hits_total"), 2);
  EXPECT_NEAR(metric(*server, "inferscope_semantic_cache_hit_rate"), 2.0 / 3.0, 1e-6);
  EXPECT_EQ(metric(*server, "inferscope_semantic_cache_entries"), 1);
  EXPECT_EQ(metric(*server, "inferscope_generated_tokens_total"),
            json::parse(first.body)["usage"]["completion_tokens"].get<int>())
      << "the hits ran no generation";
}

TEST(CompletionCache, AnythingElseThatDecidesTheReplyIsAMiss) {
  auto server = serve_cached();
  ASSERT_TRUE(server);
  const std::string question = "Tell me a story about a cat.";
  ASSERT_EQ(ask(*server, "/v1/chat/completions", chat(question)).cache, "miss");
  ASSERT_EQ(ask(*server, "/v1/chat/completions", chat(question)).cache, "hit");

  EXPECT_EQ(ask(*server, "/v1/chat/completions", chat(question, "You are a pirate.")).cache, "miss");
  json history = chat(question);
  history["messages"].insert(history["messages"].begin(), {{{"role", "user"}, {"content", "Hi"}},
                                                           {{"role", "assistant"}, {"content", "Hello!"}}});
  EXPECT_EQ(ask(*server, "/v1/chat/completions", history).cache, "miss");
  json warmer = chat(question);
  warmer["temperature"] = 0.5;
  warmer["seed"] = 7;
  EXPECT_EQ(ask(*server, "/v1/chat/completions", warmer).cache, "miss");
  json longer = chat(question);
  longer["max_tokens"] = 8;
  EXPECT_EQ(ask(*server, "/v1/chat/completions", longer).cache, "miss");
  json stopped = chat(question);
  stopped["stop"] = {"."};
  EXPECT_EQ(ask(*server, "/v1/chat/completions", stopped).cache, "miss");
  const json text = {{"prompt", question}, {"max_tokens", 16}, {"temperature", 0}};
  EXPECT_EQ(ask(*server, "/v1/completions", text).cache, "miss") << "a text completion never shares a chat's reply";
  EXPECT_EQ(ask(*server, "/v1/completions", text).cache, "hit");

  json logprobs = chat(question);
  logprobs["logprobs"] = true;
  const Answer with_logprobs = ask(*server, "/v1/chat/completions", logprobs);
  EXPECT_EQ(with_logprobs.status, 200);
  EXPECT_EQ(with_logprobs.cache, "") << "a cached reply has no logprobs to give";
}

TEST(CompletionCache, EntriesOutliveTheServerInTheDatabase) {
  const std::string database = (testing::scratch_dir("served-cache") / "inferscope.sqlite").string();
  const json question = chat("Tell me a story about a dog.");
  std::string generated;
  {
    auto server = serve_cached(database);
    ASSERT_TRUE(server);
    const Answer first = ask(*server, "/v1/chat/completions", question);
    ASSERT_EQ(first.cache, "miss");
    generated = content_of(first.body);
  }
  auto restarted = serve_cached(database);
  ASSERT_TRUE(restarted);
  const Answer again = ask(*restarted, "/v1/chat/completions", question);
  EXPECT_EQ(again.cache, "hit");
  EXPECT_EQ(content_of(again.body), generated);
}

}  // namespace
}  // namespace inferscope::serve

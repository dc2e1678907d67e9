// The backend registry (engine/backend/backend_registry.h) is open: a plug-in library that no
// file of the engine, the CLI or the app names (tests/backend/plugin, "loopback") is found in
// INFERSCOPE_BACKEND_DIR, listed with its devices, and runs a whole model, from a Session and
// from the CLI, giving llama.cpp's greedy tokens. A library that is not a backend, or calls
// itself by another name, is reported, never loaded as one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/backend/backend_registry.h"
#include "engine/runtime/session.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

namespace fs = std::filesystem;

const std::string kPluginDir = INFERSCOPE_TEST_BACKEND_DIR;

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<int32_t> reference_tokens(std::string* prompt) {
  std::ifstream in(testing::testdata("reference/stories260K.llama.cpp-b4747.json"));
  const auto ref = nlohmann::json::parse(in);
  *prompt = ref["prompt"].get<std::string>();
  std::vector<int32_t> ids;
  for (const auto& s : ref["steps"]) ids.push_back(s["id"].get<int32_t>());
  return ids;
}

// Each test is its own process (gtest_discover_tests), so the variable stays within it.
void use_backend_dir(const std::string& dir) { EXPECT_EQ(setenv("INFERSCOPE_BACKEND_DIR", dir.c_str(), 1), 0); }

// stories260K on the loopback plug-in, 2 threads.
std::unique_ptr<Session> loopback_session() {
  use_backend_dir(kPluginDir);
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  EXPECT_TRUE(model) << model.message();
  if (!model) return nullptr;
  SessionOptions so;
  so.n_threads = 2;
  so.backend = {"loopback", 0};
  auto session = Session::create(*model, so);
  EXPECT_TRUE(session) << session.message();
  return session ? std::move(*session) : nullptr;
}

TEST(BackendRegistry, TheCpuComesFirstAndIsBuiltIn) {
  const auto names = backend_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "cpu");
  EXPECT_TRUE(std::is_sorted(names.begin() + 1, names.end()));
  EXPECT_EQ(backend_label("cpu"), "CPU");
  const BackendDevices cpu = list_backend_devices("cpu");
  EXPECT_TRUE(cpu.unavailable_reason.empty()) << cpu.unavailable_reason;
  ASSERT_EQ(cpu.devices.size(), 1u);
  EXPECT_GT(cpu.devices[0].memory_bytes, 0u);
  EXPECT_FALSE(contains(names, "loopback")) << "the test plug-in is found only where it is pointed to";
}

TEST(BackendRegistry, FindsALibraryNoFileNames) {
  use_backend_dir(kPluginDir);
  ASSERT_TRUE(contains(backend_names(), "loopback"));
  EXPECT_TRUE(is_backend_name("loopback"));
  const BackendDevices listed = list_backend_devices("loopback");
  ASSERT_TRUE(listed.unavailable_reason.empty()) << listed.unavailable_reason;
  ASSERT_EQ(listed.devices.size(), 1u);
  EXPECT_EQ(listed.devices[0].name, "loopback device (CPU ops)");
  EXPECT_EQ(backend_label("loopback"), "Loopback") << "its own label, once loaded";
}

TEST(BackendRegistry, ASessionOnTheFoundPluginGivesLlamaCppTokens) {
  std::string prompt;
  const std::vector<int32_t> expected = reference_tokens(&prompt);
  auto session = loopback_session();
  ASSERT_TRUE(session);
  GenerateRequest req;
  req.prompt = prompt;
  req.sampling.temperature = 0.0f;
  req.max_tokens = static_cast<int32_t>(expected.size());
  auto result = session->generate(req);
  ASSERT_TRUE(result) << result.message();
  EXPECT_EQ(result->token_ids, expected);
}

// The plug-in runs the session's pool with its own copy of the engine code: the workers the
// host's copy put to sleep must still wake for it (a lost wake-up would hang here).
TEST(BackendRegistry, APluginWakesTheHostsSleepingWorkers) {
  auto session = loopback_session();
  ASSERT_TRUE(session);
  GenerateRequest req;
  req.max_tokens = 4;
  for (int i = 0; i < 3; ++i) {
    for (int w = 0; w < 200 && session->pool().sleeping_workers() == 0; ++w) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(session->pool().sleeping_workers(), 1) << "the worker went to sleep between requests";
    auto r = session->generate(req);
    ASSERT_TRUE(r) << r.message();
  }
}

TEST(BackendRegistry, AMissingDeviceOrBackendIsAnError) {
  use_backend_dir(kPluginDir);
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model) << model.message();
  SessionOptions so;
  so.backend = {"loopback", 3};
  auto session = Session::create(*model, so);
  ASSERT_FALSE(session);
  EXPECT_NE(session.message().find("one device"), std::string::npos) << session.message();
  so.backend = {"nosuch", 0};
  session = Session::create(*model, so);
  ASSERT_FALSE(session);
  EXPECT_NE(session.message().find("the nosuch backend is not installed"), std::string::npos) << session.message();
  so.backend = {"../cpu", 0};
  session = Session::create(*model, so);
  ASSERT_FALSE(session);
  EXPECT_NE(session.message().find("not a backend name"), std::string::npos) << session.message();
}

TEST(BackendRegistry, ALibraryThatIsNotABackendIsReported) {
  const fs::path dir = testing::scratch_dir("plugins");
  std::ofstream(dir / "libinferscope_broken.so") << "not an ELF file";
  fs::copy_file(fs::path(kPluginDir) / "libinferscope_loopback.so", dir / "libinferscope_renamed.so");
  use_backend_dir(dir.string());
  const auto names = backend_names();
  EXPECT_TRUE(contains(names, "broken"));
  EXPECT_TRUE(contains(names, "renamed"));
  const BackendDevices broken = list_backend_devices("broken");
  EXPECT_TRUE(broken.devices.empty());
  EXPECT_NE(broken.unavailable_reason.find("cannot load"), std::string::npos) << broken.unavailable_reason;
  EXPECT_EQ(backend_label("broken"), "broken");
  const BackendDevices renamed = list_backend_devices("renamed");
  EXPECT_TRUE(renamed.devices.empty());
  EXPECT_NE(renamed.unavailable_reason.find("calls itself 'loopback', not 'renamed'"), std::string::npos)
      << renamed.unavailable_reason;
  EXPECT_FALSE(list_backend_devices("cpu").devices.empty()) << "the CPU stays available";
}

TEST(BackendRegistryCli, ListsAndRunsTheFoundPlugin) {
  const std::string env = "INFERSCOPE_BACKEND_DIR=" + testing::quoted(kPluginDir);
  testing::CliRun listed = testing::run_cli_with_env(env, "inspect --devices --json");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const auto all = nlohmann::json::parse(listed.out);
  bool found = false;
  for (const auto& b : all) found = found || (b["backend"] == "loopback" && b["devices"].size() == 1);
  EXPECT_TRUE(found) << listed.out;

  std::string prompt;
  const std::vector<int32_t> expected = reference_tokens(&prompt);
  testing::CliRun run = testing::run_cli_with_env(
      env, "generate --backend loopback --temperature 0 --max-tokens 32 --json --prompt " + testing::quoted(prompt));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["token_ids"].get<std::vector<int32_t>>(), expected);

  testing::CliRun unknown = testing::run_cli_with_env(env, "generate --backend nosuch --max-tokens 1");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("unknown backend 'nosuch' (available: cpu"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("loopback"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace inferscope

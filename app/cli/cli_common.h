// Helpers shared by the subcommands: loading a model with a readable error, formatting.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "engine/backend/backend_registry.h"
#include "engine/model/model.h"
#include "engine/runtime/generate_request.h"
#include "engine/runtime/session.h"

namespace inferscope::cli {

// Options every model-running command accepts.
inline const OptionSpec kModelOption{"model", "FILE", "GGUF model (default: the bundled stories260K)"};
// Commands that run a session: "auto" adapts to a busy machine (docs/THREADS.md).
inline const OptionSpec kThreadsOption{"threads", "N|auto", "CPU threads: auto (default) uses every core, and fewer while other programs keep them busy; a number (0 = auto) fixes them"};
// Commands whose work is a batch job (conversion, calibration, embeddings): a fixed count.
inline const OptionSpec kBatchThreadsOption{"threads", "N", "CPU threads (default: all cores)"};
inline const OptionSpec kBackendOption{"backend", "NAME", "compute backend: cpu (default) or another that `inspect --devices` lists, e.g. vulkan"};
inline const OptionSpec kDeviceOption{"device", "N", "device of the backend (default 0; `inspect --devices` lists them)"};
inline const OptionSpec kMmapOption{"mmap", nullptr, "read weights from the file mapping instead of copying them to huge pages"};
inline const OptionSpec kContextOption{"context", "N", "context length in tokens (default: min(model's, 4096))"};
inline const OptionSpec kCacheTypeKOption{"cache-type-k", "T", "KV cache type of K: f16 (default), q8_0, q4_0, nf4, int4"};
inline const OptionSpec kCacheTypeVOption{"cache-type-v", "T", "KV cache type of V: f16 (default), q8_0, q4_0, nf4, int4"};
inline const OptionSpec kKvBlockSizeOption{"kv-block-size", "N", "positions per paged KV block: 16 (default), 32, 64, 128, 256"};
inline const OptionSpec kCacheBudgetOption{"cache-budget", "MIB", "KV memory for cached prompt prefixes beyond the context (default 0: the unused part of the context's blocks)"};
inline const OptionSpec kNoPrefixCacheOption{"no-prefix-cache", nullptr, "prefill every prompt whole, without reusing cached prefixes"};
inline const OptionSpec kKvWindowOption{"kv-window", "N", "attend to the last N positions plus the sinks only, dropping older KV: run past the context at constant memory (default 0: off)"};
inline const OptionSpec kKvSinksOption{"kv-sinks", "N", "with --kv-window or --context-shift: first positions always kept (attention sinks, default 4)"};
inline const OptionSpec kContextShiftOption{"context-shift", nullptr, "when the context is full, drop the older half after the sinks and go on (instead of stopping)"};

// Loads --model (or the bundled model); prints the error and returns nullptr on failure.
std::shared_ptr<const Model> load_model_from_args(Args& args);
// Reads --backend and --device into *choice; fails the arguments (false) for an unknown
// backend, or one whose library, driver or device is missing, saying which.
bool check_backend(Args& args, BackendChoice* choice);

// --threads of kThreadsOption: 0 (SessionOptions' automatic threads) for "auto", 0 or none,
// else the fixed count; fails the arguments for anything else.
int read_threads(Args& args);

// Reads --cache-type-k and --cache-type-v into *types; fails the arguments for unknown names.
void read_kv_types(Args& args, KvTypes* types);
// Reads --kv-block-size, --cache-budget, --no-prefix-cache, --kv-window, --kv-sinks and
// --context-shift into *options.
void read_kv_pool_options(Args& args, SessionOptions* options);

// The options of a command that runs one session: threads, mmap, context, the KV cache's types
// and pool, backend and device.
std::vector<OptionSpec> session_option_specs();
// Reads them into *options; false when one is wrong (the arguments failed, the reason printed).
bool read_session_options(Args& args, SessionOptions* options);
// A session on `model` with `options`, or null after printing "error: <why>" to stderr.
std::unique_ptr<Session> open_session(std::shared_ptr<const Model> model, const SessionOptions& options);

// `first`, then `then`.
std::vector<OptionSpec> joined(std::vector<OptionSpec> first, const std::vector<OptionSpec>& then);

std::string format_bytes(uint64_t bytes);  // "12.3 MiB"
// Redraws "[####....] <text>" on stderr's current line: done of total filled in, 40 wide.
void draw_progress_bar(int64_t done, int64_t total, const std::string& text);
// Prints "error: <message>" to stderr; returns 1 (the exit code).
int fail(const Status& status);
// The whole file into *text; false when it cannot be read.
bool read_file(const std::string& path, std::string* text);
void print_memory(const MemoryUsage& m);   // to stderr
nlohmann::json memory_json(const MemoryUsage& m);

}  // namespace inferscope::cli

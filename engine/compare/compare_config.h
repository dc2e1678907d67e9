// One configuration of a comparison (the comparison workbench, comparison.h): which model file,
// weight format, KV cache, backend and threads to run. Written by users as `key=value,...` or as
// a JSON object with the same keys (the CLI's --baseline/--candidate, the app's Compare view):
//
//   model=FILE            a GGUF file (default: the comparison's model)
//   weights=MIX           requantize on load to a quant mix (q8_0, q6_k, q5_k_m, q4_k_m, q4_0,
//                         q3_k_m, q2_k, iq4_nl, iq4_xs, tq2_0, f16, ...; default: as stored)
//   cache-type-k=T        KV types: f16, q8_0, q4_0, nf4, int4 (default f16)
//   cache-type-v=T
//   kv-block-size=N       positions per paged KV block (default 16)
//   cache-budget=MIB      KV memory for cached prefixes beyond the context (default 0)
//   prefix-cache=on|off   (default on)
//   kv-window=N           StreamingLLM window (default 0: off)
//   kv-sinks=N            (default 4)
//   context-shift=on|off  (default off)
//   backend=NAME[:DEV]    cpu (default), vulkan, vulkan:1 ...
//   device=N
//   threads=N             (default: automatic, all cores and fewer while the machine is busy)
//   context=N             context length (default: min(model's, 4096))
//   label=TEXT            name in tables and charts (default "baseline", "candidate 1", ...)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/backend/backend_registry.h"
#include "engine/core/status.h"
#include "engine/kv/kv_layout.h"
#include "engine/runtime/session.h"

namespace inferscope {

struct CompareConfig {
  std::string label;
  std::string model_path;  // empty: the comparison's default model
  std::string weights;     // empty: as stored; else a weight recipe (weight_recipe.h): q4_k_m, q4_0+gptq
  KvTypes kv_types;
  CachePolicy cache;
  BackendChoice backend;
  int n_threads = 0;
  int64_t n_ctx = 0;

  bool operator==(const CompareConfig&) const = default;
};

// Parses `key=value,...` (spaces around items ignored) or a JSON object. Errors name the key and
// what it accepts. Names are checked (a weight mix, KV types, the block size); whether the
// backend has a device is found out when the configuration runs.
Result<CompareConfig> parse_compare_config(std::string_view text);

// The canonical `key=value,...` text: the keys that differ from the defaults, in the order of
// the list above (label excluded); "defaults" when none does. parse_compare_config(text) gives
// the configuration back (label aside).
std::string compare_config_text(const CompareConfig& config);

}  // namespace inferscope

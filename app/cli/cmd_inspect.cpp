// inspect: what a GGUF file holds and what loading it would cost, without loading it.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/device_listing.h"
#include "app/cli/commands.h"
#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/architecture_summary.h"
#include "engine/model/memory_estimate.h"
#include "engine/model/model_config.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope::cli {

namespace {

// The file's chat template as `generate --chat` would use it.
struct ChatTemplateInfo {
  bool has_template = false;
  std::string family = "none";
  std::string error;  // the template does not parse
};

ChatTemplateInfo chat_template_info(const gguf::File& f) {
  ChatTemplateInfo info;
  auto source = f.get_string_or("tokenizer.chat_template", "");
  if (!source) {
    info.error = source.message();
    return info;
  }
  info.has_template = !source->empty();
  info.family = chat_family_name(detect_chat_family(*source));
  auto parsed = ChatTemplate::from_source(*source, "", "");
  if (!parsed) info.error = parsed.message();
  return info;
}

nlohmann::json config_json(const ModelConfig& c) {
  return {{"architecture", c.arch_name}, {"name", c.name},         {"n_vocab", c.n_vocab},
          {"n_ctx_train", c.n_ctx_train}, {"n_embd", c.n_embd},    {"n_layer", c.n_layer},
          {"n_head", c.n_head},           {"n_head_kv", c.n_head_kv}, {"head_dim", c.head_dim},
          {"n_ff", c.n_ff},               {"n_expert", c.n_expert}, {"n_expert_used", c.n_expert_used},
          {"rms_eps", c.rms_eps},         {"rope_freq_base", c.rope_freq_base},
          {"rope_freq_scale", c.rope_freq_scale}, {"n_rot", c.n_rot},
          {"rope_layout", c.rope_layout == RopeLayout::Neox ? "neox" : "normal"},
          {"rope_scaling", rope_scaling_name(c.rope_scaling)}, {"rope_n_ctx_orig", c.n_ctx_orig}, {"rope_attn_factor", c.rope_attn_factor},
          {"ffn_activation", ffn_activation_name(c.ffn_activation)},
          {"sliding_window", c.n_swa},    {"sliding_window_period", c.swa_period},
          {"qk_norm", c.has_qk_norm},     {"no_rope_layer_step", c.n_no_rope_step},
          {"attn_softcap", c.attn_softcap},
          {"final_softcap", c.final_softcap}};
}

void print_text(const gguf::File& f, const ModelConfig& c, const Tokenizer* tok, const ChatTemplateInfo& chat,
                const MemoryEstimate& e) {
  std::printf("file: %s (GGUF v%u, %s, %zu metadata keys, %zu tensors, alignment %u)\n", f.path().c_str(),
              f.version(), format_bytes(f.file_size()).c_str(), f.metadata().size(), f.tensors().size(),
              f.alignment());
  std::printf("\narchitecture: %s%s\n", c.arch_name.c_str(), c.name.empty() ? "" : (" (" + c.name + ")").c_str());
  if (c.is_encoder()) {
    std::printf("  layers %lld, embedding %lld, heads %lld (KV %lld, head size %lld), feed-forward %lld\n",
                (long long)c.n_layer, (long long)c.n_embd, (long long)c.n_head, (long long)c.n_head_kv,
                (long long)c.head_dim, (long long)c.n_ff);
    const char* pooling = c.pooling == Pooling::Mean ? "mean" : c.pooling == Pooling::Cls ? "cls" : "last";
    std::printf("  encoder (embeddings): context %lld, LayerNorm eps %g, absolute positions, %lld token types,\n"
                "  bidirectional attention, GELU FFN, %s pooling (inferscope-cli embed)\n",
                (long long)c.n_ctx_train, c.norm_eps, (long long)c.n_token_types, pooling);
  } else {
    for (const auto& [label, value] : architecture_summary(c)) {
      std::printf("  %-13s %s\n", (label + ":").c_str(), value.c_str());
    }
  }
  if (tok) {
    std::printf("\ntokenizer: %s (pre: %s), %d tokens, BOS %d%s, EOS %d%s\n", tok->model_name().c_str(),
                tok->pre_name().c_str(), tok->n_vocab(), tok->bos_id(), tok->add_bos() ? " (added)" : "",
                tok->eos_id(), tok->add_eos() ? " (added)" : "");
  }
  std::printf("chat template: %s%s%s\n", chat.family.c_str(),
              chat.has_template ? " (from the file)" : " (the file has none; plain format)",
              chat.error.empty() ? "" : (" -- unusable: " + chat.error).c_str());
  const size_t int8 = std::count_if(f.tensors().begin(), f.tensors().end(),
                                    [](const gguf::TensorInfo& t) { return t.type == kernels::GgmlType::I8; });
  if (int8 > 0) {
    std::printf("weights: %zu matrices in INT8 per output channel, Inferscope's own format (I8 values and a\n"
                "  '<name>.scale' tensor of per-row scales): llama.cpp and other GGUF readers will not run this file\n",
                int8);
  }
  if (const gguf::Value* method = f.find("inferscope.weightlab.method")) {
    std::printf("weight lab: made by %s\n", method->string.c_str());
  }
  std::printf("\nmetadata:\n");
  for (const gguf::KeyValue& kv : f.metadata()) {
    std::printf("  %-48s %s\n", kv.key.c_str(), kv.value.to_display_string().c_str());
  }
  std::printf("\ntensors:\n  %-40s %-22s %-8s %12s\n", "name", "shape", "type", "bytes");
  for (const gguf::TensorInfo& t : f.tensors()) {
    std::printf("  %-40s %-22s %-8s %12llu\n", t.name.c_str(), t.shape_string().c_str(), kernels::type_name(t.type),
                (unsigned long long)t.n_bytes);
  }
  const std::string recurrent =
      e.recurrent_bytes > 0 ? " + recurrent state " + format_bytes(e.recurrent_bytes) : std::string();
  std::printf("\nmemory estimate at the model's context of %lld tokens: weights %s + KV cache %s (%s)%s + scratch %s = %s\n",
              (long long)e.n_ctx, format_bytes(e.weights_bytes).c_str(), format_bytes(e.kv_cache_bytes).c_str(),
              kv_types_label(e.kv_types).c_str(), recurrent.c_str(),
              format_bytes(e.scratch_bytes).c_str(), format_bytes(e.total_bytes()).c_str());
  if (e.kv_window_layers > 0) {
    std::printf("  the %lld sliding-window layers keep %lld positions each (their window, two batches and a cached "
                "prefix's), the others the whole context\n",
                (long long)e.kv_window_layers, (long long)e.kv_window_positions);
  }
  if (e.shared_kv_layers > 0) {
    std::printf("  shared KV: %lld layers keep KV rows, the last %lld read an earlier layer's instead of storing any\n",
                (long long)e.kv_layers, (long long)e.shared_kv_layers);
  }
  if (e.recurrent_layers > 0) {
    std::printf("  hybrid: %lld layers keep KV rows, %lld a recurrent state of fixed size (%s with its checkpoints, "
                "whatever the context)\n",
                (long long)e.kv_layers, (long long)e.recurrent_layers, format_bytes(e.recurrent_bytes).c_str());
  }
  if (e.mtp_draft_bytes > 0) {
    std::printf("  MTP: %lld multi-token-prediction layer(s) after the others; drafting with them (generate "
                "--draft-mtp) adds %s (a KV layer and the states kept after a verification's rows)\n",
                (long long)e.mtp_layers, format_bytes(e.mtp_draft_bytes).c_str());
  }
}

nlohmann::json to_json(const gguf::File& f, const ModelConfig& c, const Tokenizer* tok, const ChatTemplateInfo& chat,
                       const MemoryEstimate& e) {
  nlohmann::json j;
  j["file"] = f.path();
  j["gguf_version"] = f.version();
  j["file_bytes"] = f.file_size();
  j["config"] = config_json(c);
  if (tok) {
    j["tokenizer"] = {{"model", tok->model_name()}, {"pre", tok->pre_name()}, {"n_vocab", tok->n_vocab()},
                      {"bos_id", tok->bos_id()},    {"eos_id", tok->eos_id()}, {"add_bos", tok->add_bos()}};
  }
  j["chat_template"] = {{"has_template", chat.has_template}, {"family", chat.family}};
  if (!chat.error.empty()) j["chat_template"]["error"] = chat.error;
  nlohmann::json meta = nlohmann::json::object();
  for (const gguf::KeyValue& kv : f.metadata()) meta[kv.key] = kv.value.to_display_string(16);
  j["metadata"] = meta;
  nlohmann::json tensors = nlohmann::json::array();
  for (const gguf::TensorInfo& t : f.tensors()) {
    std::vector<int64_t> shape(t.ne.begin(), t.ne.begin() + std::max(1, t.n_dims));
    tensors.push_back({{"name", t.name}, {"shape", shape}, {"type", kernels::type_name(t.type)}, {"bytes", t.n_bytes}});
  }
  j["tensors"] = tensors;
  j["memory_estimate"] = {{"n_ctx", e.n_ctx},
                          {"weights_bytes", e.weights_bytes},
                          {"kv_cache_bytes", e.kv_cache_bytes},
                          {"kv_cache_type_k", std::string(kernels::kv_type_name(e.kv_types.k))},
                          {"kv_cache_type_v", std::string(kernels::kv_type_name(e.kv_types.v))},
                          {"kv_window_layers", e.kv_window_layers},
                          {"kv_window_positions", e.kv_window_positions},
                          {"kv_layers", e.kv_layers},
                          {"recurrent_layers", e.recurrent_layers},
                          {"shared_kv_layers", e.shared_kv_layers},
                          {"recurrent_bytes", e.recurrent_bytes},
                          {"mtp_layers", e.mtp_layers},
                          {"mtp_draft_bytes", e.mtp_draft_bytes},
                          {"scratch_bytes", e.scratch_bytes},
                          {"total_bytes", e.total_bytes()}};
  return j;
}

int list_all_devices(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& name : backend_names()) {
    const BackendDevices devices = list_backend_devices(name);
    if (json) all.push_back(devices_json(devices));
    else print_devices(devices);
  }
  if (json) std::printf("%s\n", all.dump().c_str());
  return 0;
}

}  // namespace

int run_inspect(int argc, char** argv) {
  Args args(argc, argv, "inspect", "Shows a GGUF file's architecture, tokenizer, tensors and memory estimate.",
            {kModelOption, {"threads", "N", "threads the scratch estimate is for (default 1)"}, {"json", nullptr, "print one JSON object"},
             {"devices", nullptr, "list every backend's devices (no model needed)"}, kCacheTypeKOption,
             kCacheTypeVOption, kBackendOption, kDeviceOption});
  if (!args.ok()) return args.exit_code();
  const int threads = static_cast<int>(args.integer("threads", 1, 1, 1024));
  KvTypes kv_types;
  read_kv_types(args, &kv_types);
  if (!args.ok()) return args.exit_code();
  if (args.flag("devices")) return list_all_devices(args.flag("json"));
  BackendChoice backend;
  if (args.has("backend") && !check_backend(args, &backend)) return args.exit_code();
  const std::string path = args.string("model", default_model_path());
  auto file = gguf::File::open(path);
  if (!file) {
    std::fprintf(stderr, "error: %s\n", file.message().c_str());
    return 1;
  }
  auto config = ModelConfig::from_gguf(**file);
  if (!config) {
    std::fprintf(stderr, "error: %s\n", config.message().c_str());
    return 1;
  }
  auto tok = Tokenizer::from_gguf(**file);
  if (!tok) std::fprintf(stderr, "warning: %s\n", tok.message().c_str());
  const Tokenizer* tokenizer = tok ? tok->get() : nullptr;
  const Status kv_ok = check_kv_types(config->kv_rows(), kv_types);
  if (!kv_ok) {
    std::fprintf(stderr, "error: %s\n", kv_ok.message().c_str());
    return 1;
  }
  const MemoryEstimate e = estimate_memory(**file, *config, config->n_ctx_train, threads, 256, kv_types);
  const ChatTemplateInfo chat = chat_template_info(**file);
  const bool on_device = !backend.on_cpu();
  if (args.flag("json")) {
    nlohmann::json j = to_json(**file, *config, tokenizer, chat, e);
    if (on_device) j["device"] = devices_json(list_backend_devices(backend.backend), backend.device);
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    print_text(**file, *config, tokenizer, chat, e);
    if (on_device) {
      std::printf("\n");
      print_devices(list_backend_devices(backend.backend), backend.device);
    }
  }
  return 0;
}

}  // namespace inferscope::cli

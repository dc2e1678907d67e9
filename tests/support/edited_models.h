// Shared test models changed in memory for a test: cut after their first layers (what the model
// computes when its later layers are skipped, a reference for self-drafting), or with one
// token's text changed (a vocabulary that differs in one place).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/gguf/gguf_writer.h"
#include "engine/model/model.h"

namespace inferscope::testing {

// testdata(relative) with its first n_layers blocks only: block_count = n_layers, the later
// blocks' tensors left out. Fails the running test (and returns null) when it cannot be made.
std::shared_ptr<const Model> load_first_layers(const std::string& relative, int64_t n_layers);

// testdata(relative) with the text of token `id` replaced by `text`. Fails the running test
// (and returns null) when it cannot be made.
std::shared_ptr<const Model> load_with_token_text(const std::string& relative, int32_t id, const std::string& text);

// The model of the 2026 reference `reference` (reference_2026.h) with its metadata changed by
// `edit` and the tensor `drop_tensor` left out: what loading it gives, errors included (for the
// tests of what a loader refuses).
Result<std::shared_ptr<const Model>> try_load_reference_edited(const std::string& reference,
                                                               const std::function<void(gguf::Writer&)>& edit,
                                                               const std::string& drop_tensor = "");

}  // namespace inferscope::testing

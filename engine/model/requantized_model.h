// Requantize on load: a model file converted to another weight mix (quant_mix.h) in memory, no
// file written. The converted GGUF is built by the same code as the quantize command
// (quantized_gguf), so each tensor holds the bytes `quantize` would write, and it is written
// straight into huge-page memory (resident_buffer.h), where the model's weights then stay.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/model/quant_mix.h"
#include "engine/model/quantize_model.h"

namespace inferscope {

// Loads `path` converted to `mix` (n_threads convert). options.on_progress sees the conversion
// as the first 95% and the binding as the rest; options.resident_weights is ignored (the
// converted bytes are resident already). The model's file is named "<path> as <MIX>".
// Fails, naming the tensor, like `quantize`; fails without converting when the converted model
// would not fit in the available memory.
Result<std::shared_ptr<const Model>> load_requantized(const std::string& path, const QuantMix& mix,
                                                      const ModelLoadOptions& options, int n_threads);

// The same for a file opened already, converted with `options` (a weight-lab method's rewriter
// too), the model's file named `name`.
Result<std::shared_ptr<const Model>> load_converted(std::shared_ptr<const gguf::File> in, const QuantizeOptions& options,
                                                    const std::string& name, const ModelLoadOptions& load_options);

// A model written by `writer` (its tensors produced as it writes: the conversion runs here),
// into huge-page memory and loaded; progress as load_requantized's.
Result<std::shared_ptr<const Model>> load_written(const gguf::Writer& writer, const std::string& name,
                                                  const ModelLoadOptions& load_options);

// "stories260K.gguf as Q4_0" (method: "stories260K.gguf as Q4_0 (GPTQ)"): the name load_requantized
// gives a converted model's file.
std::string requantized_name(const std::string& path, const QuantMix& mix, const std::string& method = "");

}  // namespace inferscope

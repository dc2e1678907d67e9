#include "engine/model/requantized_model.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "engine/core/resident_buffer.h"
#include "engine/model/memory_estimate.h"
#include "engine/model/quantize_model.h"

namespace inferscope {
namespace {

constexpr double kConversionShare = 0.95;

// Writes into a resident buffer of the exact size Writer::byte_size gave.
class BufferSink final : public gguf::ByteSink {
 public:
  explicit BufferSink(ResidentBuffer& buffer) : buffer_(buffer) {}
  Status write(const void* data, size_t n) override {
    if (n > buffer_.size() - used_) return Status::error("the converted model outgrew its computed size");
    std::memcpy(buffer_.data() + used_, data, n);
    used_ += n;
    return Status::ok();
  }
  size_t used() const { return used_; }

 private:
  ResidentBuffer& buffer_;
  size_t used_ = 0;
};

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

std::string requantized_name(const std::string& path, const QuantMix& mix, const std::string& method) {
  return path + " as " + upper(mix.name) + (method.empty() ? "" : " (" + upper(method) + ")");
}

Result<std::shared_ptr<const Model>> load_requantized(const std::string& path, const QuantMix& mix,
                                                      const ModelLoadOptions& options, int n_threads) {
  if (options.on_progress) options.on_progress(0.0);
  auto in = gguf::File::open(path);
  if (!in) return in.status();
  QuantizeOptions qo;
  qo.mix = mix;
  qo.n_threads = std::max(1, n_threads);
  return load_converted(*in, qo, requantized_name(path, mix), options);
}

Result<std::shared_ptr<const Model>> load_converted(std::shared_ptr<const gguf::File> in, const QuantizeOptions& qo,
                                                    const std::string& name, const ModelLoadOptions& options) {
  auto converted = quantized_gguf(std::move(in), qo, [&](double f) {
    if (options.on_progress) options.on_progress(kConversionShare * f);
  });
  if (!converted) return converted.status();
  return load_written(converted->writer, name, options);
}

Result<std::shared_ptr<const Model>> load_written(const gguf::Writer& writer, const std::string& name,
                                                  const ModelLoadOptions& options) {
  auto size = writer.byte_size(name);
  if (!size) return size.status();
  auto buffer = ResidentBuffer::allocate(static_cast<size_t>(*size));
  if (!buffer) {
    return Status::error(name + ": not enough memory for the converted weights (" + format_gib(*size) +
                         "): " + buffer.message());
  }
  std::shared_ptr<ResidentBuffer> bytes = std::move(*buffer);
  BufferSink sink(*bytes);
  INFERSCOPE_RETURN_IF_ERROR(writer.write_to(sink, name));
  auto file = gguf::File::parse_owned(bytes, std::span<const uint8_t>(bytes->data(), sink.used()), name);
  if (!file) return file.status();
  ModelLoadOptions load = options;
  load.resident_weights = false;
  load.on_progress = [&](double f) {
    if (options.on_progress) options.on_progress(kConversionShare + (1.0 - kConversionShare) * f);
  };
  return Model::load_file(*file, load);
}

}  // namespace inferscope

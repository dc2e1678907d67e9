// Token stream -> UTF-8 text for display while generating: a character split across tokens
// (byte-fallback tokens, byte-level BPE pieces) is held back until its last byte arrives.
#pragma once

#include <cstdint>
#include <string>

namespace inferscope {

class Tokenizer;

class StreamingDetokenizer {
 public:
  enum class ControlTokens { Shown, Hidden };

  // `tokenizer` must outlive this object. Hidden: control tokens add no text (generated output).
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, ControlTokens control = ControlTokens::Shown);

  // The text completed by this token (may be empty). Bytes that can never become valid UTF-8
  // come out as U+FFFD; only a still-incomplete sequence at the end is held back.
  std::string push(int32_t id);
  // Whatever is held back, an incomplete tail replaced by U+FFFD; resets the stream.
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  ControlTokens control_;
  std::string pending_;
};

}  // namespace inferscope

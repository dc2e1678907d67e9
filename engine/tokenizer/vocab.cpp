// Vocabulary loading. Follows llama.cpp's llama-vocab.cpp (b4747) for defaults and special
// tokens; differs on purpose where llama.cpp would crash or silently guess (see comments).
#include "engine/tokenizer/vocab.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <limits>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/pre_tokenizer.h"

namespace inferscope::tok {
namespace {

constexpr const char* kKeyModel = "tokenizer.ggml.model";
constexpr const char* kKeyPre = "tokenizer.ggml.pre";
constexpr const char* kKeyTokens = "tokenizer.ggml.tokens";
constexpr const char* kKeyScores = "tokenizer.ggml.scores";
constexpr const char* kKeyTokenType = "tokenizer.ggml.token_type";
constexpr const char* kKeyAddBos = "tokenizer.ggml.add_bos_token";
constexpr const char* kKeyAddEos = "tokenizer.ggml.add_eos_token";
constexpr const char* kKeyAddSpacePrefix = "tokenizer.ggml.add_space_prefix";

// Token texts llama.cpp treats as end of turn / end of generation when the metadata names none.
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",  // DeepSeek's <｜end▁of▁sentence｜>
};
constexpr std::string_view kEomTexts[] = {"<|eom_id|>"};
constexpr std::string_view kEogTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>",
    "<|return|>", "<|call|>",  // o200k_harmony (gpt-oss)
    "<eos>", "<turn|>", "<|tool_response>",  // gemma4
};
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>"};
constexpr std::string_view kFimRepTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>"};
constexpr std::string_view kFimSepTexts[] = {"<|file_sep|>"};

uint32_t attr_from_type(int64_t type) {
  if (type < 0 || type > static_cast<int64_t>(TokenType::kByte)) return kAttrUndefined;
  switch (static_cast<TokenType>(type)) {
    case TokenType::kNormal: return kAttrNormal;
    case TokenType::kUnknown: return kAttrUnknown;
    case TokenType::kControl: return kAttrControl;
    case TokenType::kUserDefined: return kAttrUserDefined;
    case TokenType::kUnused: return kAttrUnused;
    case TokenType::kByte: return kAttrByte;
    default: return kAttrUndefined;
  }
}

std::string lowercase_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <size_t N>
bool in_list(std::string_view text, const std::string_view (&list)[N]) {
  return std::find(std::begin(list), std::end(list), text) != std::end(list);
}

}  // namespace

void TokenIndex::build(const std::vector<TokenData>& tokens) {
  tokens_ = &tokens;
  size_t capacity = 16;
  while (capacity < tokens.size() * 2) capacity *= 2;  // load factor <= 1/2
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string& text = tokens[id].text;
    const uint64_t h = hash(text);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.id < 0) {
        slot = {tag, static_cast<int32_t>(id)};
        break;
      }
      if (slot.tag == tag && tokens[static_cast<size_t>(slot.id)].text == text) {
        slot.id = static_cast<int32_t>(id);  // a repeated text maps to its last id, as in llama.cpp
        break;
      }
    }
  }
}

int32_t TokenIndex::find(std::string_view text) const {
  if (slots_.empty()) return -1;
  const uint64_t h = hash(text);
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id < 0) return -1;
    if (slot.tag == tag && (*tokens_)[static_cast<size_t>(slot.id)].text == text) return slot.id;
  }
}

Result<std::unique_ptr<Vocab>> Vocab::load(const gguf::File& file) {
  std::unique_ptr<Vocab> vocab(new Vocab());
  Status st = vocab->read(file);
  if (!st.is_ok()) return st;
  return vocab;
}

Status Vocab::read(const gguf::File& file) {
  source_ = file.path();
  const std::string prefix = file.error_prefix();

  Result<std::string> model = file.get_string(kKeyModel);
  if (!model) return model.status();
  model_name_ = *model;
  if (model_name_ == "llama") {
    kind_ = VocabKind::kSentencePiece;
  } else if (model_name_ == "gpt2" || model_name_ == "gemma4") {
    kind_ = VocabKind::kBytePairEncoding;
  } else if (model_name_ == "bert") {
    kind_ = VocabKind::kWordPiece;
  } else if (model_name_ == "no_vocab" || model_name_ == "none") {
    return Status::error(prefix + "metadata key '" + kKeyModel + "' is '" + model_name_ +
                         "': the model has no vocabulary, so text cannot be tokenized");
  } else if (model_name_ == "t5" || model_name_ == "rwkv") {
    return Status::error(prefix + "metadata key '" + kKeyModel + "' is '" + model_name_ +
                         "', a tokenizer this engine does not support (expected llama, gpt2 or bert)");
  } else {
    return Status::error(prefix + "metadata key '" + kKeyModel + "' has unknown value '" + model_name_ +
                         "' (expected llama, gpt2, gemma4 or bert)");
  }

  Result<std::string> pre = file.get_string_or(kKeyPre, "default");
  if (!pre) return pre.status();
  pre_name_ = model_name_ == "gemma4" ? "gemma4" : *pre;  // llama.cpp ignores the file's for gemma4

  Result<const std::vector<std::string>*> texts = file.get_string_array(kKeyTokens);
  if (!texts) return texts.status();
  const size_t n = (*texts)->size();
  if (n == 0) return Status::error(prefix + "metadata key '" + std::string(kKeyTokens) + "' is empty");
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::error(prefix + "metadata key '" + std::string(kKeyTokens) + "' has too many entries");
  }
  tokens_.resize(n);
  for (size_t i = 0; i < n; ++i) tokens_[i].text = (**texts)[i];

  if (file.has(kKeyScores)) {
    Result<std::vector<float>> scores = file.get_float_array(kKeyScores);
    if (!scores) return scores.status();
    if (scores->size() != n) {
      return Status::error(prefix + "metadata key '" + std::string(kKeyScores) + "' has " +
                           std::to_string(scores->size()) + " entries, expected " + std::to_string(n) +
                           " (one per entry of " + kKeyTokens + ")");
    }
    for (size_t i = 0; i < n; ++i) tokens_[i].score = (*scores)[i];
  }
  if (file.has(kKeyTokenType)) {
    Result<std::vector<int64_t>> types = file.get_int_array(kKeyTokenType);
    if (!types) return types.status();
    if (types->size() != n) {
      return Status::error(prefix + "metadata key '" + std::string(kKeyTokenType) + "' has " +
                           std::to_string(types->size()) + " entries, expected " + std::to_string(n) +
                           " (one per entry of " + kKeyTokens + ")");
    }
    for (size_t i = 0; i < n; ++i) tokens_[i].attr = attr_from_type((*types)[i]);
  }

  index_.build(tokens_);
  for (const TokenData& t : tokens_) max_token_length_ = std::max(max_token_length_, t.text.size());

  // Per-model defaults (llama-vocab.cpp), then the file's keys.
  const auto if_valid = [&](int32_t id) { return id < size() ? id : -1; };
  switch (kind_) {
    case VocabKind::kSentencePiece:
      bos_ = if_valid(1);
      eos_ = if_valid(2);
      unk_ = if_valid(0);
      add_bos_ = true;
      add_space_prefix_ = true;
      break;
    case VocabKind::kBytePairEncoding: {
      bos_ = model_name_ == "gemma4" ? -1 : if_valid(11);  // gemma4: the file's ids only
      eos_ = model_name_ == "gemma4" ? -1 : if_valid(11);
      Result<PreTokenizerTraits> traits = PreTokenizer::traits_for(pre_name_);
      if (!traits) {
        return Status::error(prefix + "metadata key '" + kKeyPre + "': unknown pre-tokenizer '" + pre_name_ + "'");
      }
      add_bos_ = traits->add_bos;
      if (traits->clear_bos) bos_ = -1;
      break;
    }
    case VocabKind::kWordPiece:
      bos_ = if_valid(101);
      unk_ = if_valid(100);
      sep_ = if_valid(102);
      pad_ = if_valid(0);
      mask_ = if_valid(103);
      add_bos_ = true;
      break;
  }
  INFERSCOPE_RETURN_IF_ERROR(read_special_ids(file));

  Result<bool> add_bos = file.get_bool_or(kKeyAddBos, add_bos_);
  if (!add_bos) return add_bos.status();
  add_bos_ = *add_bos || model_name_ == "gemma4";
  Result<bool> add_eos = file.get_bool_or(kKeyAddEos, add_eos_);
  if (!add_eos) return add_eos.status();
  add_eos_ = *add_eos;
  Result<bool> space_prefix = file.get_bool_or(kKeyAddSpacePrefix, add_space_prefix_);
  if (!space_prefix) return space_prefix.status();
  add_space_prefix_ = *space_prefix;

  Result<std::string> general_name = file.get_string_or("general.name", "");
  detect_special_tokens(general_name ? lowercase_ascii(*general_name) : std::string());
  return Status::ok();
}

Status Vocab::read_special_ids(const gguf::File& file) {
  struct IdKey {
    const char* key;
    int32_t* id;
    bool required_in_range;  // the tokenizer uses it: an id past the vocabulary is an error
  };
  const IdKey keys[] = {
      {"tokenizer.ggml.bos_token_id", &bos_, true},
      {"tokenizer.ggml.eos_token_id", &eos_, true},
      {"tokenizer.ggml.eot_token_id", &eot_, true},
      {"tokenizer.ggml.eom_token_id", &eom_, true},
      {"tokenizer.ggml.unknown_token_id", &unk_, true},
      {"tokenizer.ggml.seperator_token_id", &sep_, true},
      {"tokenizer.ggml.cls_token_id", &cls_, true},
      {"tokenizer.ggml.padding_token_id", &pad_, false},
      {"tokenizer.ggml.mask_token_id", &mask_, false},
      {"tokenizer.ggml.fim_pad_token_id", &fim_pad_, false},
      {"tokenizer.ggml.fim_rep_token_id", &fim_rep_, false},
      {"tokenizer.ggml.fim_sep_token_id", &fim_sep_, false},
  };
  for (const IdKey& k : keys) {
    if (!file.has(k.key)) continue;
    Result<int64_t> value = file.get_int(k.key);
    if (!value) return value.status();
    const int64_t v = *value;
    // Converters write -1 (as UINT32 0xFFFFFFFF) for "no such token".
    if (v == -1 || v == 0xFFFFFFFFll) {
      *k.id = -1;
      continue;
    }
    if (v < 0 || v >= size()) {
      const std::string what = std::string("metadata key '") + k.key + "' is " + std::to_string(v) +
                               ", outside the vocabulary of " + std::to_string(size()) + " tokens";
      if (k.required_in_range) return Status::error(file.error_prefix() + what);
      warnings_.push_back(what + "; ignored");
      *k.id = -1;
      continue;
    }
    *k.id = static_cast<int32_t>(v);
  }
  return Status::ok();
}

// Harmony (gpt-oss), as llama.cpp treats it: its message markers are user-defined tokens (cut
// out of any text, printed in generated text, where the reasoning split reads them), and
// <|end|> closes one message while the reply goes on to <|return|> or <|call|>: a vocabulary
// with both of those keeps <|end|> out of the end tokens and prints it too.
void Vocab::apply_harmony_rules() {
  const auto make_user_defined = [&](int32_t id) {
    uint32_t& attr = tokens_[static_cast<size_t>(id)].attr;
    attr = (attr & (kAttrLstrip | kAttrRstrip)) | kAttrUserDefined;
  };
  for (std::string_view text : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
    if (const int32_t id = find(text); id >= 0) make_user_defined(id);
  }
  const int32_t ret = find("<|return|>"), call = find("<|call|>"), end = find("<|end|>");
  if (ret >= 0 && call >= 0 && end >= 0 && eog_.count(ret) && eog_.count(call)) {
    eog_.erase(end);
    make_user_defined(end);
  }
}

void Vocab::detect_special_tokens(const std::string& general_name) {
  // Texts that look like control tokens must behave like them (not be cut out of plain text,
  // stop generation) even when a converter typed them as normal or user-defined.
  const auto make_control = [&](int32_t id) {
    uint32_t& attr = tokens_[static_cast<size_t>(id)].attr;
    if (!(attr & kAttrControl)) {
      warnings_.push_back("token " + std::to_string(id) + " '" + token(id).text +
                          "' looks like a control token but is not typed as one; treated as control");
      attr = (attr & (kAttrLstrip | kAttrRstrip)) | kAttrControl;
    }
  };
  // Where several texts match, the earlier entry of kEotTexts wins (<|im_end|> over
  // <|endoftext|> in Qwen vocabularies); llama.cpp's choice depends on hash-map order.
  const bool find_eot = eot_ < 0, find_eom = eom_ < 0, find_pad = fim_pad_ < 0, find_rep = fim_rep_ < 0,
             find_sep = fim_sep_ < 0;
  size_t eot_rank = std::size(kEotTexts);
  for (int32_t id = 0; id < size(); ++id) {
    const std::string& text = token(id).text;
    if (text.size() < 3 || text.size() > 40) continue;  // every listed text is in this range
    if (find_eot) {
      const size_t rank = static_cast<size_t>(std::find(std::begin(kEotTexts), std::end(kEotTexts), text) -
                                              std::begin(kEotTexts));
      if (rank < eot_rank) {
        eot_rank = rank;
        eot_ = id;
      }
    }
    if (find_eom && eom_ < 0 && in_list(text, kEomTexts)) eom_ = id;
    if (find_pad && fim_pad_ < 0 && in_list(text, kFimPadTexts)) fim_pad_ = id;
    if (find_rep && fim_rep_ < 0 && in_list(text, kFimRepTexts)) fim_rep_ = id;
    if (find_sep && fim_sep_ < 0 && in_list(text, kFimSepTexts)) fim_sep_ = id;
    if (in_list(text, kEogTexts)) {
      eog_.insert(id);
      make_control(id);
    }
  }
  if (find_eot && eot_ >= 0) make_control(eot_);
  if (find_eom && eom_ >= 0) make_control(eom_);
  for (int32_t id : {eos_, eot_, eom_, fim_pad_, fim_rep_, fim_sep_}) {
    if (id >= 0) eog_.insert(id);
  }
  apply_harmony_rules();

  for (int32_t id = 0; id < size(); ++id) {
    const TokenData& t = token(id);
    if ((t.attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) && !t.text.empty()) {
      special_tokens_.push_back(id);
    }
  }
  std::stable_sort(special_tokens_.begin(), special_tokens_.end(), [&](int32_t a, int32_t b) {
    return token(a).text.size() > token(b).text.size();
  });

  // Strip flags that llama.cpp sets by model name (they come from tokenizer.json's added tokens,
  // which GGUF does not carry).
  const auto set_flag = [&](std::string_view text, uint32_t flag, bool on) {
    const int32_t id = find(text);
    if (id < 0) return;
    uint32_t& attr = tokens_[static_cast<size_t>(id)].attr;
    attr = on ? (attr | flag) : (attr & ~flag);
  };
  const auto contains = [](const std::string& haystack, std::string_view needle) {
    return haystack.find(needle) != std::string::npos;
  };
  if (contains(pre_name_, "jina-v2-de") || contains(pre_name_, "jina-v2-es") || contains(pre_name_, "jina-v2-code")) {
    set_flag("<mask>", kAttrLstrip, true);
  } else if (contains(general_name, "phi-3") || contains(general_name, "phi3")) {
    for (int32_t id : special_tokens_) tokens_[static_cast<size_t>(id)].attr |= kAttrRstrip;
    set_flag("</s>", kAttrRstrip, true);
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) set_flag(text, kAttrRstrip, false);
  }
}

}  // namespace inferscope::tok

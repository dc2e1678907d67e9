// Tokenizer: special-token partitioning of the input, then the vocabulary kind's algorithm per
// plain-text fragment (llama.cpp's llama_vocab::impl::tokenize), and the reverse mapping.
#include "engine/tokenizer/tokenizer.h"

#include <cctype>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/bpe.h"
#include "engine/tokenizer/spm.h"
#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab.h"
#include "engine/tokenizer/wordpiece.h"

namespace inferscope {
namespace {

using tok::kSpmSpace;
using tok::replace_all;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool is_ascii_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Result<std::shared_ptr<const Tokenizer>> Tokenizer::from_gguf(const gguf::File& file) {
  Result<std::unique_ptr<tok::Vocab>> vocab = tok::Vocab::load(file);
  if (!vocab) return vocab.status();
  std::shared_ptr<Tokenizer> tokenizer(new Tokenizer());
  tokenizer->vocab_ = std::move(vocab).value();
  const tok::Vocab& v = *tokenizer->vocab_;
  switch (v.kind()) {
    case tok::VocabKind::kSentencePiece:
      tokenizer->spm_ = std::make_unique<tok::SpmModel>(v);
      break;
    case tok::VocabKind::kBytePairEncoding: {
      Result<std::unique_ptr<tok::BpeModel>> bpe = tok::BpeModel::create(v, file);
      if (!bpe) return bpe.status();
      tokenizer->bpe_ = std::move(bpe).value();
      break;
    }
    case tok::VocabKind::kWordPiece:
      tokenizer->wordpiece_ = std::make_unique<tok::WordPieceModel>(v);
      break;
  }
  return std::shared_ptr<const Tokenizer>(std::move(tokenizer));
}

TokenizerKind Tokenizer::kind() const {
  switch (vocab_->kind()) {
    case tok::VocabKind::kSentencePiece: return TokenizerKind::SentencePiece;
    case tok::VocabKind::kBytePairEncoding: return TokenizerKind::BytePairEncoding;
    case tok::VocabKind::kWordPiece: return TokenizerKind::WordPiece;
  }
  return TokenizerKind::SentencePiece;
}

const std::string& Tokenizer::model_name() const { return vocab_->model_name(); }
const std::string& Tokenizer::pre_name() const { return vocab_->pre_name(); }
int32_t Tokenizer::n_vocab() const { return vocab_->size(); }
int32_t Tokenizer::bos_id() const { return vocab_->bos_id(); }
int32_t Tokenizer::eos_id() const { return vocab_->eos_id(); }
int32_t Tokenizer::eot_id() const { return vocab_->eot_id(); }
bool Tokenizer::add_bos() const { return vocab_->add_bos(); }
bool Tokenizer::adds_space_prefix() const { return spm_ && vocab_->add_space_prefix(); }

bool Tokenizer::spaces_as_u2581() const { return spm_ || (bpe_ && bpe_->pre_tokenizer().traits().spm_style); }
bool Tokenizer::add_eos() const { return vocab_->add_eos(); }
bool Tokenizer::is_end_of_generation(int32_t id) const { return vocab_->is_end_of_generation(id); }
bool Tokenizer::is_valid(int32_t id) const { return vocab_->is_valid(id); }
const std::vector<std::string>& Tokenizer::load_warnings() const { return vocab_->warnings(); }

bool Tokenizer::is_control(int32_t id) const {
  return is_valid(id) && (vocab_->token(id).attr & (tok::kAttrControl | tok::kAttrUnknown)) != 0;
}

bool Tokenizer::is_hidden_in_generated_text(int32_t id) const {
  return is_valid(id) && (vocab_->token(id).attr & tok::kAttrControl) != 0;
}

const std::string& Tokenizer::token_text(int32_t id) const {
  static const std::string empty;
  return is_valid(id) ? vocab_->token(id).text : empty;
}

std::vector<Tokenizer::Fragment> Tokenizer::partition(std::string_view text, bool parse_special) const {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({-1, 0, text.size()});
  std::vector<Fragment> next;
  for (int32_t id : vocab_->special_tokens()) {
    const tok::TokenData& special = vocab_->token(id);
    // Without parse_special only user-defined tokens are cut out.
    if (!parse_special && (special.attr & (tok::kAttrControl | tok::kAttrUnknown))) continue;
    const std::string_view needle = special.text;
    next.clear();
    for (const Fragment& f : fragments) {
      if (f.token >= 0 || f.length < needle.size()) {
        next.push_back(f);
        continue;
      }
      size_t offset = f.offset;
      size_t length = f.length;
      const std::string_view haystack = text.substr(f.offset, f.length);
      size_t search_from = 0;
      for (;;) {
        const size_t hit = haystack.find(needle, search_from);
        if (hit == std::string_view::npos) break;
        const size_t match = f.offset + hit;
        size_t left_length = match - offset;
        if (special.attr & tok::kAttrLstrip) {
          while (left_length > 0 && is_ascii_space(text[offset + left_length - 1])) --left_length;
        }
        if (left_length > 0) next.push_back({-1, offset, left_length});
        next.push_back({id, match, needle.size()});
        offset = match + needle.size();
        length = f.offset + f.length - offset;
        if (special.attr & tok::kAttrRstrip) {
          while (length > 0 && is_ascii_space(text[offset])) {
            ++offset;
            --length;
          }
        }
        search_from = offset - f.offset;
      }
      if (length > 0) next.push_back({-1, offset, length});
    }
    fragments.swap(next);
  }
  return fragments;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  const tok::Vocab& v = *vocab_;
  const std::vector<Fragment> fragments = partition(text, parse_special);
  switch (v.kind()) {
    case tok::VocabKind::kSentencePiece: {
      // The prefix space goes before the first text and before text that follows a special token.
      bool prev_special = true;
      if (add_special && v.add_bos() && v.bos_id() >= 0) out.push_back(v.bos_id());
      std::string escaped;
      for (const Fragment& f : fragments) {
        if (f.token >= 0) {
          out.push_back(f.token);
          prev_special = true;
          continue;
        }
        escaped.clear();
        if (v.add_space_prefix() && prev_special) escaped.push_back(' ');
        escaped.append(text.substr(f.offset, f.length));
        replace_all(escaped, " ", kSpmSpace);
        spm_->encode(escaped, out);
        prev_special = false;
      }
      if (add_special && v.add_eos() && v.eos_id() >= 0) out.push_back(v.eos_id());
      break;
    }
    case tok::VocabKind::kBytePairEncoding:
      if (add_special && v.add_bos() && v.bos_id() >= 0) out.push_back(v.bos_id());
      for (const Fragment& f : fragments) {
        if (f.token >= 0) {
          out.push_back(f.token);
        } else {
          bpe_->encode(text.substr(f.offset, f.length), out);
        }
      }
      if (add_special && v.add_eos() && v.eos_id() >= 0) out.push_back(v.eos_id());
      break;
    case tok::VocabKind::kWordPiece: {
      // [CLS] is the BOS id unless the file names a separate CLS token.
      const int32_t cls = v.cls_id() >= 0 ? v.cls_id() : v.bos_id();
      if (add_special && cls >= 0) out.push_back(cls);
      for (const Fragment& f : fragments) {
        if (f.token >= 0) {
          out.push_back(f.token);
        } else {
          wordpiece_->encode(text.substr(f.offset, f.length), out);
        }
      }
      if (add_special && v.sep_id() >= 0) out.push_back(v.sep_id());
      break;
    }
  }
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id) const {
  if (!is_valid(id)) return {};
  const tok::TokenData& t = vocab_->token(id);
  if (t.attr & (tok::kAttrControl | tok::kAttrUserDefined | tok::kAttrUnknown)) return t.text;
  if (t.attr & tok::kAttrByte) {
    // <0xAB>
    if (t.text.size() == 6 && t.text.compare(0, 3, "<0x") == 0 && t.text[5] == '>') {
      const int hi = hex_value(t.text[3]), lo = hex_value(t.text[4]);
      if (hi >= 0 && lo >= 0) return std::string(1, static_cast<char>(hi * 16 + lo));
    }
    return t.text;
  }
  if (!(t.attr & tok::kAttrNormal)) return {};  // unused / undefined
  switch (vocab_->kind()) {
    case tok::VocabKind::kSentencePiece:
    case tok::VocabKind::kWordPiece: {
      std::string piece = t.text;
      replace_all(piece, kSpmSpace, " ");
      return piece;
    }
    case tok::VocabKind::kBytePairEncoding: {
      std::string piece;
      if (bpe_->pre_tokenizer().traits().spm_style) {  // gemma4: U+2581 for spaces, UTF-8 otherwise
        piece = t.text;
        replace_all(piece, kSpmSpace, " ");
        return piece;
      }
      piece.reserve(t.text.size());
      for (size_t pos = 0; pos < t.text.size();) {
        uint32_t cp = 0;
        const size_t n = tok::utf8_decode(t.text, pos, &cp);
        const int byte = tok::gpt2_char_to_byte(cp);
        if (byte >= 0) {
          piece.push_back(static_cast<char>(byte));
        } else {
          piece.append(t.text, pos, n);  // not a byte-level character: keep it as it is
        }
        pos += n;
      }
      return piece;
    }
  }
  return {};
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  if (vocab_->kind() != tok::VocabKind::kWordPiece) {
    for (int32_t id : ids) out += token_to_piece(id);
    return out;
  }
  for (int32_t id : ids) {
    if (!is_valid(id)) continue;
    if (is_control(id)) out.push_back(' ');  // [CLS], [SEP], ... stand as words of their own
    out += token_to_piece(id);
  }
  if (!out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

}  // namespace inferscope

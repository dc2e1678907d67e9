// Regex: recursive-descent parser to a small syntax tree, compiled to a backtracking program
// (split/jump instructions in priority order), run with an explicit stack.
#include "engine/tokenizer/regex.h"

#include <limits>

#include "engine/tokenizer/unicode.h"

namespace inferscope::tok {

namespace {

constexpr int kUnbounded = std::numeric_limits<int>::max();

struct Node {
  enum Kind { kEmpty, kClass, kConcat, kAlternation, kRepeat, kLook, kBegin, kEnd };
  Kind kind = kEmpty;
  int class_index = -1;
  int min = 1, max = 1;  // kRepeat
  bool negate = false;   // kLook
  std::vector<Node> children;
};

bool nullable(const Node& n) {
  switch (n.kind) {
    case Node::kEmpty:
    case Node::kLook:
    case Node::kBegin:
    case Node::kEnd:
      return true;
    case Node::kClass:
      return false;
    case Node::kConcat:
      for (const Node& c : n.children) {
        if (!nullable(c)) return false;
      }
      return true;
    case Node::kAlternation:
      for (const Node& c : n.children) {
        if (nullable(c)) return true;
      }
      return false;
    case Node::kRepeat:
      return n.min == 0 || nullable(n.children[0]);
  }
  return true;
}

}  // namespace

class RegexParser {
 public:
  RegexParser(std::string_view pattern, Regex& regex)
      : cps_(utf8_to_codepoints(pattern)), regex_(regex) {}

  Status parse(Node* root) {
    INFERSCOPE_RETURN_IF_ERROR(parse_alternation(root));
    if (pos_ != cps_.size()) return fail("unbalanced ')'");
    return Status::ok();
  }

 private:
  using ClassItem = Regex::ClassItem;

  Status fail(const std::string& what) const {
    return Status::error("regex '" + regex_.pattern_ + "': " + what + " at code point " + std::to_string(pos_));
  }
  bool at_end() const { return pos_ >= cps_.size(); }
  uint32_t peek() const { return cps_[pos_]; }

  Status parse_alternation(Node* out) {
    Node alt;
    alt.kind = Node::kAlternation;
    for (;;) {
      Node seq;
      INFERSCOPE_RETURN_IF_ERROR(parse_sequence(&seq));
      alt.children.push_back(std::move(seq));
      if (!at_end() && peek() == '|') {
        ++pos_;
        continue;
      }
      break;
    }
    *out = alt.children.size() == 1 ? std::move(alt.children[0]) : std::move(alt);
    return Status::ok();
  }

  Status parse_sequence(Node* out) {
    Node seq;
    seq.kind = Node::kConcat;
    while (!at_end() && peek() != '|' && peek() != ')') {
      Node atom;
      INFERSCOPE_RETURN_IF_ERROR(parse_atom(&atom));
      INFERSCOPE_RETURN_IF_ERROR(parse_quantifier(&atom));
      seq.children.push_back(std::move(atom));
    }
    *out = std::move(seq);
    return Status::ok();
  }

  Status parse_quantifier(Node* atom) {
    if (at_end()) return Status::ok();
    int min = 1, max = 1;
    const uint32_t c = peek();
    if (c == '?') {
      min = 0;
    } else if (c == '*') {
      min = 0;
      max = kUnbounded;
    } else if (c == '+') {
      max = kUnbounded;
    } else if (c == '{') {
      size_t save = pos_;
      ++pos_;
      int n = 0, m = 0;
      if (!parse_number(&n)) {
        pos_ = save;  // a literal '{'
        return Status::ok();
      }
      m = n;
      if (!at_end() && peek() == ',') {
        ++pos_;
        if (!at_end() && peek() == '}') {
          m = kUnbounded;
        } else if (!parse_number(&m)) {
          return fail("bad {n,m} quantifier");
        }
      }
      if (at_end() || peek() != '}') return fail("unterminated {n,m} quantifier");
      if (m < n) return fail("{n,m} with m < n");
      min = n;
      max = m;
    } else {
      return Status::ok();
    }
    ++pos_;
    if (!at_end() && (peek() == '?' || peek() == '+')) return fail("lazy/possessive quantifiers are not supported");
    if (atom->kind == Node::kLook || atom->kind == Node::kBegin || atom->kind == Node::kEnd) {
      return fail("quantified assertion");
    }
    if (max == kUnbounded && nullable(*atom)) return fail("unbounded repetition of an empty-matching expression");
    if (max != kUnbounded && max > 1000) return fail("repetition count too large");
    Node rep;
    rep.kind = Node::kRepeat;
    rep.min = min;
    rep.max = max;
    rep.children.push_back(std::move(*atom));
    *atom = std::move(rep);
    return Status::ok();
  }

  bool parse_number(int* value) {
    size_t start = pos_;
    long v = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<long>(peek() - '0');
      if (v > 100000) return false;
      ++pos_;
    }
    *value = static_cast<int>(v);
    return pos_ > start;
  }

  Status parse_atom(Node* out) {
    const uint32_t c = peek();
    if (c == '(') {
      ++pos_;
      Node inner;
      bool look = false, negate = false;
      if (pos_ + 1 < cps_.size() && peek() == '?') {
        const uint32_t kind = cps_[pos_ + 1];
        if (kind == ':') {
          pos_ += 2;
        } else if (kind == '=' || kind == '!') {
          look = true;
          negate = kind == '!';
          pos_ += 2;
        } else {
          return fail("unsupported group syntax (?" + std::string(1, static_cast<char>(kind)));
        }
      }
      INFERSCOPE_RETURN_IF_ERROR(parse_alternation(&inner));
      if (at_end() || peek() != ')') return fail("missing ')'");
      ++pos_;
      if (look) {
        out->kind = Node::kLook;
        out->negate = negate;
        out->children.push_back(std::move(inner));
      } else {
        *out = std::move(inner);
      }
      return Status::ok();
    }
    if (c == '[') return parse_class(out);
    if (c == ')' || c == '|') return fail("unexpected character");
    if (c == '*' || c == '+' || c == '?') return fail("quantifier without an operand");
    ++pos_;
    if (c == '^') {
      out->kind = Node::kBegin;
      return Status::ok();
    }
    if (c == '$') {
      out->kind = Node::kEnd;
      return Status::ok();
    }
    Regex::CharClass cls;
    if (c == '.') {
      // Any code point but line terminators (ECMAScript).
      cls.negate = true;
      cls.items.push_back({ClassItem::kRange, '\n', '\n'});
      cls.items.push_back({ClassItem::kRange, '\r', '\r'});
      cls.items.push_back({ClassItem::kRange, 0x2028, 0x2029});
    } else if (c == '\\') {
      ClassItem item;
      INFERSCOPE_RETURN_IF_ERROR(parse_escape(&item));
      cls.items.push_back(item);
    } else {
      cls.items.push_back({ClassItem::kRange, c, c});
    }
    out->kind = Node::kClass;
    out->class_index = add_class(std::move(cls));
    return Status::ok();
  }

  // The escape after a backslash (pos_ just past the backslash).
  Status parse_escape(ClassItem* item) {
    if (at_end()) return fail("trailing backslash");
    const uint32_t e = cps_[pos_++];
    switch (e) {
      case 's': item->kind = ClassItem::kSpace; return Status::ok();
      case 'S': item->kind = ClassItem::kNotSpace; return Status::ok();
      case 'd': item->kind = ClassItem::kDigit; return Status::ok();
      case 'D': item->kind = ClassItem::kNotDigit; return Status::ok();
      case 'w': item->kind = ClassItem::kWord; return Status::ok();
      case 'W': item->kind = ClassItem::kNotWord; return Status::ok();
      case 'r': *item = {ClassItem::kRange, '\r', '\r'}; return Status::ok();
      case 'n': *item = {ClassItem::kRange, '\n', '\n'}; return Status::ok();
      case 't': *item = {ClassItem::kRange, '\t', '\t'}; return Status::ok();
      case 'f': *item = {ClassItem::kRange, '\f', '\f'}; return Status::ok();
      case 'v': *item = {ClassItem::kRange, '\v', '\v'}; return Status::ok();
      case '0': *item = {ClassItem::kRange, 0, 0}; return Status::ok();
      case 'p':
      case 'P': {
        if (at_end() || peek() != '{') return fail("expected '{' after \\p");
        ++pos_;
        std::string name;
        while (!at_end() && peek() != '}') name.push_back(static_cast<char>(cps_[pos_++]));
        if (at_end()) return fail("unterminated \\p{...}");
        ++pos_;
        const uint32_t mask = category_mask(name);
        if (mask == 0) return fail("unsupported Unicode category \\p{" + name + "}");
        item->kind = e == 'p' ? ClassItem::kCategory : ClassItem::kNotCategory;
        item->lo = mask;
        return Status::ok();
      }
      default:
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '1' && e <= '9')) {
          return fail("unsupported escape \\" + std::string(1, static_cast<char>(e)));
        }
        *item = {ClassItem::kRange, e, e};  // escaped punctuation stands for itself
        return Status::ok();
    }
  }

  static uint32_t category_mask(const std::string& name) {
    if (name == "L") return kCatLetter;
    if (name == "N") return kCatNumber;
    if (name == "P") return kCatPunctuation;
    if (name == "S") return kCatSymbol;
    if (name == "M") return kCatMark;
    if (name == "Z") return kCatSeparator;
    if (name == "C") return kCatOther;
    if (name == "Lu") return kCatUpper;
    if (name == "Ll") return kCatLower;
    if (name == "Lt") return kCatTitle;
    if (name == "Lm") return kCatModifierLetter;
    if (name == "Lo") return kCatOtherLetter;
    if (name == "Nd") return kCatDecimal;
    return 0;
  }

  Status parse_class(Node* out) {
    ++pos_;  // '['
    Regex::CharClass cls;
    if (!at_end() && peek() == '^') {
      cls.negate = true;
      ++pos_;
    }
    bool first = true;
    for (;;) {
      if (at_end()) return fail("unterminated character class");
      uint32_t c = peek();
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      ClassItem lo;
      if (c == '\\') {
        ++pos_;
        INFERSCOPE_RETURN_IF_ERROR(parse_escape(&lo));
      } else {
        ++pos_;
        lo = {ClassItem::kRange, c, c};
      }
      // A range "a-b" (a '-' before ']' is literal).
      if (lo.kind == ClassItem::kRange && pos_ + 1 < cps_.size() && peek() == '-' && cps_[pos_ + 1] != ']') {
        ++pos_;
        ClassItem hi;
        if (peek() == '\\') {
          ++pos_;
          INFERSCOPE_RETURN_IF_ERROR(parse_escape(&hi));
        } else {
          hi = {ClassItem::kRange, peek(), peek()};
          ++pos_;
        }
        if (hi.kind != ClassItem::kRange || hi.lo < lo.lo) return fail("bad range in character class");
        lo.hi = hi.lo;
      }
      cls.items.push_back(lo);
    }
    out->kind = Node::kClass;
    out->class_index = add_class(std::move(cls));
    return Status::ok();
  }

  int add_class(Regex::CharClass cls) {
    for (uint32_t cp = 0; cp < 128; ++cp) {
      if (cls.matches_slow(cp)) cls.ascii[cp >> 6] |= uint64_t{1} << (cp & 63);
    }
    regex_.classes_.push_back(std::move(cls));
    return static_cast<int>(regex_.classes_.size() - 1);
  }

  std::vector<uint32_t> cps_;
  size_t pos_ = 0;
  Regex& regex_;
};

bool Regex::CharClass::matches_slow(uint32_t cp) const {
  bool hit = false;
  for (const ClassItem& item : items) {
    switch (item.kind) {
      case ClassItem::kRange: hit = cp >= item.lo && cp <= item.hi; break;
      case ClassItem::kCategory: hit = (category_bits(cp) & item.lo) != 0; break;
      case ClassItem::kNotCategory: hit = (category_bits(cp) & item.lo) == 0; break;
      case ClassItem::kSpace: hit = cp == ' ' || (cp >= 0x09 && cp <= 0x0D); break;
      case ClassItem::kNotSpace: hit = !(cp == ' ' || (cp >= 0x09 && cp <= 0x0D)); break;
      case ClassItem::kDigit: hit = cp >= '0' && cp <= '9'; break;
      case ClassItem::kNotDigit: hit = !(cp >= '0' && cp <= '9'); break;
      case ClassItem::kWord:
      case ClassItem::kNotWord: {
        const bool word = (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
        hit = item.kind == ClassItem::kWord ? word : !word;
        break;
      }
    }
    if (hit) break;
  }
  return hit != negate;
}

bool Regex::CharClass::matches(uint32_t cp) const {
  if (cp < 128) return (ascii[cp >> 6] >> (cp & 63)) & 1;
  return matches_slow(cp);
}

// Emits instructions for a syntax tree. Lookahead bodies are compiled after the main program.
class RegexCompiler {
 public:
  explicit RegexCompiler(std::vector<Regex::Inst>& program) : program_(program) {}

  void compile_root(const Node& root) {
    emit(root);
    program_.push_back({Regex::Op::kMatch});
    // Lookahead bodies: each its own sub-program ending in kMatch (may queue more).
    for (size_t i = 0; i < pending_.size(); ++i) {
      const auto [inst_index, node] = pending_[i];
      program_[inst_index].x = static_cast<int32_t>(program_.size());
      emit(*node);
      program_.push_back({Regex::Op::kMatch});
    }
  }

 private:
  int32_t here() const { return static_cast<int32_t>(program_.size()); }

  void emit(const Node& n) {
    switch (n.kind) {
      case Node::kEmpty:
        break;
      case Node::kClass:
        program_.push_back({Regex::Op::kClass, false, n.class_index, 0});
        break;
      case Node::kBegin:
        program_.push_back({Regex::Op::kAssertBegin});
        break;
      case Node::kEnd:
        program_.push_back({Regex::Op::kAssertEnd});
        break;
      case Node::kConcat:
        for (const Node& c : n.children) emit(c);
        break;
      case Node::kLook:
        pending_.emplace_back(program_.size(), &n.children[0]);
        program_.push_back({Regex::Op::kLook, n.negate, 0, 0});
        break;
      case Node::kAlternation: {
        std::vector<size_t> exits;
        for (size_t i = 0; i < n.children.size(); ++i) {
          const bool last = i + 1 == n.children.size();
          size_t split = 0;
          if (!last) {
            split = program_.size();
            program_.push_back({Regex::Op::kSplit, false, here() + 1, 0});
          }
          emit(n.children[i]);
          if (!last) {
            exits.push_back(program_.size());
            program_.push_back({Regex::Op::kJump, false, 0, 0});
            program_[split].y = here();
          }
        }
        for (size_t e : exits) program_[e].x = here();
        break;
      }
      case Node::kRepeat: {
        const Node& body = n.children[0];
        if (body.kind == Node::kClass) {
          // A run of one class backtracks by shortening, with no frame per character.
          program_.push_back({Regex::Op::kClassRepeat, false, body.class_index, n.min, n.max});
          break;
        }
        for (int i = 0; i < n.min; ++i) emit(body);
        if (n.max == kUnbounded) {
          const int32_t loop = here();
          program_.push_back({Regex::Op::kSplit, false, loop + 1, 0});
          emit(body);
          program_.push_back({Regex::Op::kJump, false, loop, 0});
          program_[loop].y = here();
        } else {
          std::vector<size_t> splits;
          for (int i = n.min; i < n.max; ++i) {
            splits.push_back(program_.size());
            program_.push_back({Regex::Op::kSplit, false, here() + 1, 0});
            emit(body);
          }
          for (size_t s : splits) program_[s].y = here();
        }
        break;
      }
    }
  }

  std::vector<Regex::Inst>& program_;
  std::vector<std::pair<size_t, const Node*>> pending_;
};

Result<Regex> Regex::compile(std::string_view pattern) {
  Regex regex;
  regex.pattern_ = std::string(pattern);
  Node root;
  {
    RegexParser parser(pattern, regex);
    Status st = parser.parse(&root);
    if (!st.is_ok()) return st;
  }
  RegexCompiler compiler(regex.program_);
  compiler.compile_root(root);
  return regex;
}

bool Regex::run(int32_t start_pc, const uint32_t* subject, size_t length, size_t start_pos, size_t* end,
                std::vector<Frame>& stack) const {
  // Frames below `base` belong to an enclosing run (lookahead evaluation nests on one stack).
  const size_t base = stack.size();
  stack.push_back({start_pc, false, start_pos, 0});
  while (stack.size() > base) {
    Frame f = stack.back();
    stack.pop_back();
    int32_t pc = f.pc;
    size_t pos = f.pos;
    if (f.run && f.pos > f.low) stack.push_back({f.pc, true, f.pos - 1, f.low});
    for (;;) {
      const Inst& inst = program_[pc];
      bool ok = true;
      switch (inst.op) {
        case Op::kClass:
          ok = pos < length && classes_[inst.x].matches(subject[pos]);
          if (ok) {
            ++pos;
            ++pc;
          }
          break;
        case Op::kClassRepeat: {
          const CharClass& cls = classes_[inst.x];
          const size_t max = static_cast<size_t>(inst.z);
          size_t n = 0;
          while (n < max && pos + n < length && cls.matches(subject[pos + n])) ++n;
          const auto min = static_cast<size_t>(inst.y);
          ok = n >= min;
          if (ok) {
            if (n > min) stack.push_back({pc + 1, true, pos + n - 1, pos + min});
            pos += n;
            ++pc;
          }
          break;
        }
        case Op::kSplit:
          stack.push_back({inst.y, false, pos, 0});
          pc = inst.x;
          break;
        case Op::kJump:
          pc = inst.x;
          break;
        case Op::kAssertBegin:
          ok = pos == 0;
          ++pc;
          break;
        case Op::kAssertEnd:
          ok = pos == length;
          ++pc;
          break;
        case Op::kLook:
          ok = run(inst.x, subject, length, pos, nullptr, stack) != inst.negate;
          ++pc;
          break;
        case Op::kMatch:
          if (end) *end = pos;
          stack.resize(base);
          return true;
      }
      if (!ok) break;
    }
  }
  return false;
}

bool Regex::search(const uint32_t* subject, size_t length, size_t from, size_t* begin, size_t* end) const {
  thread_local std::vector<Frame> stack;
  stack.clear();
  for (size_t start = from; start < length; ++start) {
    if (run(0, subject, length, start, end, stack)) {
      *begin = start;
      return true;
    }
  }
  return false;
}

}  // namespace inferscope::tok

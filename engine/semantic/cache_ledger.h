// The semantic cache's bookkeeping of every entry, in every scope (loaded or not): its size,
// expiry, hits and place in least-recently-used order. Eviction, expiry and stats() read it;
// it holds no prompt text and no vector, so it stays small for a large cache.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace inferscope::semantic {

struct LedgerEntry {
  std::string scope_key;
  std::int64_t bytes = 0;
  std::int64_t hits = 0;
  std::int64_t created_at = 0;    // Unix ms
  std::int64_t last_used_at = 0;  // Unix ms
  std::int64_t expires_at = 0;    // Unix ms; served while now < expires_at
};

struct CacheLimits {
  std::size_t max_entries = 0;
  std::int64_t max_bytes = 0;
};

class CacheLedger {
 public:
  CacheLedger() = default;
  // Slots hold iterators into lru_: a copy would point into the original. Moves keep them valid.
  CacheLedger(const CacheLedger&) = delete;
  CacheLedger& operator=(const CacheLedger&) = delete;
  CacheLedger(CacheLedger&&) = default;
  CacheLedger& operator=(CacheLedger&&) = default;

  // Becomes the most recently used entry. `id` must be new.
  void add(std::int64_t id, LedgerEntry entry);
  // One more hit at now_ms; becomes the most recently used.
  void touch(std::int64_t id, std::int64_t now_ms);
  void remove(std::int64_t id);
  void clear();

  const LedgerEntry* find(std::int64_t id) const;
  // Entries whose expires_at <= now_ms.
  std::vector<std::int64_t> expired(std::int64_t now_ms) const;
  // What must go so one more entry of `incoming_bytes` fits the limits: every expired entry,
  // then the least recently used ones. `already_going` leave anyway (counted, not listed).
  std::vector<std::int64_t> victims(std::int64_t incoming_bytes, const CacheLimits& limits, std::int64_t now_ms,
                                    const std::vector<std::int64_t>& already_going = {}) const;
  std::vector<std::int64_t> ids_of_scope(const std::string& scope_key) const;
  // visit(id, entry) from the most recently used down, until it returns false.
  void visit_most_recent_first(const std::function<bool(std::int64_t, const LedgerEntry&)>& visit) const;

  std::size_t entries() const { return slots_.size(); }
  std::int64_t bytes() const { return bytes_; }

 private:
  struct Slot {
    LedgerEntry entry;
    std::list<std::int64_t>::iterator place;  // in lru_
  };
  std::unordered_map<std::int64_t, Slot> slots_;
  std::list<std::int64_t> lru_;                                 // least recently used first
  std::set<std::pair<std::int64_t, std::int64_t>> by_expiry_;  // (expires_at, id)
  std::int64_t bytes_ = 0;
};

}  // namespace inferscope::semantic

#include "engine/semantic/cache_ledger.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace inferscope::semantic {

void CacheLedger::add(std::int64_t id, LedgerEntry entry) {
  bytes_ += entry.bytes;
  by_expiry_.emplace(entry.expires_at, id);
  lru_.push_back(id);
  slots_.emplace(id, Slot{std::move(entry), std::prev(lru_.end())});
}

void CacheLedger::touch(std::int64_t id, std::int64_t now_ms) {
  auto found = slots_.find(id);
  if (found == slots_.end()) return;
  found->second.entry.hits += 1;
  found->second.entry.last_used_at = now_ms;
  lru_.splice(lru_.end(), lru_, found->second.place);
}

void CacheLedger::remove(std::int64_t id) {
  auto found = slots_.find(id);
  if (found == slots_.end()) return;
  bytes_ -= found->second.entry.bytes;
  by_expiry_.erase({found->second.entry.expires_at, id});
  lru_.erase(found->second.place);
  slots_.erase(found);
}

void CacheLedger::clear() {
  slots_.clear();
  lru_.clear();
  by_expiry_.clear();
  bytes_ = 0;
}

const LedgerEntry* CacheLedger::find(std::int64_t id) const {
  auto found = slots_.find(id);
  return found == slots_.end() ? nullptr : &found->second.entry;
}

std::vector<std::int64_t> CacheLedger::expired(std::int64_t now_ms) const {
  std::vector<std::int64_t> ids;
  const auto end = by_expiry_.upper_bound({now_ms, std::numeric_limits<std::int64_t>::max()});
  for (auto it = by_expiry_.begin(); it != end; ++it) ids.push_back(it->second);
  return ids;
}

std::vector<std::int64_t> CacheLedger::victims(std::int64_t incoming_bytes, const CacheLimits& limits,
                                               std::int64_t now_ms, const std::vector<std::int64_t>& already_going) const {
  std::unordered_set<std::int64_t> gone;
  std::size_t entries_left = slots_.size();
  std::int64_t bytes_left = bytes_;
  std::vector<std::int64_t> chosen;
  auto drop = [&](std::int64_t id, bool list_it) {
    auto found = slots_.find(id);
    if (found == slots_.end() || !gone.insert(id).second) return;
    entries_left -= 1;
    bytes_left -= found->second.entry.bytes;
    if (list_it) chosen.push_back(id);
  };
  for (std::int64_t id : already_going) drop(id, false);
  for (std::int64_t id : expired(now_ms)) drop(id, true);
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (entries_left + 1 <= limits.max_entries && bytes_left + incoming_bytes <= limits.max_bytes) break;
    drop(*it, true);
  }
  return chosen;
}

std::vector<std::int64_t> CacheLedger::ids_of_scope(const std::string& scope_key) const {
  std::vector<std::int64_t> ids;
  for (const auto& [id, slot] : slots_) {
    if (slot.entry.scope_key == scope_key) ids.push_back(id);
  }
  return ids;
}

void CacheLedger::visit_most_recent_first(const std::function<bool(std::int64_t, const LedgerEntry&)>& visit) const {
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
    if (!visit(*it, slots_.at(*it).entry)) return;
  }
}

}  // namespace inferscope::semantic

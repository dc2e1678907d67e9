#include "engine/semantic/vector_index.h"

#include <string>

namespace inferscope::semantic {

Status dimension_mismatch(std::size_t expected, std::size_t got) {
  return Status::error("embedding has " + std::to_string(got) + " dimensions, this index holds " +
                       std::to_string(expected) + "-dimensional vectors (was the embedding model changed?)");
}

}  // namespace inferscope::semantic

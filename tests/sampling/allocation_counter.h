// Allocation counting for the calling thread, for tests that assert "no allocations in this
// section". test_allocation_counter.cpp replaces every form of the global operator new and
// delete (plain, array, nothrow, aligned, sized) and counts the news between start() and stop().
#pragma once

namespace inferscope::alloc_counter {

void start();
long stop();  // allocations since start()

}  // namespace inferscope::alloc_counter

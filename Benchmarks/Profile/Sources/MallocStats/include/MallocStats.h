// Bytes the process's heap has handed out and not taken back, for the soak mode of
// HotPathProfile: what grows per use shows here, whatever the allocator keeps cached.
#ifndef MALLOC_STATS_H
#define MALLOC_STATS_H

#include <stddef.h>

// Bytes in use in malloc's heap (glibc: `mallinfo2().uordblks`, every arena; Apple platforms:
// the default zone's `size_in_use`); elsewhere the resident set size, and 0 where that is not
// known either.
size_t profile_heap_bytes_in_use(void);

// Whether `profile_heap_bytes_in_use` counts heap bytes (1) or falls back to the resident set (0).
int profile_heap_bytes_are_exact(void);

// Keeps the calling thread, and the threads it and they make from now on, on the processor it
// runs on (Linux; elsewhere nothing): the soak's operations that hand work to another thread
// then cost the same at every use.
void profile_run_on_one_processor(void);

#endif

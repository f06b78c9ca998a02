// glibc declares sched_getcpu and the CPU_* macros only with it.
#define _GNU_SOURCE
#include "MallocStats.h"

#if defined(__linux__)
#include <sched.h>

void profile_run_on_one_processor(void) {
  int processor = sched_getcpu();
  if (processor < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(processor, &set);
  sched_setaffinity(0, sizeof set, &set);
}
#else
void profile_run_on_one_processor(void) {}
#endif

// Any C library header: it defines __GLIBC__ on glibc.
#include <stdlib.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>

size_t profile_heap_bytes_in_use(void) { return mallinfo2().uordblks; }
int profile_heap_bytes_are_exact(void) { return 1; }

#elif defined(__APPLE__)
#include <malloc/malloc.h>

size_t profile_heap_bytes_in_use(void) {
  malloc_statistics_t stats;
  malloc_zone_statistics(NULL, &stats);
  return stats.size_in_use;
}
int profile_heap_bytes_are_exact(void) { return 1; }

#elif defined(__linux__)
#include <stdio.h>
#include <unistd.h>

// The resident set, from /proc/self/statm (its second field, in pages).
size_t profile_heap_bytes_in_use(void) {
  FILE *file = fopen("/proc/self/statm", "r");
  if (file == NULL) return 0;
  unsigned long size = 0, resident = 0;
  int read = fscanf(file, "%lu %lu", &size, &resident);
  fclose(file);
  return read == 2 ? (size_t)resident * (size_t)sysconf(_SC_PAGESIZE) : 0;
}
int profile_heap_bytes_are_exact(void) { return 0; }

#else
size_t profile_heap_bytes_in_use(void) { return 0; }
int profile_heap_bytes_are_exact(void) { return 0; }
#endif

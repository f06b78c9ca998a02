// Each thread's own pointers, for ChainBind's `ThreadLocalPointer` (Platform.swift): a C
// thread-local variable is read and written in a few instructions, where a pthread key costs a
// call into the C library for each.
//
// Header only, so that no C file is compiled (its debug information would be DWARF 5, which
// valgrind 3.19 cannot read). The slots are `static`: each object file this function is compiled
// into has slots of its own, so Platform.swift is the only file that imports this module, and
// only two never-inlined functions there call it.
#ifndef CHAINBIND_THREAD_LOCAL_H
#define CHAINBIND_THREAD_LOCAL_H

// How many slots there are: `ThreadLocalPointer.Slot` has at most this many cases.
#define CHAINBIND_THREAD_SLOT_COUNT 8

// This thread's slots, CHAINBIND_THREAD_SLOT_COUNT of them. Declared in the function, which Swift
// calls: Swift emits what it calls, not a file-scope variable or function that it does not.
static inline void *_Nullable *_Nonnull chainbind_thread_slots(void) {
  static _Thread_local void *_Nullable slots[CHAINBIND_THREAD_SLOT_COUNT];
  return slots;
}

#endif

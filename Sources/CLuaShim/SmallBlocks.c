// Lua's small allocations (tables, strings, closures, a table's nodes) from
// free lists, one per 16-byte size class, carved from 64 KB chunks that are
// freed together when the state closes. Lua frees in bursts (a GC sweep), so
// glibc's per-size caches overflowed and most of a workflow step's 15
// allocations and frees took malloc's slow paths; closing a state freed
// every object one by one. Here both are a few instructions, and closing
// frees the chunks. Only the thread running the state allocates (the loop
// thread), so nothing is locked (docs/decisions.md, "Lua's allocator").
#include "Internal.h"

#include <stdlib.h>

// Every chunk starts with the chunk made before it.
typedef struct Chunk {
  struct Chunk *previous;
  // Keeps the blocks after the header 16-byte aligned, as malloc's are.
  _Alignas(16) unsigned char blocks[];
} Chunk;

enum { CHUNK_BYTES = 64 * 1024 };

static inline size_t size_class(size_t size) { return (size - 1) / LUNAR_SMALL_GRAIN; }

void *lunar_smallalloc(lunar_SmallBlocks *b, size_t size) {
  size_t k = size_class(size);
  void **head = b->free[k];
  if (head != NULL) {
    b->free[k] = *head;
    return head;
  }
  size_t rounded = (k + 1) * LUNAR_SMALL_GRAIN;
  if ((size_t)(b->end - b->next) < rounded) {
    Chunk *chunk = malloc(CHUNK_BYTES);
    if (chunk == NULL) return NULL;
    chunk->previous = b->chunks;
    b->chunks = chunk;
    b->next = chunk->blocks;
    b->end = (unsigned char *)chunk + CHUNK_BYTES;
  }
  void *block = b->next;
  b->next += rounded;
  return block;
}

void lunar_smallfree(lunar_SmallBlocks *b, void *block, size_t size) {
  size_t k = size_class(size);
  *(void **)block = b->free[k];
  b->free[k] = block;
}

void lunar_smallrelease(lunar_SmallBlocks *b) {
  Chunk *chunk = b->chunks;
  while (chunk != NULL) {
    Chunk *previous = chunk->previous;
    free(chunk);
    chunk = previous;
  }
  *b = (lunar_SmallBlocks){0};
}

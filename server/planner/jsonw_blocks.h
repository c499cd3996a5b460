/*
 * jsonw_blocks.h - a long run of values (an array's elements) written on two threads, in
 * order, byte for byte as one thread writes them.
 *
 * The elements are cut into blocks of `block` elements. Block 0 is written straight to w on
 * the caller's thread; the others are taken in turn by whichever of the two threads (the
 * caller's, one helper) is free: the block due next goes straight to w, a later one into a
 * fragment (jsonw.h) that the caller splices in when its turn comes. At most
 * JSONW_BLOCKS_AHEAD fragments exist at once, so memory is bounded by that many blocks'
 * text whatever the length of the run. An error in a block (whichever thread wrote it) or
 * in w's sink stops the run: w ends with the error and the text before it, as one thread
 * writing the elements in order would have left it.
 */
#ifndef TPUPLAN_JSONW_BLOCKS_H
#define TPUPLAN_JSONW_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/jsonw.h"

#define JSONW_BLOCKS_AHEAD 4 /* fragments written ahead of the one due, at most */

/*
 * Writes elements [lo, hi) to w: one value each (an array element, or a key and its value
 * in an object), the same text whichever writer and range it is given. Called on both
 * threads at once with the same ctx, which it must only read.
 */
typedef void (*jsonw_block_fn)(struct jsonw *w, const void *ctx, size_t lo, size_t hi);

/*
 * Writes elements [0, n) to w with fn, in blocks of `block` (> 0) elements, on a second
 * thread too when threaded and there are at least two blocks (else, or when no thread
 * starts, fn(w, ctx, 0, n) on the caller's thread). w's errors are sticky as ever: check
 * them with jsonw_finish.
 */
void jsonw_blocks_write(struct jsonw *w, size_t n, size_t block, jsonw_block_fn fn, const void *ctx,
                        bool threaded);

#endif

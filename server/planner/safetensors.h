/*
 * safetensors.h - import the tensor list of a safetensors file from its header.
 *
 * Format (huggingface/safetensors README; server/planner/SOURCES.md#safetensors): 8 bytes,
 * an unsigned little-endian u64 N, then N bytes of UTF-8 JSON mapping each tensor name to
 * {"dtype", "shape", "data_offsets": [begin, end)} plus an optional "__metadata__"
 * string map, then the tensor data. The input may be the whole file or only its first
 * 8 + N bytes; the tensor data is never read, only its length is checked when present.
 *
 * Checks: N <= 100,000,000 (the format's header cap) and 8 + N <= input length; every
 * data_offsets range matches shape x dtype size; the ranges tile [0, total) without gaps
 * or overlaps (as the reference implementation requires, which also catches duplicate keys
 * that a JSON parser would merge); when data follows the header, its length is total.
 *
 * Imported tensors are kind "param", live for the whole program, in header order.
 */
#ifndef TPUPLAN_SAFETENSORS_H
#define TPUPLAN_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/model.h"

#define SAFETENSORS_MAX_HEADER 100000000u /* safetensors MAX_HEADER_SIZE */

/* True when buf starts like a safetensors file: a length below the cap followed by '{'. */
bool safetensors_detect(const char *buf, size_t len);

/* The header length N in buf's first 8 bytes (little-endian); buf must hold 8 bytes. */
uint64_t safetensors_header_length(const char *buf);

/* XLA dtype of a safetensors dtype name ("BF16" -> DT_BF16); DT_INVALID when unknown or
 * without an XLA equivalent (F6_E2M3, F6_E3M2). *bits gets the stored width. */
enum dtype safetensors_dtype(const char *s, unsigned *bits);

ERR_MUST_CHECK int safetensors_parse(const char *input, size_t len, const struct model_limits *l,
                                     struct model *m, struct err *e);

#endif

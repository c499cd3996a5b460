// fixtures.mjs - synthetic plan results (server/planner/RESULT.md shape) for the browser
// tests that need a size the real planner is not asked to produce in a test run (the
// 100,000-buffer first-paint check), the two views the server makes of a result (for
// devserver.mjs), and safetensors builders.
//
// The synthetic packing is valid by construction: the heap is cut into horizontal bands and
// each band is filled left to right with buffers that never overlap in time.

import { openSync, writeSync, ftruncateSync, closeSync } from 'node:fs';

// Deterministic PRNG (mulberry32) so a failing run can be reproduced.
function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const KINDS = ['param', 'grad', 'optimizer', 'activation', 'temp', 'input', 'output'];

export function makeResult(n, { steps = 5000, bands = 400, seed = 1, capacity = 16911433728 } = {}) {
    const rand = rng(seed);
    const tensors = [];
    const perBand = Math.ceil(n / bands);
    let offset = 0;
    for (let b = 0; tensors.length < n; b++) {
        const bandSize = 512 * (64 + Math.floor(rand() * 4096));
        const kind = KINDS[b % KINDS.length];
        let t = 0;
        const mean = steps / perBand;
        for (let k = 0; k < perBand && tensors.length < n && t < steps; k++) {
            const len = Math.max(1, Math.min(steps - t, Math.round(mean * (0.3 + rand() * 1.4))));
            const padded = 512 * Math.max(1, Math.floor((bandSize / 512) * (0.4 + rand() * 0.6)));
            const logical = Math.max(1, Math.floor(padded * (0.55 + rand() * 0.45)));
            const id = tensors.length;
            tensors.push({
                id, name: `layer${b}.${kind}.t${k}`, kind, dtype: 'bf16', dims: [padded / 256, 128],
                shape: `bf16[${padded / 256},128]{1,0:T(8,128)(2,1)}`, tiles: 'T(8,128)(2,1)',
                logical_bytes: logical, padded_bytes: padded, padding_bytes: padded - logical,
                expansion: padded / logical, layout_source: 'default:bf16-T(8,128)(2,1)', confidence: 'assumed',
                live: [t, t + len], offset, tags: [],
            });
            t += len + (rand() < 0.3 ? Math.floor(rand() * 5) : 0);
        }
        offset += bandSize;
    }
    return wrap(tensors, steps, capacity);
}

// Builds summary, packing and timeline fields around a packed tensor list.
export function wrap(tensors, steps, capacity, extra = {}) {
    const live = new Float64Array(steps + 1);
    const heap = new Float64Array(steps);
    let logical = 0, padded = 0;
    const byKind = {};
    for (const t of tensors) {
        live[t.live[0]] += t.padded_bytes;
        live[t.live[1]] -= t.padded_bytes;
        logical += t.logical_bytes;
        padded += t.padded_bytes;
        const k = (byKind[t.kind] ||= { count: 0, logical_bytes: 0, padded_bytes: 0 });
        k.count++;
        k.logical_bytes += t.logical_bytes;
        k.padded_bytes += t.padded_bytes;
        const top = t.offset + t.padded_bytes;
        for (let s = t.live[0]; s < t.live[1]; s++) if (top > heap[s]) heap[s] = top;
    }
    let acc = 0, lb = 0, peakStep = 0, peak = 0;
    const liveArr = [];
    for (let s = 0; s < steps; s++) {
        acc += live[s];
        liveArr.push(acc);
        if (acc > lb) lb = acc;
        if (heap[s] > peak) {
            peak = heap[s];
            peakStep = s;
        }
    }
    const step = [], liveB = [], heapB = [], gapB = [];
    const seg = Math.max(1, Math.ceil(steps / 4096));
    for (let s = 0; s < steps; s += seg) {
        let l = 0, h = 0;
        for (let u = s; u < Math.min(steps, s + seg); u++) {
            l = Math.max(l, liveArr[u]);
            h = Math.max(h, heap[u]);
        }
        step.push(s);
        liveB.push(l);
        heapB.push(h);
        gapB.push(h - l);
    }
    const frag = peak - liveArr[peakStep];
    const peakBuffers = tensors.filter((t) => t.live[0] <= peakStep && peakStep < t.live[1]).map((t) => t.id);
    return {
        schema_version: 1,
        model: { name: extra.name || `synthetic-${tensors.length}`, source_format: 'json' },
        chip: { name: 'v5e', device_kind: 'TPU v5 lite', usable_hbm_bytes: capacity, hbm_bytes_per_device: 17179869184,
            assumptions: ['synthetic fixture: default tiling assumed'] },
        summary: {
            tensors: tensors.length, logical_bytes: logical, padded_bytes: padded, padding_bytes: padded - logical,
            expansion: padded / Math.max(1, logical), capacity_bytes: capacity, peak_bytes: peak, lower_bound_bytes: lb,
            fragmentation_bytes: frag, fragmentation: peak ? frag / peak : 0, fits: peak <= capacity,
            headroom_bytes: capacity - peak, strategy: 'xla-default', by_kind: byKind,
            assumed_layouts: tensors.filter((t) => t.confidence === 'assumed').length,
        },
        tensors,
        suggestions: extra.suggestions || [],
        packing: {
            alignment: 512, capacity_bytes: capacity, steps: [0, steps], chosen: 'xla-default',
            strategies: [
                { name: 'xla-default', peak_bytes: peak, lower_bound_bytes: lb, fragmentation_bytes: frag, fragmentation: peak ? frag / peak : 0, solved: true, proven_optimal: false, seconds: 0.2 },
                { name: 'greedy-size', peak_bytes: Math.round(peak * 1.07), lower_bound_bytes: lb, fragmentation_bytes: 0, fragmentation: 0.05, solved: true, proven_optimal: false, seconds: 0.1 },
            ],
            timeline: { step, live_bytes: liveB, heap_bytes: heapB, largest_gap_bytes: gapB, downsampled: seg > 1 },
            peak: { step: peakStep, bytes: peak, buffers: peakBuffers },
        },
        warnings: [],
    };
}

// GET /api/v1/plans/{id}?view=summary|layout of a result, as the planner writes them
// (plan_views_write in server/planner/plan/plan_views.c): the result without tensors, and the tensors as columns.
export function summaryView(r) {
    const { tensors, ...rest } = r;
    return rest;
}

export function layoutView(r) {
    const ts = r.tensors || [];
    const col = (f) => ts.map((t) => f(t) ?? null);
    const dict = (key) => {
        const values = [...new Set(ts.map((t) => t[key] ?? null))].sort((a, b) => (a === null) - (b === null) || (a < b ? -1 : a > b ? 1 : 0));
        const at = new Map(values.map((v, i) => [v, i]));
        return { values, index: ts.map((t) => at.get(t[key] ?? null)) };
    };
    const tags = {};
    ts.forEach((t, i) => Array.isArray(t.tags) && t.tags.length && (tags[i] = t.tags));
    return {
        tensors: ts.length, name: col((t) => t.name), start: col((t) => t.live?.[0]), end: col((t) => t.live?.[1]),
        offset: col((t) => t.offset), padded_bytes: col((t) => t.padded_bytes), logical_bytes: col((t) => t.logical_bytes),
        kind: dict('kind'), shape: dict('shape'), layout_source: dict('layout_source'), confidence: dict('confidence'), tags,
    };
}

// A safetensors file: 8-byte little-endian header length, the JSON header (space-padded to
// 8 bytes), then `dataBytes` of tensor data left as a sparse hole (no disk, no memory).
export function writeSafetensors(path, header, dataBytes) {
    let json = JSON.stringify(header);
    while ((8 + Buffer.byteLength(json)) % 8) json += ' ';
    const hb = Buffer.from(json, 'utf8');
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(hb.length));
    const fd = openSync(path, 'w');
    writeSync(fd, len);
    writeSync(fd, hb);
    ftruncateSync(fd, 8 + hb.length + dataBytes);
    closeSync(fd);
    return 8 + hb.length;
}

// runtime.js - the plan page's words for packing.runtime: the plan replayed through XLA's
// BFC allocator, the GPU-style runtime allocator (not what the TPU compiler does). Its curve
// is drawn by timeline.js and its row by bars.js; this writes the note under the timeline
// (limit, heap against the static peak, reserved, the first allocation that would fail on a
// GPU) and shows the curve's legend entry. It is there only when the plan asked for it
// (runtime: bfc), and worded so that it cannot be read as a TPU out-of-memory. Names come from the plan and are set as text, never markup.

import { $, fmtBytes, fmtInt, fmtPct } from './util.js';

function failure(what, f) {
    if (!f) return '';
    return ` ${what} at step ${fmtInt(f.step)}: ${f.name} needs ${fmtBytes(f.rounded_bytes)} with ${fmtBytes(f.free_bytes)} free` +
        ` (largest free chunk ${fmtBytes(f.largest_free_bytes)})` + (f.with_free_memory ? ': it would fail with free memory (fragmentation).' : ': not enough free bytes.');
}

export function renderRuntime(pk) {
    const rt = pk.runtime;
    const note = $('#runtime-note');
    if (!rt) return;
    $('#legend-runtime').classList.remove('hidden');
    $('#legend-runtime-row').classList.remove('hidden');
    note.classList.remove('hidden');
    const setup = `limit ${fmtBytes(rt.memory_limit_bytes)} = ${fmtPct(rt.memory_fraction, 0)} of ${fmtBytes(rt.device_bytes)}, ` +
        (rt.preallocate ? 'preallocated' : 'growing from 2 MiB') + (rt.jax_gpu_defaults ? " (JAX's GPU defaults)" : '');
    let text = `Asked for (runtime: bfc): the runtime behaviour of the GPU-style allocator (XLA's BFC, as JAX uses it on GPU), not what the TPU compiler does: ${setup}. ` +
        `Allocating each buffer when it starts and freeing it when it ends, its heap reaches ${fmtBytes(rt.peak_bytes)} against the static plan's ${fmtBytes(rt.static_peak_bytes)}; ` +
        `reserved ${fmtBytes(rt.peak_reserved_bytes)}, in use at most ${fmtBytes(rt.peak_in_use_bytes)}.`;
    if (!rt.first_failure) text += ' On a GPU every allocation would succeed.';
    else {
        text += ` On a GPU ${fmtInt(rt.failed_allocations)} of ${fmtInt(rt.allocations)} allocations would fail in this allocator (a GPU replay, not a TPU out-of-memory).` +
            failure('First failed GPU allocation', rt.first_failure);
        if (rt.first_oom_with_free_memory && rt.first_oom_with_free_memory.tensor !== rt.first_failure.tensor)
            text += failure('First with free memory', rt.first_oom_with_free_memory);
    }
    note.textContent = text;
}

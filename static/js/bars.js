// bars.js - the plan page's two bar lists: each strategy's peak against the lower bound
// (packing.strategies, then the runtime allocator's row from packing.runtime, XLA's own
// assignment's row from packing.xla and its report's figure from packing.xla_report:
// compared, never chosen), and padded against logical
// bytes per tensor kind (summary.by_kind).

import { el, $, fmtBytes, fmtInt, fmtPct } from './util.js';
import { KINDS } from './theme.js';

function bar(label, fills, text) {
    const track = el('div', { class: 'bar-track' });
    for (const f of fills) {
        const d = el('div', { class: 'bar-fill ' + f.cls });
        const pct = Math.max(0, Math.min(100, f.frac * 100)).toFixed(2) + '%';
        // A marker (the lower bound) sits at its value; a fill grows to it.
        if (f.marker) d.style.left = `calc(${pct} - 1px)`;
        else d.style.width = pct;
        track.append(d);
    }
    return el('div', { class: 'bar-row' }, el('div', { class: 'bar-label', text: label }), track, el('div', { class: 'bar-text', text }));
}

export function renderStrategies(pk) {
    const box = $('#strategies');
    const list = pk.strategies || [];
    if (!list.length) {
        box.append(el('p', { class: 'note', text: 'No strategy comparison in this result.' }));
        return;
    }
    const rt = pk.runtime;
    const xla = pk.xla;
    const rep = reportFigure(pk.xla_report);
    const max = Math.max(1, ...list.map((x) => Math.max(x.peak_bytes || 0, x.lower_bound_bytes || 0)), rt ? rt.peak_bytes || 0 : 0, xla ? xla.peak_bytes || 0 : 0, rep ? rep.bytes : 0);
    for (const x of list) {
        const chosen = x.name === pk.chosen;
        const over = x.lower_bound_bytes > 0 ? ` (+${fmtPct(x.peak_bytes / x.lower_bound_bytes - 1)})` : '';
        const text = x.solved === false ? 'not solved' : `${fmtBytes(x.peak_bytes)}${over} · frag ${fmtPct(x.fragmentation)}` + (x.proven_optimal ? ' · optimal' : '');
        const row = bar(x.name + (chosen ? ' (chosen)' : ''), [
            { cls: 'peak' + (chosen ? ' chosen' : ''), frac: (x.peak_bytes || 0) / max },
            { cls: 'lb', marker: true, frac: (x.lower_bound_bytes || 0) / max },
        ], text);
        row.dataset.strategy = x.name;
        box.append(row);
    }
    if (rt) box.append(runtimeRow(rt, max));
    if (xla) box.append(xlaRow(xla, max));
    if (rep) box.append(reportRow(rep, max));
}

// XLA's own figure from its report (packing.xla_report): what an out-of-memory report says
// the program used, or XLA's total from CompiledMemoryStats / MaxText; null without one.
function reportFigure(x) {
    if (!x) return null;
    if (x.used) return { bytes: x.used.bytes, text: `${x.used.text} used${x.capacity ? ` of ${x.capacity.text}` : ''} ${x.memory_space || ''} · XLA's out-of-memory report`.trim() };
    if (Number.isFinite(x.xla_total_bytes)) return { bytes: x.xla_total_bytes, text: `${fmtBytes(x.xla_total_bytes)} · XLA's ${x.form === 'maxtext' ? "estimate (MaxText's line)" : 'CompiledMemoryStats'}` };
    return null;
}

// That figure as a row: what XLA reported, not a packing of ours; labelled, never "chosen".
function reportRow(rep, max) {
    const row = bar("xla-report (XLA's own figure)", [{ cls: 'xla', frac: rep.bytes / max }], rep.text);
    row.dataset.strategy = 'xla-report';
    row.title = 'What XLA reported for the program, beside our packings';
    return row;
}

// XLA's own buffer assignment (from its dump): its total bytes against the same lower bound.
// What XLA did, not a packing of ours: its own colour, labelled, never "chosen".
function xlaRow(x, max) {
    const over = x.lower_bound_bytes > 0 ? ` (+${fmtPct(x.peak_bytes / x.lower_bound_bytes - 1)})` : '';
    const inPlace = x.in_place_values ? `, ${fmtInt(x.in_place_values)} in place` : '';
    const matched = x.source === 'with-model' ? ` · ${fmtInt(x.matched_values)} of ${fmtInt(x.values)} values matched${inPlace}` : '';
    const row = bar(`${x.name} (XLA's own assignment)`, [
        { cls: 'xla', frac: (x.peak_bytes || 0) / max },
        { cls: 'lb', marker: true, frac: (x.lower_bound_bytes || 0) / max },
    ], `${fmtBytes(x.peak_bytes)}${over} · ${fmtInt(x.allocations)} allocations${matched}`);
    row.dataset.strategy = x.name;
    row.title = x.label || '';
    return row;
}

// The GPU-style runtime allocator (XLA's BFC) replaying the plan: its heap height against the
// same lower bound. Not a packing strategy: hatched, labelled, never "chosen".
function runtimeRow(rt, max) {
    const fail = rt.first_failure;
    const text = `${fmtBytes(rt.peak_bytes)} · ` + (fail ? `a GPU allocation would fail at step ${fmtInt(fail.step)}` : 'every GPU allocation succeeds') + ' · GPU runtime model, not the TPU';
    const row = bar(`${rt.name} (GPU runtime model, not the TPU)`, [
        { cls: 'runtime', frac: (rt.peak_bytes || 0) / max },
        { cls: 'lb', marker: true, frac: (rt.lower_bound_bytes || 0) / max },
    ], text);
    row.dataset.strategy = rt.name;
    row.title = rt.label || '';
    return row;
}

export function renderByKind(s) {
    const box = $('#by-kind');
    const entries = Object.entries(s.by_kind || {});
    if (!entries.length) {
        box.append(el('p', { class: 'note', text: 'No per-kind totals in this result.' }));
        return;
    }
    entries.sort((a, b) => (b[1].padded_bytes || 0) - (a[1].padded_bytes || 0));
    const max = Math.max(1, ...entries.map(([, v]) => v.padded_bytes || 0));
    for (const [k, v] of entries) {
        const pct = v.logical_bytes > 0 ? ` (+${fmtPct(v.padded_bytes / v.logical_bytes - 1)})` : '';
        const kk = KINDS.includes(k) ? k : 'other';
        box.append(bar(`${k} (${fmtInt(v.count)})`, [
            { cls: 'k-' + kk, frac: (v.padded_bytes || 0) / max },
            { cls: 'logical', frac: (v.logical_bytes || 0) / max },
        ], `${fmtBytes(v.padded_bytes)}${pct}`));
    }
}

// kernels.js - the plan page's "Kernels (VMEM)" panel (result.kernels, server/planner/RESULT.md#fields): per
// Pallas kernel, one stacked bar of its VMEM (each VMEM operand's buffers, the scratch, the
// margin) against two lines, the scoped limit and physical VMEM; the per-operand table; and
// the suggestions with their traffic. Hidden when the model has no kernels. Names reach the
// page through textContent only (el()), so a kernel called "<b>x</b>" stays text.

import { el, $, fmtBytes, fmtInt } from './util.js';
import { KINDS } from './theme.js';

const PALETTE = KINDS.filter((k) => k !== 'other'); // operand colours, cycled

function segment(cls, frac, left, title) {
    const d = el('div', { class: 'kbar-seg ' + cls, title });
    d.style.left = (left * 100).toFixed(3) + '%';
    d.style.width = (Math.max(0, frac) * 100).toFixed(3) + '%';
    return d;
}

function line(cls, frac, title) {
    const d = el('div', { class: 'kbar-line ' + cls, title });
    d.style.left = `calc(${(Math.min(1, frac) * 100).toFixed(3)}% - 1px)`;
    return d;
}

// The stacked bar: the scale runs to the larger of physical VMEM and what the kernel needs.
function vmemBar(k) {
    const need = (k.vmem_bytes || 0) + (k.margin_bytes || 0);
    const max = Math.max(1, k.physical_vmem_bytes || 0, need);
    const track = el('div', { class: 'kbar-track', role: 'img', 'aria-label': `${k.name}: ${fmtBytes(need)} of VMEM against a limit of ${fmtBytes(k.vmem_limit_bytes)}` });
    let at = 0;
    (k.operands || []).forEach((o, i) => {
        if (!o.vmem_bytes || o.role === 'scratch') return;
        const frac = o.vmem_bytes / max;
        track.append(segment('k-' + PALETTE[i % PALETTE.length], frac, at, `${o.name}: ${o.buffers} x ${fmtBytes(o.padded_block_bytes)}`));
        at += frac;
    });
    if (k.scratch_bytes) {
        track.append(segment('kseg-scratch', k.scratch_bytes / max, at, `scratch: ${fmtBytes(k.scratch_bytes)}`));
        at += k.scratch_bytes / max;
    }
    if (k.margin_bytes) track.append(segment('kseg-margin', k.margin_bytes / max, at, `margin: ${fmtBytes(k.margin_bytes)}`));
    track.append(line('kline-limit', (k.vmem_limit_bytes || 0) / max, `scoped limit ${fmtBytes(k.vmem_limit_bytes)}`));
    track.append(line('kline-physical', (k.physical_vmem_bytes || 0) / max, `physical VMEM ${fmtBytes(k.physical_vmem_bytes)}`));
    return track;
}

const dims = (a) => (Array.isArray(a) ? `(${a.join(', ')})` : '–');

function operandTable(k) {
    const head = el('tr', null, ...['operand', 'role', 'space', 'dtype', 'block', 'in VMEM', 'buffers', 'VMEM', 'padding waste', 'HBM traffic'].map((h, i) => el('th', { class: i >= 6 ? 'num' : null, text: h })));
    const body = el('tbody');
    for (const o of k.operands || []) {
        body.append(el('tr', { 'data-operand': o.name },
            el('td', { text: o.name }), el('td', { text: o.role }), el('td', { text: o.memory_space }), el('td', { class: 'mono', text: o.dtype }),
            el('td', { class: 'mono', text: dims(o.block) }), el('td', { class: 'mono', text: o.padded_block && o.padded_block.length ? dims(o.padded_block) : '–' }),
            el('td', { class: 'num', text: o.buffers + (o.buffers_source === 'whole_array' ? ' (whole array)' : '') }),
            el('td', { class: 'num', text: fmtBytes(o.vmem_bytes) }), el('td', { class: 'num', text: fmtBytes(o.waste_bytes) }),
            el('td', { class: 'num', text: fmtBytes(o.hbm_bytes) + (o.index_assumed ? ' (every step, assumed)' : '') })));
    }
    return el('div', { class: 'table-wrap' }, el('table', { class: 'kernel-ops' }, el('thead', null, head), body));
}

function suggestionList(k) {
    const ul = el('ul', { class: 'plain kernel-suggestions' });
    for (const s of k.suggestions || []) ul.append(el('li', { 'data-kind': s.kind, text: s.text }));
    for (const w of k.warnings || []) ul.append(el('li', { class: 'warn', text: w }));
    return ul;
}

function kernelCard(k) {
    const need = (k.vmem_bytes || 0) + (k.margin_bytes || 0);
    const fit = k.fits ? `fits: ${fmtBytes(k.headroom_bytes)} headroom` : `does not fit: over by ${fmtBytes(k.overflow_bytes)}`;
    const t = k.traffic || {};
    const rf = k.roofline || {};
    const bound = rf.binding ? `; ${rf.binding}-bound, at least ${(rf.bound_seconds * 1e6).toFixed(1)} µs` : '';
    return el('div', { class: 'kernel' + (k.fits ? '' : ' over'), 'data-kernel': k.name },
        el('h3', { class: 'kernel-name', text: k.name }),
        el('p', { class: 'small' + (k.fits ? '' : ' field-error'), text: `${fmtBytes(need)} of VMEM against a ${fmtBytes(k.vmem_limit_bytes)} limit (${k.limit_source.replace(/_/g, ' ')}; physical ${fmtBytes(k.physical_vmem_bytes)}): ${fit}` }),
        vmemBar(k),
        k.error ? el('p', { class: 'mono small field-error kernel-error', text: k.error }) : null,
        el('p', { class: 'small muted', text: `HBM↔VMEM ${fmtBytes(t.total_bytes)} over ${fmtInt(t.steps)} grid steps` + (k.intensity != null ? `, ${k.intensity.toFixed(1)} flop/B` : '') + bound }),
        operandTable(k),
        suggestionList(k));
}

export function renderKernels(r) {
    const ks = r.kernels || [];
    const panel = $('#kernels-panel');
    if (!ks.length) return;
    panel.classList.remove('hidden');
    const over = ks.filter((k) => !k.fits).length;
    $('#kernels-note').textContent = `${fmtInt(ks.length)} kernel${ks.length === 1 ? '' : 's'}` + (over ? `, ${fmtInt(over)} over the VMEM limit: the plan does not fit.` : ', all within their VMEM limit.');
    const box = $('#kernels');
    // A model may list many kernels: the first 200 are drawn, over-limit ones first.
    const order = ks.map((k, i) => i).sort((a, b) => (ks[a].fits - ks[b].fits) || a - b);
    for (const i of order.slice(0, 200)) box.append(kernelCard(ks[i]));
    if (ks.length > 200) box.append(el('p', { class: 'note', text: `${fmtInt(ks.length - 200)} more kernels are in the JSON download.` }));
}

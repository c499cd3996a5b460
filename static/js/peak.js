// peak.js - the plan page's breakdown of the peak (result.peak: server/planner/RESULT.md#the-peak),
// beside the live table: the op at the peak step, then one stacked bar per partition of the
// bytes live there (by kind, tag, layer, op_name scope), a segment per group as wide as its
// share of the live bytes, the groups past the top and the tensors in none last. The same
// figures as the "peak" section of `tpuplan plan --format text`.

import { el, $, fmtBytes, fmtInt, fmtPct } from './util.js';
import { KINDS } from './theme.js';

const PALETTE = 6; // .seg-0 ... .seg-5 for groups that are not kinds
const LISTED = 5; // groups named under each bar

const PARTS = [
    ['by_kind', 'by kind'],
    ['by_tag', 'by tag'],
    ['by_layer', 'by layer'],
    ['by_scope', 'by op_name scope'],
];

// A partition's groups, each {name, bytes, tensors, cls}: by_kind is a list of kinds; the
// others are {top, groups, rest, none}.
function groupsOf(key, part) {
    if (Array.isArray(part))
        return part.map((g) => ({ ...g, cls: 'k-' + (KINDS.includes(g.name) ? g.name : 'other') }));
    if (!part || !Array.isArray(part.top) || !part.top.length) return [];
    const out = part.top.map((g, i) => ({ ...g, cls: 'seg-' + (i % PALETTE) }));
    if (part.rest?.bytes > 0) out.push({ name: `${fmtInt(part.rest.groups)} more`, bytes: part.rest.bytes, tensors: part.rest.tensors, cls: 'seg-rest' });
    if (part.none?.bytes > 0) out.push({ name: key === 'by_tag' ? '(untagged)' : '(none)', bytes: part.none.bytes, tensors: part.none.tensors, cls: 'seg-none' });
    return out;
}

// "Peak 463.02M at step 18, op xent (jit(f)/xent): 463.02M live in 12 tensors".
function headline(pk) {
    const op = pk.op ? `, ${pk.op.source === 'ops' ? 'op' : 'instruction'} ${pk.op.name}` + (pk.op.op_name ? ` (${pk.op.op_name})` : '') : '';
    const gap = pk.gap_bytes > 0 ? `, ${fmtBytes(pk.gap_bytes)} free below the top` : '';
    return `Peak ${fmtBytes(pk.bytes)} at step ${fmtInt(pk.step)}${op}: ${fmtBytes(pk.live_bytes)} live in ${fmtInt(pk.tensors)} tensors${gap}`;
}

function partRow(key, label, groups, live) {
    const track = el('div', { class: 'pk-track', role: 'img', 'aria-label': `${label}: ` + groups.map((g) => `${g.name} ${fmtPct(g.bytes / live)}`).join(', ') });
    for (const g of groups) {
        const seg = el('div', { class: 'pk-seg ' + g.cls, title: `${g.name}: ${fmtBytes(g.bytes)} (${fmtPct(g.bytes / live)}), ${fmtInt(g.tensors)} tensors` });
        seg.style.width = ((g.bytes / live) * 100).toFixed(3) + '%';
        seg.dataset.name = g.name;
        seg.dataset.bytes = String(g.bytes);
        track.append(seg);
    }
    const list = el('ul', { class: 'pk-list' });
    for (const g of groups.slice(0, LISTED))
        list.append(el('li', {}, el('span', { class: 'swatch ' + g.cls }), ' ', el('span', { class: 'name', text: g.name }), ` ${fmtBytes(g.bytes)} · ${fmtPct(g.bytes / live)}`));
    if (groups.length > LISTED) list.append(el('li', { class: 'muted', text: `and ${groups.length - LISTED} more in the bar` }));
    return el('div', { class: 'pk-part', 'data-part': key }, el('div', { class: 'pk-label', text: label }), track, list);
}

export function renderPeakBreakdown(r) {
    const box = $('#peak-breakdown');
    const pk = r.peak;
    if (!pk || !(pk.live_bytes > 0)) {
        box.classList.add('hidden');
        return;
    }
    box.append(el('p', { class: 'pk-head', id: 'peak-op', text: headline(pk) }));
    for (const [key, label] of PARTS) {
        const groups = groupsOf(key, pk[key]);
        if (groups.length) box.append(partRow(key, label, groups, pk.live_bytes));
    }
}

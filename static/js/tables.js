// tables.js - the plan page's two tables of tensors, read from the layout view's columns
// through the layout chart (layoutchart.js): the buffers live at the peak step, and padding
// per tensor (sortable, filterable, shown a page at a time: it may have 1,000,000 rows).
// Choosing a row calls onPick(i) with the tensor's index, for the page to show it in the chart.

import { el, $, fmtBytes, fmtInt, fmtPct } from './util.js';
import { KINDS } from './theme.js';
import { lookup } from './layoutchart.js';

const PAGE_ROWS = 200;

// XProf's "ops at peak", as a table: the biggest buffers live at the peak step.
export function renderPeakTable(r, layout, onPick) {
    const peak = r.packing?.peak;
    const padded = layout.cols.padded_bytes;
    if (!peak || !Array.isArray(peak.buffers) || !peak.buffers.length) {
        $('#peak-title').classList.add('hidden');
        $('#peak-table').classList.add('hidden');
        return;
    }
    // A tensor's id is its index (server/planner/RESULT.md#fields), the index of its entry in every column.
    const idx = peak.buffers.filter((b) => Number.isInteger(b) && b >= 0 && b < layout.n);
    idx.sort((a, b) => (padded[b] || 0) - (padded[a] || 0));
    $('#peak-title').textContent = `Live at the peak step (${fmtInt(peak.step)}): ${fmtInt(idx.length)} buffers, ${fmtBytes(peak.bytes)}`;
    const tbody = $('#peak-table tbody');
    const shown = idx.slice(0, 12);
    for (const i of shown) {
        const t = layout.tensor(i);
        const tr = el('tr', { class: 'clickable', tabindex: 0, title: 'show in the chart' },
            el('td', { class: 'name' }, el('span', { class: 'swatch k-' + (KINDS.includes(t.kind) ? t.kind : 'other') }), ' ', String(t.name ?? '')),
            el('td', { text: t.kind || '' }),
            el('td', { class: 'mono', text: t.shape || '' }),
            el('td', { class: 'num', text: fmtBytes(t.padded_bytes) }),
            el('td', { class: 'num', text: peak.bytes ? fmtPct((t.padded_bytes || 0) / peak.bytes) : '–' }),
            el('td', { class: 'num', text: Number.isFinite(t.offset) ? fmtBytes(t.offset) : '–' }),
            el('td', { text: Array.isArray(t.live) ? `${fmtInt(t.live[0])} \u2013 ${fmtInt(t.live[1])}` : '' }));
        tr.addEventListener('click', () => onPick(i));
        tr.addEventListener('keydown', (ev) => ev.key === 'Enter' && onPick(i));
        tbody.append(tr);
    }
    $('#peak-note').textContent = (idx.length > shown.length ? `Largest ${shown.length} of ${fmtInt(idx.length)} shown. ` : '') + 'Click a row to find the buffer in the chart.';
}

export function renderPaddingTable(r, layout, onPick) {
    const c = layout.cols;
    const sugg = new Map();
    for (const sg of r.suggestions || []) sugg.set(sg.tensor, sg.text);
    const rows = c.name.map((name, i) => {
        const logical = c.logical_bytes[i] || 0, padded = c.padded_bytes[i] ?? logical;
        return {
            i,
            name: String(name ?? ''),
            kind: lookup(c.kind, i) || '',
            shape: lookup(c.shape, i) || '',
            logical_bytes: logical,
            padded_bytes: padded,
            wasted: padded - logical,
            overhead: logical > 0 ? padded / logical - 1 : 0,
            suggestion: sugg.get(i) || '',
        };
    });
    // Most wasted bytes first: that is where a reshape pays off.
    let key = 'wasted', dir = -1, limit = PAGE_ROWS, filter = '';
    let view = rows;
    const tbody = $('#pad-table tbody');
    const ths = [...document.querySelectorAll('#pad-table th.sortable')];
    const apply = () => {
        const q = filter.trim().toLowerCase();
        view = q ? rows.filter((x) => x.name.toLowerCase().includes(q) || x.kind.includes(q) || x.shape.toLowerCase().includes(q)) : rows.slice();
        const numeric = key !== 'name' && key !== 'kind' && key !== 'shape';
        view.sort((a, b) => {
            const c = numeric ? a[key] - b[key] : a[key].localeCompare(b[key]);
            return c !== 0 ? c * dir : (b.padded_bytes - b.logical_bytes) - (a.padded_bytes - a.logical_bytes);
        });
        for (const th of ths) th.setAttribute('aria-sort', th.dataset.key === key ? (dir > 0 ? 'ascending' : 'descending') : 'none');
        paint();
    };
    const paint = () => {
        const frag = document.createDocumentFragment();
        for (const x of view.slice(0, limit)) {
            frag.append(el('tr', { 'data-index': x.i, class: 'clickable', title: 'show in the chart' },
                el('td', { class: 'name', text: x.name }),
                el('td', { text: x.kind }),
                el('td', { class: 'mono', text: x.shape }),
                el('td', { class: 'num', text: fmtBytes(x.logical_bytes), title: fmtInt(x.logical_bytes) + ' B' }),
                el('td', { class: 'num', text: fmtBytes(x.padded_bytes), title: fmtInt(x.padded_bytes) + ' B' }),
                el('td', { class: 'num', text: fmtBytes(x.wasted), title: fmtInt(x.wasted) + ' B' }),
                el('td', { class: 'num', text: fmtPct(x.overhead) }),
                el('td', { class: 'small', text: x.suggestion })));
        }
        tbody.replaceChildren(frag);
        const shown = Math.min(limit, view.length);
        $('#pad-count').textContent = `showing ${fmtInt(shown)} of ${fmtInt(view.length)}` + (view.length !== rows.length ? ` (filtered from ${fmtInt(rows.length)})` : '');
        $('#pad-more').classList.toggle('hidden', shown >= view.length);
    };
    for (const th of ths) {
        th.tabIndex = 0;
        const sort = () => {
            if (key === th.dataset.key) dir = -dir;
            else {
                key = th.dataset.key;
                dir = key === 'name' || key === 'kind' || key === 'shape' ? 1 : -1;
            }
            limit = PAGE_ROWS;
            apply();
        };
        th.addEventListener('click', sort);
        th.addEventListener('keydown', (ev) => (ev.key === 'Enter' || ev.key === ' ') && (ev.preventDefault(), sort()));
    }
    let t = 0;
    $('#pad-filter').addEventListener('input', (ev) => {
        clearTimeout(t);
        t = setTimeout(() => {
            filter = ev.target.value;
            limit = PAGE_ROWS;
            apply();
        }, 120);
    });
    tbody.addEventListener('click', (ev) => {
        const tr = ev.target.closest('tr');
        if (tr) onPick(Number(tr.dataset.index));
    });
    $('#pad-more').addEventListener('click', () => {
        limit += PAGE_ROWS * 5;
        paint();
    });
    apply();
}

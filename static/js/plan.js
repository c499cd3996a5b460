// plan.js - the plan page (/p/{id}), the link people share. Reads the id from the path, GETs
// two views of /api/v1/plans/{id} in parallel: ?view=summary (the result without its tensors,
// polled while the plan is queued or running) and ?view=layout (the tensors as columns), then
// draws the result (server/planner/RESULT.md): summary cards, layout chart, timeline,
// strategies, padding. The whole result (37 MB for 100,000 tensors) is fetched only for
// "Download JSON": parsing it as one object per tensor is what used to take seconds.

import { el, $, fmtBytes, fmtInt, fmtPct, apiGet, retryAfter, sleep, download, statusBadge } from './util.js';
import { KINDS, onThemeChange } from './theme.js';
import { LayoutChart, lookup } from './layoutchart.js';
import { TimelineChart } from './timeline.js';

const PAGE_ROWS = 200;
const hooks = (window.__tpuplan = { ready: false });

function planId() {
    const m = location.pathname.match(/\/p\/([A-Za-z0-9_-]{1,64})\/?$/);
    if (m) return m[1];
    return new URLSearchParams(location.search).get('id');
}

function showError(text) {
    $('#loading').classList.add('hidden');
    $('#error').classList.remove('hidden');
    $('#error-text').textContent = text;
}

const planUrl = (id, view) => '/api/v1/plans/' + encodeURIComponent(id) + (view ? '?view=' + view : '');

async function main() {
    const id = planId();
    if (!id) return showError('No plan id in this address.');
    let plan;
    const started = Date.now();
    // Both views at once: a finished plan (the usual case for a shared link) is then drawn
    // after one round trip. A plan still running has no layout yet: asked again when done.
    let layout = apiGet(planUrl(id, 'layout'));
    layout.catch(() => {}); // a failure is handled where it is awaited
    for (;;) {
        let got;
        try {
            got = await apiGet(planUrl(id, 'summary'));
        } catch (err) {
            return showError(err.status === 404 ? 'There is no plan at this address (it may have expired or been deleted).' : err.detail);
        }
        plan = got.body;
        if (plan.status !== 'queued' && plan.status !== 'running') break;
        const secs = Math.round((Date.now() - started) / 1000);
        $('#loading-text').textContent = `Plan is ${plan.status}… (${secs} s)`;
        await sleep(retryAfter(got.res));
        layout = null;
    }
    if (plan.status === 'failed' || !plan.result) {
        const e = plan.error || {};
        return showError((e.detail || 'The planner failed.') + (e.where ? ` (at ${e.where})` : ''));
    }
    let cols;
    try {
        cols = (await (layout || apiGet(planUrl(id, 'layout')))).body.layout;
        if (!cols) cols = (await apiGet(planUrl(id, 'layout'))).body.layout; // finished in between
    } catch (err) {
        return showError(err.detail || String(err));
    }
    if (!cols) return showError('The plan has no layout.');
    render(plan, cols);
}

const t = (label) => ((hooks.timings ||= {})[label] = Math.round(performance.now()));

// plan: the summary view (plan.result has no tensors); cols: the layout view's columns.
function render(plan, cols) {
    t('fetched');
    const r = plan.result;
    hooks.result = r;
    hooks.cols = cols;
    document.title = `${plan.name || r.model?.name || 'Plan'} · tpuplan`;
    $('#loading').classList.add('hidden');
    $('#plan').classList.remove('hidden');
    $('#plan-name').textContent = plan.name || r.model?.name || 'Unnamed plan';
    const meta = $('#plan-meta');
    meta.append(statusBadge(plan.status), ' ');
    meta.append([r.chip?.name || plan.chip, `input: ${r.model?.source_format || plan.source_format || '?'}`].filter(Boolean).join(' · '));
    if (plan.created_at) meta.append(` · created ${plan.created_at}`);

    const s = r.summary || {};
    const pk = r.packing || {};
    renderCards(r, s, pk);
    const capacity = s.capacity_bytes || pk.capacity_bytes || 0;
    const peakStep = pk.peak && Number.isFinite(pk.peak.step) ? pk.peak.step : undefined;

    let timeline = null;
    const tl = pk.timeline;
    const end = Array.isArray(pk.steps) ? pk.steps[1] : undefined;
    if (tl && Array.isArray(tl.step) && tl.step.length) {
        timeline = new TimelineChart($('#timeline-canvas'), $('#timeline-tip'), tl, end ?? tl.step[tl.step.length - 1] + 1, { capacity, peakStep });
        $('#timeline-note').textContent = tl.downsampled ? 'Downsampled: each point is the maximum over merged steps.' : '';
    } else {
        $('#timeline-note').textContent = 'No timeline in this result.';
    }
    const layout = new LayoutChart($('#layout-canvas'), $('#layout-tip'), cols, {
        capacity,
        peakStep,
        onView: (x0, x1) => timeline && timeline.setX(x0, x1),
        onFocus: (range) => timeline && timeline.setHighlight(range),
    });
    t('layout-indexed');
    hooks.layout = layout;
    hooks.timeline = timeline;
    renderLegend(layout);
    layout.draw();
    t('layout-drawn');
    if (!timeline) $('#timeline-canvas').classList.add('hidden');
    const unplaced = layout.n - layout.placed;
    $('#layout-note').textContent =
        `${fmtInt(layout.placed)} buffers placed by strategy "${pk.chosen || s.strategy || '?'}"` +
        (unplaced ? `; ${fmtInt(unplaced)} have no offset and are not drawn.` : '.') +
        ' Rectangle height is the padded size; the dashed line marks the peak step.';

    let searchTimer = 0;
    $('#search').addEventListener('input', (ev) => {
        clearTimeout(searchTimer);
        searchTimer = setTimeout(() => {
            const q = ev.target.value;
            const n = layout.setSearch(q);
            $('#search-count').textContent = q.trim() ? `${fmtInt(n)} match${n === 1 ? '' : 'es'}` + (n ? ' (Enter zooms to the first)' : '') : '';
        }, 120);
    });
    $('#search').addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') layout.focus(layout.firstMatch());
    });
    $('#reset-zoom').addEventListener('click', () => layout.reset());
    onThemeChange(() => {
        layout.draw();
        if (timeline) timeline.draw();
    });

    renderPeak(r, layout);
    renderStrategies(pk);
    renderByKind(s);
    renderSuggestions(r);
    wireActions(plan, layout);
    // The charts are on screen after the next frame; the padding table (sorting up to
    // 1,000,000 rows) waits until then so it never delays the first paint.
    requestAnimationFrame(() =>
        setTimeout(() => {
            hooks.firstPaintMs = Math.round(performance.now());
            renderNotes(r, cols);
            renderPaddingTable(r, layout);
            t('table');
            hooks.ready = true;
            document.body.dataset.ready = '1';
        }, 0),
    );
}

// Focuses buffer i in the layout chart and pins its details (from the tables below it).
function showInChart(layout, i) {
    layout.focus(i);
    layout.pinned = i;
    layout.hover = i;
    layout.draw();
    const p = layout.screenPoint(i);
    layout.tooltip.classList.add('pinned');
    layout.showTooltip(i, p.x, p.y);
    layout.canvas.scrollIntoView({ block: 'center', behavior: 'instant' });
}

// XProf's "ops at peak", as a table: the biggest buffers live at the peak step.
function renderPeak(r, layout) {
    const peak = r.packing?.peak;
    const padded = layout.cols.padded_bytes;
    if (!peak || !Array.isArray(peak.buffers) || !peak.buffers.length) {
        $('#peak-title').classList.add('hidden');
        $('#peak-table').classList.add('hidden');
        return;
    }
    // A tensor's id is its index (RESULT.md), the index of its entry in every column.
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
        tr.addEventListener('click', () => showInChart(layout, i));
        tr.addEventListener('keydown', (ev) => ev.key === 'Enter' && showInChart(layout, i));
        tbody.append(tr);
    }
    $('#peak-note').textContent = (idx.length > shown.length ? `Largest ${shown.length} of ${fmtInt(idx.length)} shown. ` : '') + 'Click a row to find the buffer in the chart.';
}

function card(label, value, detail, cls) {
    const c = el('div', { class: 'card' + (cls ? ' ' + cls : '') }, el('div', { class: 'label', text: label }), el('div', { class: 'value', text: value }));
    if (detail) c.append(el('div', { class: 'detail', text: detail }));
    return c;
}

function renderCards(r, s, pk) {
    const cards = $('#cards');
    const chip = r.chip || {};
    const cap = s.capacity_bytes;
    if (chip.name) cards.append(card('Chip', chip.name, [chip.device_kind, chip.usable_hbm_bytes ? `usable HBM ${fmtBytes(chip.usable_hbm_bytes)}` : null].filter(Boolean).join(' · ')));
    else cards.append(card('Chip', 'none', 'a MiniMalloc CSV names no chip: sizes are planned as given'));
    if (cap) {
        if (s.fits) cards.append(card('Fits', 'fits', `headroom ${fmtBytes(s.headroom_bytes)} of ${fmtBytes(cap)}`, 'good'));
        else cards.append(card('Fits', `over by ${fmtBytes(s.overflow_bytes || s.peak_bytes - cap)}`, `peak ${fmtBytes(s.peak_bytes)} > capacity ${fmtBytes(cap)}`, 'bad'));
    } else {
        cards.append(card('Fits', 'no capacity', 'no capacity was given (CSV input): nothing to compare against'));
    }
    const above = s.lower_bound_bytes > 0 ? s.peak_bytes / s.lower_bound_bytes - 1 : null;
    cards.append(card('Peak vs lower bound', fmtBytes(s.peak_bytes), `lower bound ${fmtBytes(s.lower_bound_bytes)}` + (above !== null ? ` (peak ${fmtPct(above)} above)` : '')));
    cards.append(card('Fragmentation', fmtPct(s.fragmentation), `${fmtBytes(s.fragmentation_bytes)} lost to gaps at peak`));
    const padPct = s.logical_bytes > 0 ? s.padding_bytes / s.logical_bytes : null;
    cards.append(card('Padding overhead', fmtBytes(s.padding_bytes), `logical ${fmtBytes(s.logical_bytes)} → padded ${fmtBytes(s.padded_bytes)}` + (padPct !== null ? ` (+${fmtPct(padPct)})` : '')));
    cards.append(card('Tensors', fmtInt(s.tensors), Object.entries(s.by_kind || {}).map(([k, v]) => `${k} ${fmtInt(v.count)}`).join(' · ')));
    const chosen = (pk.strategies || []).find((x) => x.name === pk.chosen);
    cards.append(card('Strategy', pk.chosen || s.strategy || '?', chosen ? (chosen.proven_optimal ? 'proven optimal' : chosen.solved ? 'solved (optimality not proven)' : 'not solved') : null));
    const nAssumed = Number.isFinite(s.assumed_layouts) ? s.assumed_layouts : null;
    const nChip = (chip.assumptions || []).length;
    cards.append(card('Assumptions', nAssumed === null ? '–' : `${fmtInt(nAssumed)} of ${fmtInt(s.tensors)} layouts`, `layouts not confirmed by a source; ${nChip} chip assumption${nChip === 1 ? '' : 's'} (listed below)`, nAssumed ? '' : 'good'));
}

function renderLegend(layout) {
    const legend = $('#legend');
    for (const k of layout.kindsPresent) {
        legend.append(el('li', { 'data-kind': k }, el('span', { class: 'swatch k-' + k }), k));
    }
}

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

function renderStrategies(pk) {
    const box = $('#strategies');
    const list = pk.strategies || [];
    if (!list.length) {
        box.append(el('p', { class: 'note', text: 'No strategy comparison in this result.' }));
        return;
    }
    const max = Math.max(1, ...list.map((x) => Math.max(x.peak_bytes || 0, x.lower_bound_bytes || 0)));
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
}

function renderByKind(s) {
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

function renderNotes(r, cols) {
    const ul = $('#assumptions');
    const items = [];
    for (const a of r.chip?.assumptions || []) items.push(['chip', a]);
    // Which layout rules the plan leans on without a confirming source, and for how many tensors.
    const rules = new Map();
    const assumed = cols.confidence.values.indexOf('assumed');
    cols.confidence.index.forEach((c, i) => {
        if (c !== assumed) return;
        const rule = lookup(cols.layout_source, i) || 'unnamed rule';
        rules.set(rule, (rules.get(rule) || 0) + 1);
    });
    for (const [rule, n] of [...rules].sort((a, b) => b[1] - a[1]).slice(0, 10))
        items.push(['assumed layout rule', `${rule}: ${fmtInt(n)} tensor${n === 1 ? '' : 's'}`]);
    if (rules.size > 10) items.push(['assumed layout rule', `…and ${rules.size - 10} more rules`]);
    for (const w of r.warnings || []) items.push(['warning', typeof w === 'string' ? w : w.text || w.message || JSON.stringify(w)]);
    if (!items.length) items.push(['', 'None: every rule used is documented.']);
    for (const [tag, text] of items) ul.append(el('li', null, tag ? el('strong', { text: tag + ': ' }) : null, text));
}

function renderSuggestions(r) {
    const list = r.suggestions || [];
    if (!list.length) {
        $('#suggest-panel').classList.add('hidden');
        return;
    }
    const ul = $('#suggestions');
    const sorted = [...list].sort((a, b) => (b.saves_bytes || 0) - (a.saves_bytes || 0));
    for (const sg of sorted.slice(0, 20)) {
        ul.append(el('li', null, el('strong', { text: `saves ${fmtBytes(sg.saves_bytes)}: ` }), sg.text || ''));
    }
    if (sorted.length > 20) ul.append(el('li', { class: 'note', text: `…and ${sorted.length - 20} more in the padding table.` }));
}

function renderPaddingTable(r, layout) {
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
        if (tr && layout) showInChart(layout, Number(tr.dataset.index));
    });
    $('#pad-more').addEventListener('click', () => {
        limit += PAGE_ROWS * 5;
        paint();
    });
    apply();
}

function csvField(v) {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

function layoutCsv(c) {
    const lines = ['id,lower,upper,size,offset,name,kind'];
    c.name.forEach((name, i) => {
        lines.push([i, c.start[i] ?? '', c.end[i] ?? '', c.padded_bytes[i] ?? c.logical_bytes[i], c.offset[i] ?? '', name, lookup(c.kind, i)].map(csvField).join(','));
    });
    return lines.join('\n') + '\n';
}

function safeFileName(name) {
    return (String(name || 'plan').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'plan');
}

function wireActions(plan, layout) {
    const r = plan.result;
    const status = $('#action-status');
    const share = plan.links?.share ? new URL(plan.links.share, location.origin).href : location.origin + '/p/' + encodeURIComponent(plan.id || planId());
    const input = $('#share-url');
    input.value = share;
    $('#copy-link').addEventListener('click', async () => {
        try {
            await navigator.clipboard.writeText(share);
            status.textContent = 'Share link copied: ' + share;
        } catch {
            // Clipboard blocked (insecure origin or permissions): let the user copy by hand.
            input.classList.remove('hidden');
            input.select();
            status.textContent = 'Copy the selected link (Ctrl+C):';
        }
    });
    wireDelete(plan.id || planId(), status);
    const base = safeFileName(plan.name || r.model?.name);
    // The whole result is the one thing the page never needs to draw: fetched on click.
    const dl = $('#dl-json');
    dl.addEventListener('click', async () => {
        dl.disabled = true;
        status.textContent = 'Fetching the whole result…';
        try {
            const { body } = await apiGet(planUrl(plan.id || planId()));
            download(base + '.plan.json', new Blob([JSON.stringify(body.result, null, 2)], { type: 'application/json' }));
            status.textContent = '';
        } catch (err) {
            status.textContent = 'Could not fetch the result: ' + (err.detail || err.message);
        } finally {
            dl.disabled = false;
        }
    });
    $('#dl-csv').addEventListener('click', () => download(base + '.layout.csv', new Blob([layoutCsv(layout.cols)], { type: 'text/csv' })));
}

// The manage token is kept only by the browser that created the plan (upload.js); share
// links are read-only, so only that browser offers to delete.
function wireDelete(id, status) {
    let token = null;
    try {
        token = localStorage.getItem('tpuplan.manage.' + id);
    } catch {
        token = null;
    }
    if (!token) return;
    const button = $('#delete');
    button.classList.remove('hidden');
    button.addEventListener('click', async () => {
        if (!confirm('Delete this plan? Its share link stops working.')) return;
        const res = await fetch('/api/v1/plans/' + encodeURIComponent(id), { method: 'DELETE', headers: { Authorization: 'Bearer ' + token } });
        if (res.ok || res.status === 404) {
            localStorage.removeItem('tpuplan.manage.' + id);
            location.assign('/');
            return;
        }
        const body = await res.json().catch(() => null);
        status.textContent = 'Could not delete: ' + ((body && body.detail) || res.status);
    });
}

main().catch((err) => showError(String(err && err.message ? err.message : err)));

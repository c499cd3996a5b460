// diff.js - the diff page (/d/{a}/{b}), shareable like a plan: what changed from plan a
// (before) to plan b (after). Waits for both plans to finish (pollPlan: a what-if opened
// here at once may still be running), then GETs /api/v1/diff?a=&b= (planner/diff.h) and
// both plans' layout views in parallel, and draws both layouts on one byte scale
// (layoutchart.js), the summary deltas as cards, the deltas by kind, and the changed
// tensors sorted by |padded delta| (the order the API gives). The peak is the headline and
// the only delta coloured as memory: a sum of buffer sizes (padded or logical, in total, by
// kind or per tensor) counts buffers that live at different steps, so it is labelled a sum
// and left neutral. The added remat copies are one row (the diff's groups).

import { el, $, fmtBytes, fmtInt, fmtPct, apiGet, appUrl, planUrl, pollPlan } from './util.js';
import { onThemeChange } from './theme.js';
import { LayoutChart } from './layoutchart.js';
import { card } from './summary.js';

const hooks = (window.__tpuplan = { ready: false });
const PAGE = 500; // delta table rows per "Show more"

function planIds() {
    const m = location.pathname.match(/\/d\/([A-Za-z0-9_-]{22})\/([A-Za-z0-9_-]{22})\/?$/);
    return m ? [m[1], m[2]] : null;
}

function showError(text) {
    $('#loading').classList.add('hidden');
    $('#error').classList.remove('hidden');
    $('#error-text').textContent = text;
}

const signed = (d) => (d > 0 ? '+' : '') + fmtBytes(d);
const deltaCls = (d) => (d < 0 ? 'good' : d > 0 ? 'bad' : '');

async function main() {
    const ids = planIds();
    if (!ids) return showError('This address does not name two plans (/d/{a}/{b}).');
    const [a, b] = ids;
    const onWait = (status, secs) => ($('#loading-text').textContent = `A plan is ${status}… (${secs} s)`);
    let got;
    try {
        got = await Promise.all([pollPlan(planUrl(a, 'summary'), { onWait }), pollPlan(planUrl(b, 'summary'), { onWait })]);
        got = got.concat(
            await Promise.all([
                apiGet(appUrl(`/api/v1/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`)),
                apiGet(planUrl(a, 'layout')),
                apiGet(planUrl(b, 'layout')),
            ]),
        );
    } catch (err) {
        return showError(err.status === 404 ? 'One of the plans does not exist (it may have expired or been deleted).' : err.detail || String(err));
    }
    const [pa, pb, d, la, lb] = got.map((g) => g.body);
    render(ids, d, pa, pb, la.layout, lb.layout);
}

function renderCards(s) {
    const cards = $('#cards');
    const range = (key) => `${fmtBytes(s[key + '_before'])} → ${fmtBytes(s[key + '_after'])}`;
    const peak = card('Peak', signed(s.peak_bytes_delta), range('peak_bytes'), 'headline ' + deltaCls(s.peak_bytes_delta));
    peak.id = 'peak-card';
    cards.append(peak);
    // Each side's verdict in the planner's words (summary.verdict.headline).
    const verdict = (v, f) => v || (f ? 'fits' : 'does not fit');
    const after = verdict(s.verdict_after, s.fits_after);
    cards.append(card('Verdict', `${verdict(s.verdict_before, s.fits_before)} → ${after}`, `capacity ${fmtBytes(s.capacity_bytes_before)} → ${fmtBytes(s.capacity_bytes_after)}`, after === 'fits' ? 'good' : after === 'does not fit' || after === 'over budget' ? 'bad' : ''));
    cards.append(card('Lower bound', signed(s.lower_bound_bytes_delta), range('lower_bound_bytes')));
    const fd = s.fragmentation_delta;
    cards.append(card('Fragmentation', (fd > 0 ? '+' : '') + (fd * 100).toFixed(1) + ' pts', `${fmtPct(s.fragmentation_before)} → ${fmtPct(s.fragmentation_after)}`, deltaCls(fd)));
    cards.append(card('Tensors', `${fmtInt(s.tensors_before)} → ${fmtInt(s.tensors_after)}`, `${fmtInt(s.added)} added · ${fmtInt(s.removed)} removed · ${fmtInt(s.changed)} changed · ${fmtInt(s.unchanged)} unchanged`));
    const sum = (label, key) => card(label, signed(s[key + '_delta']), `${range(key)} · a sum over buffers live at different steps, not memory`);
    cards.append(sum('Sum of padded buffer sizes', 'padded_bytes'));
    cards.append(sum('Sum of logical buffer sizes', 'logical_bytes'));
}

function renderKinds(byKind) {
    const body = $('#kind-table tbody');
    for (const [k, v] of Object.entries(byKind)) {
        body.append(el('tr', { 'data-kind': k },
            el('td', {}, el('span', { class: 'swatch k-' + k }), ' ', k),
            el('td', { class: 'num', text: `${fmtInt(v.count_before)} → ${fmtInt(v.count_after)}` }),
            el('td', { class: 'num', text: fmtBytes(v.padded_bytes_before) }),
            el('td', { class: 'num', text: fmtBytes(v.padded_bytes_after) }),
            el('td', { class: 'num', text: signed(v.padded_bytes_delta) }),
            el('td', { class: 'num', text: signed(v.logical_bytes_delta) })));
    }
}

// The groups (the added remat copies) as one row each, above the tensors in no group.
function renderGroups(groups) {
    const body = $('#group-table tbody');
    if (!groups.length) return;
    $('#group-wrap').classList.remove('hidden');
    for (const g of groups)
        body.append(el('tr', { 'data-group': g.name },
            el('td', { text: `${fmtInt(g.tensors)} ${g.name}` }),
            el('td', { class: 'mono', text: g.match }),
            el('td', { text: g.status }),
            el('td', { class: 'num', text: signed(g.padded_bytes_delta) }),
            el('td', { class: 'small', text: 'summed over copies live at different steps: not memory (the peak card is)' })));
}

function renderDeltas(all) {
    const tensors = all.filter((t) => !t.group);
    const body = $('#delta-table tbody');
    let rows = tensors, shown = 0;
    const more = $('#delta-more');
    const show = () => {
        const end = Math.min(rows.length, shown + PAGE);
        for (; shown < end; shown++) {
            const t = rows[shown];
            body.append(el('tr', { 'data-name': t.name },
                el('td', { class: 'mono', text: t.name }),
                el('td', { text: t.status }),
                el('td', { text: t.kind }),
                el('td', { class: 'num', text: signed(t.padded_bytes_delta) }),
                el('td', { class: 'num', text: fmtBytes(t.padded_bytes_before) }),
                el('td', { class: 'num', text: fmtBytes(t.padded_bytes_after) }),
                el('td', { class: 'mono', text: t.layout_before ?? '–' }),
                el('td', { class: 'mono', text: t.layout_after ?? '–' })));
        }
        more.classList.toggle('hidden', shown >= rows.length);
        const grouped = all.length - tensors.length;
        $('#delta-count').textContent = `${fmtInt(rows.length)} of ${fmtInt(tensors.length)} changed tensors` + (grouped ? ` (${fmtInt(grouped)} more in the groups above)` : '');
    };
    more.addEventListener('click', show);
    $('#delta-filter').addEventListener('input', (ev) => {
        const q = ev.target.value.trim().toLowerCase();
        rows = q ? tensors.filter((t) => [t.name, t.kind, t.status, t.layout_before || '', t.layout_after || ''].some((s) => s.toLowerCase().includes(q))) : tensors;
        body.replaceChildren();
        shown = 0;
        show();
    });
    show();
}

function render(ids, d, pa, pb, ca, cb) {
    const s = d.summary;
    hooks.diff = d;
    document.title = `${d.a.name || ids[0]} → ${d.b.name || ids[1]} · tpuplan`;
    $('#loading').classList.add('hidden');
    $('#diff').classList.remove('hidden');
    $('#diff-title').textContent = `${d.a.name || 'before'} → ${d.b.name || 'after'}`;
    const meta = $('#diff-meta');
    meta.append('before: ', el('a', { href: appUrl('/p/' + ids[0]), id: 'link-a', text: `${d.a.name || ids[0]} (${d.a.chip || 'no chip'})` }),
        ' · after: ', el('a', { href: appUrl('/p/' + ids[1]), id: 'link-b', text: `${d.b.name || ids[1]} (${d.b.chip || 'no chip'})` }));
    renderCards(s);
    // One byte scale: the larger peak, and a capacity when it is within 1.5x of it.
    const peak = Math.max(s.peak_bytes_before, s.peak_bytes_after, 1);
    const caps = [s.capacity_bytes_before, s.capacity_bytes_after].filter((c) => c && c <= peak * 1.5);
    const yMax = Math.max(peak, ...caps);
    const chart = (sel, cols, p, cap) => {
        const pk = p.result.packing || {};
        return new LayoutChart($(sel), $(sel + '-tip'), cols, {
            capacity: cap || 0,
            yMax,
            peakStep: pk.peak && Number.isFinite(pk.peak.step) ? pk.peak.step : undefined,
        });
    };
    $('#layout-a-title').textContent = `Before: ${d.a.name || ids[0]} (peak ${fmtBytes(s.peak_bytes_before)})`;
    $('#layout-b-title').textContent = `After: ${d.b.name || ids[1]} (peak ${fmtBytes(s.peak_bytes_after)})`;
    const A = chart('#layout-a', ca, pa, s.capacity_bytes_before);
    const B = chart('#layout-b', cb, pb, s.capacity_bytes_after);
    hooks.layouts = [A, B];
    const kinds = new Set([...A.kindsPresent, ...B.kindsPresent]);
    for (const k of kinds) $('#legend').append(el('li', { 'data-kind': k }, el('span', { class: 'swatch k-' + k }), k));
    A.draw();
    B.draw();
    onThemeChange(() => {
        A.draw();
        B.draw();
    });
    renderKinds(d.by_kind);
    renderGroups(d.groups || []);
    renderDeltas(d.tensors);
    $('#copy-link').addEventListener('click', async () => {
        try {
            await navigator.clipboard.writeText(location.href);
            $('#action-status').textContent = 'Link copied.';
        } catch {
            $('#action-status').textContent = location.href;
        }
    });
    hooks.ready = true;
    document.body.dataset.ready = '1';
}

main();

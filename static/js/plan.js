// plan.js - the plan page (/p/{id}), the link people share. Reads the id from the path, GETs
// two views of /api/v1/plans/{id} in parallel: ?view=summary (the result without its tensors,
// polled while the plan is queued or running) and ?view=layout (the tensors as columns), then
// puts the result (server/planner/RESULT.md) on the page: summary cards and notes
// (summary.js), layout chart (layoutchart.js) and timeline (timeline.js, with the runtime
// allocator's curve; its note in runtime.js), strategy and per-kind bars (bars.js), the Pallas
// kernels' VMEM (kernels.js), a recipe's model, step and bytes per category (recipecard.js)
// and its search for the most that fits (frontier.js), the peak and padding tables
// (tables.js), and the buttons (actions.js). The whole result (37 MB for 100,000 tensors) is
// fetched only for "Download JSON": parsing it as one object per tensor is what used to take
// seconds.

import { el, $, fmtInt, fmtBytes, apiGet, appUrl, planUrl, pollPlan, statusBadge } from './util.js';
import { onThemeChange } from './theme.js';
import { LayoutChart } from './layoutchart.js';
import { TimelineChart } from './timeline.js';
import { renderCards, renderNotes, renderSuggestions } from './summary.js';
import { renderPeakTable, renderPaddingTable } from './tables.js';
import { renderPeakBreakdown } from './peak.js';
import { renderAdvice } from './advice.js';
import { renderStrategies, renderByKind } from './bars.js';
import { renderRuntime } from './runtime.js';
import { renderKernels } from './kernels.js';
import { wireActions } from './actions.js';
import { wireWhatif } from './whatif.js';
import { renderRecipe } from './recipecard.js';
import { wireFrontier } from './frontier.js';

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

async function main() {
    const id = planId();
    if (!id) return showError('No plan id in this address.');
    let plan;
    // Both views at once: a finished plan (the usual case for a shared link) is then drawn
    // after one round trip. A plan still running has no layout yet: asked again when done.
    let layout = apiGet(planUrl(id, 'layout'));
    layout.catch(() => {}); // a failure is handled where it is awaited
    try {
        const onWait = (status, secs) => {
            $('#loading-text').textContent = `Plan is ${status}… (${secs} s)`;
            layout = null;
        };
        plan = (await pollPlan(planUrl(id, 'summary'), { onWait })).body;
    } catch (err) {
        return showError(err.status === 404 ? 'There is no plan at this address (it may have expired or been deleted).' : err.detail);
    }
    if (plan.status === 'failed' || !plan.result) {
        const e = plan.error || {};
        return showError((e.detail || 'The planner failed.') + (e.where ? ` (at ${e.where})` : '') +
            (plan.whatif ? ` What-if of ${plan.whatif.parent} with ${JSON.stringify(plan.whatif.overrides)}.` : ''));
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
    // Retention (--retain or ?retain=): the share link stops working at this time (410).
    if (plan.expires_at) meta.append(' · ', el('span', { id: 'plan-expires', title: plan.expires_at, text: `expires ${plan.expires_at.replace('T', ' ').slice(0, 16)} UTC` }));
    if (plan.parent_id) {
        // A what-if: back to the plan it changed, and the comparison with it.
        meta.append(' · what-if of ', el('a', { id: 'parent-link', href: appUrl('/p/' + plan.parent_id), text: plan.parent_id }),
            ' · ', el('a', { id: 'compare-link', href: appUrl(`/d/${plan.parent_id}/${plan.id}`), text: 'compare with it' }));
    } else if (plan.whatif) {
        meta.append(` · what-if of ${plan.whatif.parent} (deleted)`);
    }
    // The overrides that made it, as sent (whatif.parent, whatif.overrides).
    if (plan.whatif) meta.append(' · overrides ', el('code', { id: 'whatif-overrides', text: JSON.stringify(plan.whatif.overrides) }));

    const s = r.summary || {};
    const pk = r.packing || {};
    renderCards(r, s, pk);
    renderRecipe(r);
    const capacity = s.capacity_bytes || pk.capacity_bytes || 0;
    const peakStep = pk.peak && Number.isFinite(pk.peak.step) ? pk.peak.step : undefined;

    let timeline = null;
    const tl = pk.timeline;
    const end = Array.isArray(pk.steps) ? pk.steps[1] : undefined;
    if (tl && Array.isArray(tl.step) && tl.step.length) {
        timeline = new TimelineChart($('#timeline-canvas'), $('#timeline-tip'), tl, end ?? tl.step[tl.step.length - 1] + 1, { capacity, peakStep, runtime: pk.runtime || null, lowerBound: s.lower_bound_bytes });
        // Fragmentation is drawn only where there is some (the Fragmentation card's figure).
        $('#legend-gap').classList.toggle('hidden', !(s.fragmentation_bytes > 0));
        $('#timeline-note').textContent = tl.downsampled ? 'Downsampled: each point is the maximum over merged steps.' : '';
    } else {
        $('#timeline-note').textContent = 'No timeline in this result.';
    }
    const layout = new LayoutChart($('#layout-canvas'), $('#layout-tip'), cols, {
        capacity,
        budget: s.budget_bytes || 0,
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
            $('#op-group').value = '';
            const n = layout.setSearch(q);
            $('#search-count').textContent = q.trim() ? `${fmtInt(n)} match${n === 1 ? '' : 'es'}` + (n ? ' (Enter zooms to the first)' : '') : '';
        }, 120);
    });
    // HLO plans: highlight one op_name scope (a layer) at a time.
    const groups = layout.opGroups().slice(0, 200);
    if (groups.length) {
        const sel = $('#op-group');
        sel.append(el('option', { value: '', text: `Group by op_name (${fmtInt(groups.length)} scopes)…` }));
        for (const g of groups) sel.append(el('option', { value: g.scope, text: `${g.scope} — ${fmtInt(g.count)} buffers, ${fmtBytes(g.bytes)}` }));
        sel.classList.remove('hidden');
        sel.addEventListener('change', () => {
            $('#search').value = '';
            const n = layout.setGroup(sel.value);
            $('#search-count').textContent = sel.value ? `${fmtInt(n)} buffers in ${sel.value}` : '';
        });
    }
    $('#search').addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') layout.focus(layout.firstMatch());
    });
    $('#reset-zoom').addEventListener('click', () => layout.reset());
    wireXlaLayout(layout, cols, pk);
    onThemeChange(() => {
        layout.draw();
        if (timeline) timeline.draw();
    });

    // A table row shows its buffer in the chart.
    const pick = (i) => layout.reveal(i);
    renderPeakTable(r, layout, pick);
    renderPeakBreakdown(r);
    renderAdvice(r, plan.id || planId());
    renderStrategies(pk);
    renderRuntime(pk);
    renderByKind(s);
    renderSuggestions(r);
    renderKernels(r);
    wireActions(plan, plan.id || planId(), layout);
    wireWhatif(plan, plan.id || planId());
    wireFrontier(plan, plan.id || planId()).catch((e) => ($('#fr-error').textContent = String(e && e.message ? e.message : e)));
    // The charts are on screen after the next frame; the padding table (sorting up to
    // 1,000,000 rows) waits until then so it never delays the first paint.
    requestAnimationFrame(() =>
        setTimeout(() => {
            hooks.firstPaintMs = Math.round(performance.now());
            renderNotes(r, cols);
            renderPaddingTable(r, layout, pick);
            t('table');
            hooks.ready = true;
            document.body.dataset.ready = '1';
        }, 0),
    );
}

// With an XLA buffer assignment (packing.xla) the layout chart can show XLA's own offsets
// (the layout view's xla_offset column) in place of the chosen packing's.
function wireXlaLayout(layout, cols, pk) {
    const button = $('#xla-layout');
    if (!pk.xla || !Array.isArray(cols.xla_offset)) return;
    const ours = $('#layout-note').textContent;
    let showingXla = false;
    button.classList.remove('hidden');
    button.addEventListener('click', () => {
        showingXla = !showingXla;
        layout.useOffsets(showingXla ? cols.xla_offset : null);
        button.textContent = showingXla ? 'Our layout' : "XLA's layout";
        button.setAttribute('aria-pressed', String(showingXla));
        const unplaced = layout.n - layout.placed;
        $('#layout-note').textContent = showingXla
            ? `XLA's own layout: ${fmtInt(layout.placed)} buffers at XLA's offsets (allocations laid end to end)` +
              (unplaced ? `; ${fmtInt(unplaced)} ${unplaced === 1 ? 'matches no XLA value and is' : 'match no XLA value and are'} not drawn.` : '.')
            : ours;
    });
}

function renderLegend(layout) {
    const legend = $('#legend');
    for (const k of layout.kindsPresent) {
        legend.append(el('li', { 'data-kind': k }, el('span', { class: 'swatch k-' + k }), k));
    }
}

main().catch((err) => showError(String(err && err.message ? err.message : err)));

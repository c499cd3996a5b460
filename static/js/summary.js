// summary.js - the plan page's summary: the cards of key figures (chip, fits, peak against
// the lower bound, fragmentation, padding, tensors, strategy, assumptions), the assumptions
// and warnings the plan rests on, and the padding suggestions.

import { el, $, fmtBytes, fmtInt, fmtPct } from './util.js';
import { lookup } from './layoutchart.js';

export function card(label, value, detail, cls) {
    const c = el('div', { class: 'card' + (cls ? ' ' + cls : '') }, el('div', { class: 'label', text: label }), el('div', { class: 'value', text: value }));
    if (detail) c.append(el('div', { class: 'detail', text: detail }));
    return c;
}

export function renderCards(r, s, pk) {
    const cards = $('#cards');
    const chip = r.chip || {};
    const cap = s.capacity_bytes;
    if (chip.name) cards.append(card('Chip', chip.name, [chip.device_kind, chip.usable_hbm_bytes ? `usable HBM ${fmtBytes(chip.usable_hbm_bytes)}` : null].filter(Boolean).join(' · ')));
    else cards.append(card('Chip', 'none', `${r.model?.source_format === 'xla-buffer-assignment' ? "an XLA buffer assignment holds XLA's own sizes and names" : 'a MiniMalloc CSV names'} no chip: sizes are planned as given`));
    programCards(cards, r.program);
    if (!r.program) spaceCards(cards, r.memory_spaces);
    renderVerdict(cards, s);
    const above = s.lower_bound_bytes > 0 ? s.peak_bytes / s.lower_bound_bytes - 1 : null;
    cards.append(card('Peak vs lower bound', fmtBytes(s.peak_bytes), `lower bound ${fmtBytes(s.lower_bound_bytes)}` + (above !== null ? ` (peak ${fmtPct(above)} above)` : '')));
    cards.append(card('Fragmentation', fmtPct(s.fragmentation), `${fmtBytes(s.fragmentation_bytes)} lost to gaps at peak`));
    const padPct = s.logical_bytes > 0 ? s.padding_bytes / s.logical_bytes : null;
    cards.append(card('Padding overhead', fmtBytes(s.padding_bytes), `logical ${fmtBytes(s.logical_bytes)} → padded ${fmtBytes(s.padded_bytes)}` + (padPct !== null ? ` (+${fmtPct(padPct)})` : '')));
    cards.append(card('Tensors', fmtInt(s.tensors), Object.entries(s.by_kind || {}).map(([k, v]) => `${k} ${fmtInt(v.count)}`).join(' · ')));
    const chosen = (pk.strategies || []).find((x) => x.name === pk.chosen);
    cards.append(card('Strategy', pk.chosen || s.strategy || '?', chosen ? (chosen.proven_optimal ? 'proven optimal' : chosen.solved ? 'solved (optimality not proven)' : 'not solved') : null));
    if (pk.xla) cards.append(xlaCard(pk.xla, s));
    if (r.compile) cards.append(compileCard(r.compile));
    if (pk.xla_report) cards.append(xlaReportCard(pk.xla_report, s));
    const nAssumed = Number.isFinite(s.assumed_layouts) ? s.assumed_layouts : null;
    const nChip = (chip.assumptions || []).length;
    cards.append(card('Assumptions', nAssumed === null ? '–' : `${fmtInt(nAssumed)} of ${fmtInt(s.tensors)} layouts`, `layouts not confirmed by a source; ${nChip} chip assumption${nChip === 1 ? '' : 's'} (listed below)`, nAssumed ? '' : 'good'));
}

// An XLA program (result.program: server/planner/RESULT.md#the-program-section): its stage and
// partitioning, the evidence in the card's title, and a card per other memory space (host,
// VMEM), whose bytes are never added to HBM.
function programCards(cards, p) {
    if (!p) return;
    const c = card('Program', p.stage, p.partitioned ? 'partitioned: shapes per device, never divided again' : 'not partitioned: each sharding divides its global shape');
    c.id = 'program-card';
    c.title = [...p.stage_evidence, ...p.partition_evidence].join('\n');
    cards.append(c);
    spaceCards(cards, p.memory_spaces);
}

// A card per memory space other than HBM (an XLA program's, or a model's tensors in host
// memory: result.memory_spaces), whose bytes are never added to HBM.
function spaceCards(cards, spaces) {
    if (!Array.isArray(spaces)) return;
    const names = { host: 'Host memory', vmem: 'VMEM', other: 'Other memory spaces' };
    for (const sp of spaces) {
        const m = card(names[sp.space] || sp.space, fmtBytes(sp.bytes), `peak ${fmtBytes(sp.peak_bytes)} · ${fmtInt(sp.buffers)} buffer${sp.buffers === 1 ? '' : 's'} · apart from HBM, never added to it`);
        m.id = `space-${sp.space}-card`;
        cards.append(m);
    }
}

// The planner's one verdict (summary.verdict: server/planner/RESULT.md#the-verdict), in its
// words: the fit (HBM and every kernel's VMEM) and the budget, each a card whose details are
// the planner's checks. A result stored before the verdict existed shows its fits flag alone.
function renderVerdict(cards, s) {
    const v = s.verdict;
    if (!v) {
        cards.append(card('Fits', s.fits ? 'fits' : 'does not fit', '', s.fits ? 'good' : 'bad'));
        return;
    }
    const texts = (names) => v.checks.filter((c) => names.includes(c.name)).map((c) => c.text).join(' · ');
    const fit = card('Fits', v.fit, texts(['hbm', 'vmem']), v.fit === 'fits' ? 'good' : v.fit === 'does not fit' ? 'bad' : '');
    fit.id = 'fits-card';
    fit.title = v.text;
    cards.append(fit);
    if (v.budget) {
        const b = card('Budget', v.budget, texts(['budget']), v.budget === 'within budget' ? 'good' : 'bad');
        b.id = 'budget-card';
        cards.append(b);
    }
}

// XLA's own assignment (packing.xla) and its memory-usage report, next to our peak.
function xlaCard(x, s) {
    const parts = [`our peak ${fmtBytes(s.peak_bytes)}`];
    if (x.report) parts.push(`memory-usage report: ${fmtBytes(x.report.total_bytes)}`);
    parts.push(`${fmtInt(x.allocations)} allocations`);
    if (x.source === 'with-model') parts.push(`${fmtInt(x.matched_values)} of ${fmtInt(x.values)} values matched${x.in_place_values ? `, ${fmtInt(x.in_place_values)} in place` : ''}`);
    if (!x.live_ranges) parts.push('no live ranges in the dump');
    const c = card("XLA's own total", fmtBytes(x.total_bytes), parts.join(' · '));
    c.id = 'xla-card';
    return c;
}

// A before-optimization program read two ways (compile: server/planner/RESULT.md#the-compile-estimate):
// the compiler's peak (fused, scheduled) beside the written one, an upper bound.
function compileCard(cp) {
    const f = cp.fused || {};
    const chosen = cp.chosen === 'written' ? cp.written : cp.compiler;
    const parts = [
        `compiler ${fmtBytes(cp.compiler.peak_bytes)} · as written ${fmtBytes(cp.written.peak_bytes)} (upper bound)`,
        `${fmtInt(f.total)} values fused away (${fmtInt(f.loop)} loop, ${fmtInt(f.input)} input, ${fmtInt(f.output)} output)`,
        `order: ${cp.schedule?.chosen || '?'}`,
    ];
    const c = card(cp.chosen === 'written' ? 'Program as written' : 'Program as compiled', fmtBytes(chosen.peak_bytes), parts.join(' · '));
    c.id = 'compile-card';
    c.title = 'A program before optimization: planned as XLA will compile it unless asked for as written (reading=written).';
    return c;
}

// XLA's own report (packing.xla_report): an out-of-memory report's header and how many of its
// allocations our rules size as XLA did, or XLA's memory figures, next to our peak.
function xlaReportCard(x, s) {
    const parts = [`our peak ${fmtBytes(s.peak_bytes)}`];
    let value;
    if (x.allocations) {
        value = x.used ? x.used.text : `${fmtInt(x.allocations_listed)} allocations`;
        if (x.capacity) parts.push(`of ${x.capacity.text} ${x.memory_space || ''}`.trim());
        const checked = x.allocations.filter((a) => a.size_matches !== null).length;
        parts.push(`${fmtInt(checked - x.mismatches)} of ${fmtInt(checked)} allocations sized as XLA did`);
        if (x.mismatches) parts.push(`${fmtInt(x.mismatches)} not (see the warnings)`);
    } else {
        value = fmtBytes(x.xla_total_bytes);
        parts.push(x.form === 'maxtext' ? "MaxText's estimate" : 'CompiledMemoryStats');
    }
    const c = card("XLA's report", value, parts.join(' · '), x.mismatches ? 'bad' : '');
    c.id = 'xla-report-card';
    return c;
}

export function renderNotes(r, cols) {
    const ul = $('#assumptions');
    const items = [];
    for (const a of r.chip?.assumptions || []) items.push(['chip', a]);
    for (const a of r.compile?.assumptions || []) items.push(['compiler reading', a]);
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

export function renderSuggestions(r) {
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

// frontierchart.js - the chart of the "most that fits" panel (frontier.js): a frontier search's
// probes (server/planner/RESULT.md#the-frontier), the peak of each plan it ran (y) against the
// searched field's value (x; log2 when the probes span more than LOG_SPAN times), one line per
// swept value through its probes, a filled disc where the value fits and a cross where it does
// not, a ring round each line's largest that fits, and the capacity and the budget as labelled
// horizontal lines. Lines differ by colour and by dash pattern, points by shape: nothing is
// told by colour alone. SVG (the page's canvas charts draw thousands of buffers; this one draws
// at most 16 x 64 points): every point is an element with its own <title> as hover text.

import { el, fmtBytesShort, fmtInt } from './util.js';
import { byteTicks, fmtByteTicks, niceTicks } from './chart.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 760, H = 340;
const M = { left: 80, right: 16, top: 14, bottom: 46 };
const LOG_SPAN = 16; // x is log2 when the largest probe is more than this times the smallest
export const SERIES = 6; // .fr-s0 ... .fr-s5: colour and dash pattern of a line (app.css)

function svg(tag, attrs, ...children) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
}

// The x scale over [lo, hi] (values >= 1): {log, map(x) -> px, ticks}.
function xScale(lo, hi) {
    const log = hi / lo > LOG_SPAN;
    const f = log ? Math.log2 : (x) => x;
    let a = f(lo), b = f(hi);
    if (a === b) [a, b] = log ? [a - 1, b + 1] : [Math.max(0, a - 1), b + 1];
    // The end points a little inside the frame, so that their marks are not cut by it.
    const pw = W - M.left - M.right, inset = 10;
    const map = (x) => M.left + inset + ((f(x) - a) / (b - a)) * (pw - 2 * inset);
    let ticks;
    if (log) {
        ticks = [];
        for (let e = Math.ceil(a); e <= Math.floor(b); e++) ticks.push(2 ** e);
        while (ticks.length > 9) ticks = ticks.filter((_, i) => i % 2 === 0);
    } else {
        ticks = niceTicks(a, b, 6).filter((t) => Number.isInteger(t) && t >= 1);
    }
    return { log, map, ticks };
}

function yScale(top) {
    const ph = H - M.top - M.bottom;
    return (y) => M.top + ph - (y / top) * ph;
}

// Grid, tick labels and the two axis titles.
function axes(g, xs, ys, top, xTitle) {
    const yt = byteTicks(0, top, 5);
    const labels = fmtByteTicks(yt);
    for (const [k, t] of yt.entries()) {
        const y = ys(t);
        g.append(svg('line', { class: 'fr-grid', x1: M.left, x2: W - M.right, y1: y, y2: y }),
            svg('text', { class: 'fr-tick', x: M.left - 6, y, 'text-anchor': 'end', 'dominant-baseline': 'middle' }, labels[k]));
    }
    for (const t of xs.ticks) {
        const x = xs.map(t);
        g.append(svg('line', { class: 'fr-grid', x1: x, x2: x, y1: M.top, y2: H - M.bottom }),
            svg('text', { class: 'fr-tick', x, y: H - M.bottom + 16, 'text-anchor': 'middle' }, fmtInt(t)));
    }
    g.append(svg('rect', { class: 'fr-frame', x: M.left, y: M.top, width: W - M.left - M.right, height: H - M.top - M.bottom }),
        svg('text', { class: 'fr-axis-title', x: M.left + (W - M.left - M.right) / 2, y: H - 8, 'text-anchor': 'middle' }, xTitle + (xs.log ? ' (log2 scale)' : '')),
        svg('text', { class: 'fr-axis-title', transform: `translate(14 ${M.top + (H - M.top - M.bottom) / 2}) rotate(-90)`, 'text-anchor': 'middle' }, 'peak'));
}

// A horizontal limit line (capacity, budget) with its label at the left end, above it: the
// small values, which fit, are drawn below the line there; the largest that fits, whose own
// label the right end would cover, is further right.
function limit(g, cls, label, bytes, ys) {
    const y = ys(bytes);
    g.append(svg('g', { class: 'fr-limit ' + cls },
        svg('title', {}, `${label} ${fmtBytesShort(bytes)}`),
        svg('line', { x1: M.left, x2: W - M.right, y1: y, y2: y }),
        svg('text', { x: M.left + 4, y: y - 4, 'text-anchor': 'start' }, `${label} ${fmtBytesShort(bytes)}`)));
}

// One swept value's line: its probes in x order, each a point, and its largest that fits
// ringed and labelled; labels: the [x, y] of the labels drawn so far, so that two lines with the
// same largest value at about the same peak share one.
function series(k, ln, name, field, xs, ys, labels) {
    const g = svg('g', { class: `fr-series fr-s${k % SERIES}`, 'data-value': name });
    const pts = [...ln.probes].sort((p, q) => p.x - q.x);
    g.append(svg('polyline', { class: 'fr-path', points: pts.map((p) => `${xs.map(p.x).toFixed(1)},${ys(p.peak_bytes).toFixed(1)}`).join(' ') }));
    for (const p of pts) {
        const at = `translate(${xs.map(p.x).toFixed(1)} ${ys(p.peak_bytes).toFixed(1)})`;
        const tip = svg('title', {}, `${name}: ${field} ${p.x}, peak ${fmtBytesShort(p.peak_bytes)}, ${p.fits ? 'fits' : 'does not fit'}`);
        const mark = p.fits ? svg('circle', { r: 4 }) : svg('path', { d: 'M-4,-4L4,4M-4,4L4,-4' });
        g.append(svg('g', { class: 'fr-pt ' + (p.fits ? 'fits' : 'over'), transform: at, 'data-x': p.x, 'data-peak': p.peak_bytes }, tip, mark));
    }
    if (ln.max_fit !== null && ln.max_fit !== undefined) {
        const x = xs.map(ln.max_fit), y = ys(ln.max_fit_peak_bytes);
        const ring = svg('g', { class: 'fr-max', 'data-x': ln.max_fit },
            svg('title', {}, `${name}: most fits ${ln.max_fit}, peak ${fmtBytesShort(ln.max_fit_peak_bytes)}`),
            svg('circle', { cx: x, cy: y, r: 8 }));
        if (!labels.some(([lx, ly]) => Math.abs(lx - x) < 1 && Math.abs(ly - y) < 16)) {
            ring.append(svg('text', { x: x + 10, y: y + 16, 'text-anchor': 'start' }, String(ln.max_fit)));
            labels.push([x, y]);
        }
        g.append(ring);
    }
    return g;
}

// The capacities the lines fit against, each with the names of the lines that share it: one
// entry, but one per chip in a chip sweep (each line carries its own: server/planner/RESULT.md#the-frontier).
export function capacities(f, names) {
    const by = new Map();
    for (const [k, ln] of f.lines.entries()) {
        if (ln.error || ln.capacity_bytes === undefined) continue;
        if (!by.has(ln.capacity_bytes)) by.set(ln.capacity_bytes, []);
        by.get(ln.capacity_bytes).push(names[k]);
    }
    if (!by.size) by.set(f.capacity_bytes, []);
    return [...by.entries()].map(([bytes, of]) => ({ bytes, of }));
}

// A legend's sample of a line: classes cls (of the chart's line) give its colour and dashes.
function rule(cls, lineCls) {
    return svg('svg', { class: cls, width: 28, height: 10, 'aria-hidden': 'true' }, svg('line', { class: lineCls, x1: 0, y1: 5, x2: 28, y2: 5 }));
}

// Draws frontier f (the search's result) into box, and its legend into legend; names[k] is
// line k's name. Lines with an error (no probes) get a legend entry that says so, no line.
export function drawFrontier(box, legend, f, names) {
    const probes = f.lines.flatMap((ln) => ln.probes || []);
    box.replaceChildren();
    legend.replaceChildren();
    if (!probes.length) return;
    const xsAll = probes.map((p) => p.x);
    const xs = xScale(Math.min(...xsAll), Math.max(...xsAll));
    // one capacity line, or one per chip in a chip sweep, labelled with its chips
    const caps = capacities(f, names);
    const own = caps.length > 1;
    const top = Math.max(...probes.map((p) => p.peak_bytes), ...caps.map((c) => c.bytes), f.budget_bytes || 0) * 1.08;
    const ys = yScale(top);
    const field = f.maximize;
    const what = f.sweep ? `one line per ${f.sweep} (${names.join(', ')})` : 'one line';
    const chart = svg('svg', { class: 'fr-svg', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Peak against ${field}: ${what}` + '; capacity ' + caps.map((c) => (own ? c.of.join(', ') + ' ' : '') + fmtBytesShort(c.bytes)).join(', ') });
    chart.append(svg('title', {}, `The most that fits: the peak of each plan of the search against ${field}, ${what}`));
    const grid = svg('g', { class: 'fr-axes' });
    axes(grid, xs, ys, top, field);
    chart.append(grid);
    for (const c of caps) limit(chart, 'fr-capacity', own ? `capacity ${c.of.join(', ')}` : 'capacity', c.bytes, ys);
    if (f.budget_bytes) limit(chart, 'fr-budget', 'budget', f.budget_bytes, ys);
    const labels = [];
    for (const [k, ln] of f.lines.entries()) {
        const swatch = rule(`fr-s${k % SERIES}`, 'fr-path');
        if (ln.error || !ln.probes?.length) {
            legend.append(el('li', { class: 'muted' }, swatch, `${names[k]}: not planned (the table says why)`));
            continue;
        }
        chart.append(series(k, ln, names[k], field, xs, ys, labels));
        legend.append(el('li', { 'data-value': names[k] }, swatch, names[k]));
    }
    legend.append(el('li', {}, el('span', { class: 'fr-key', text: '●' }), 'fits'),
        el('li', {}, el('span', { class: 'fr-key', text: '✕' }), 'does not fit'),
        el('li', {}, el('span', { class: 'fr-key', text: '◯' }), 'most that fits'),
        el('li', {}, rule('fr-limit fr-capacity'), own ? 'capacity, one per chip' : 'capacity'));
    if (f.budget_bytes) legend.append(el('li', {}, rule('fr-limit fr-budget'), 'budget'));
    box.append(chart);
}

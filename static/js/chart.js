// chart.js - what the plan page's two canvas charts (layoutchart.js, timeline.js) share: both
// plot bytes (y) against program steps (x). The base class sizes the canvas to its box at the
// device pixel ratio and lays out the plot area inside fixed margins, maps between the data
// range in view and CSS pixels, draws the two axes with their grid and the plot's frame, and
// shows the HTML tooltip beside the pointer. A chart keeps its own data and marks, and draws
// them between these pieces: beginDraw, drawAxes, clipPlot ... restore, drawBorder.

import { el, fmtInt, BYTE_UNITS } from './util.js';
import { themeColors } from './theme.js';

const STEP_TITLE = 'program step (program order, not time)';
const STEP_TICK_PX = 90; // about one program-step tick per this many pixels

export class Chart {
    // canvas: the chart's <canvas>; tooltip: the element positioned over it (both in the
    // page, not owned); margins: {left, right, top, bottom}, CSS px around the plot area.
    // The subclass sets this.view, the data range in view ({x0, x1, y0, y1}), and draw().
    constructor(canvas, tooltip, margins) {
        this.canvas = canvas;
        this.tooltip = tooltip;
        this.m = margins;
        // A new size is drawn in the same frame, before it is painted (a redraw a frame
        // later shows the old bitmap stretched for one frame). The first notification comes
        // after the page's first draw: skipped when that draw already has this size.
        new ResizeObserver(() => {
            const { w, h } = boxSize(canvas);
            if (w !== this.cw || h !== this.ch || (window.devicePixelRatio || 1) !== this.dpr) this.draw();
        }).observe(canvas);
    }

    // Data <-> CSS px relative to the canvas, for the range in this.view.
    px(x) {
        return this.m.left + ((x - this.view.x0) / (this.view.x1 - this.view.x0)) * this.pw;
    }
    py(y) {
        return this.m.top + this.ph - ((y - this.view.y0) / (this.view.y1 - this.view.y0)) * this.ph;
    }
    dx(sx) {
        return this.view.x0 + ((sx - this.m.left) / this.pw) * (this.view.x1 - this.view.x0);
    }
    dy(sy) {
        return this.view.y0 + ((this.m.top + this.ph - sy) / this.ph) * (this.view.y1 - this.view.y0);
    }

    // The pointer of event ev in CSS px relative to the canvas.
    pointer(ev) {
        const r = this.canvas.getBoundingClientRect();
        return { x: ev.clientX - r.left, y: ev.clientY - r.top };
    }

    // Starts a frame: sizes the canvas bitmap to its box at the device pixel ratio, lays out
    // the plot area (this.pw x this.ph) and fills the background. Returns the 2D context,
    // scaled so that drawing works in CSS pixels, and the theme's colours.
    beginDraw() {
        const dpr = window.devicePixelRatio || 1;
        const { w, h } = boxSize(this.canvas);
        const cv = this.canvas;
        if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(h * dpr)) {
            cv.width = Math.round(w * dpr);
            cv.height = Math.round(h * dpr);
        }
        const ctx = cv.getContext('2d');
        ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        this.cw = w;
        this.ch = h;
        this.dpr = dpr;
        this.pw = Math.max(10, w - this.m.left - this.m.right);
        this.ph = Math.max(10, h - this.m.top - this.m.bottom);
        const c = themeColors();
        ctx.fillStyle = c.bg;
        ctx.fillRect(0, 0, w, h);
        return { ctx, c };
    }

    // Grid lines and tick labels of both axes: bytes up the left (a tick per about yTickPx
    // pixels), program steps along the bottom (whole steps unless fewer than 10 are in view)
    // with their title xTitleGap px below the plot, and yTitle (if any) turned up the left edge.
    drawAxes(ctx, c, { yTickPx, xTitleGap, yTitle }) {
        const v = this.view, m = this.m;
        ctx.font = '12px system-ui, sans-serif';
        ctx.lineWidth = 1;
        ctx.strokeStyle = c.grid;
        ctx.fillStyle = c.muted;
        const yt = byteTicks(v.y0, v.y1, Math.max(2, Math.floor(this.ph / yTickPx)));
        const labels = fmtByteTicks(yt);
        ctx.textAlign = 'right';
        ctx.textBaseline = 'middle';
        for (const [k, t] of yt.entries()) {
            const y = Math.round(this.py(t)) + 0.5;
            ctx.beginPath();
            ctx.moveTo(m.left, y);
            ctx.lineTo(m.left + this.pw, y);
            ctx.stroke();
            ctx.fillText(labels[k], m.left - 6, y);
        }
        ctx.textAlign = 'center';
        ctx.textBaseline = 'top';
        for (const t of niceTicks(v.x0, v.x1, Math.max(2, Math.floor(this.pw / STEP_TICK_PX)))) {
            if (!Number.isInteger(t) && v.x1 - v.x0 >= 10) continue;
            const x = Math.round(this.px(t)) + 0.5;
            ctx.beginPath();
            ctx.moveTo(x, m.top);
            ctx.lineTo(x, m.top + this.ph);
            ctx.stroke();
            ctx.fillText(fmtInt(Math.round(t * 100) / 100), x, m.top + this.ph + 5);
        }
        ctx.fillStyle = c.fg;
        ctx.fillText(STEP_TITLE, m.left + this.pw / 2, m.top + this.ph + xTitleGap);
        if (yTitle) {
            ctx.save();
            ctx.translate(14, m.top + this.ph / 2);
            ctx.rotate(-Math.PI / 2);
            ctx.textBaseline = 'middle';
            ctx.fillText(yTitle, 0, 0);
            ctx.restore();
        }
    }

    // Restricts drawing to the plot area until the caller's ctx.restore().
    clipPlot(ctx) {
        ctx.save();
        ctx.beginPath();
        ctx.rect(this.m.left, this.m.top, this.pw, this.ph);
        ctx.clip();
    }

    // The plot area's frame.
    drawBorder(ctx, c) {
        ctx.strokeStyle = c.border;
        ctx.lineWidth = 1;
        ctx.strokeRect(this.m.left + 0.5, this.m.top + 0.5, this.pw - 1, this.ph - 1);
    }

    // Shows the tooltip holding `nodes` beside the pointer at (sx, sy), CSS px in the canvas:
    // 16 px to its right, or to its left when it would cross the canvas's right edge; its top
    // dy px below the pointer, or above the pointer when it would hang more than 120 px below
    // the canvas; never past the canvas's left or top edge.
    showTip(nodes, sx, sy, dy) {
        const tip = this.tooltip;
        tip.replaceChildren(...nodes);
        tip.classList.remove('hidden');
        const tw = tip.offsetWidth, th = tip.offsetHeight;
        let left = sx + 16, top = sy + dy;
        if (left + tw > this.canvas.clientWidth) left = Math.max(0, sx - tw - 16);
        if (top + th > this.canvas.clientHeight + 120) top = sy - th - 16;
        tip.style.left = left + 'px';
        tip.style.top = Math.max(0, top) + 'px';
    }

    hideTip() {
        this.tooltip.classList.add('hidden');
    }
}

// A tooltip's [label, value] rows as a definition list.
export function tipRows(rows) {
    const dl = el('dl');
    for (const [k, v] of rows) dl.append(el('dt', { text: k }), el('dd', { text: v }));
    return dl;
}

function boxSize(canvas) {
    return { w: Math.max(1, Math.round(canvas.clientWidth)), h: Math.max(1, Math.round(canvas.clientHeight)) };
}

// About `count` round values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
export function niceTicks(lo, hi, count) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / Math.max(1, count);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const norm = raw / mag;
    const step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return out;
}

// Byte ticks at round binary values (1, 2, 5 ... 500 times a power of 1024).
export function byteTicks(lo, hi, count) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / Math.max(1, count);
    let unit = 1;
    while (unit * 1024 <= raw) unit *= 1024;
    const m = raw / unit;
    const mult = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : m <= 10 ? 10 : m <= 20 ? 20 : m <= 50 ? 50 : m <= 100 ? 100 : m <= 200 ? 200 : 500;
    const step = mult * unit;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(v);
    return out;
}

// Labels for byte ticks: one unit (that of the largest tick) and just enough decimals that
// neighbouring ticks differ ("386.75 MiB", "386.80 MiB").
export function fmtByteTicks(ticks) {
    const max = Math.max(...ticks.map(Math.abs), 1);
    let u = 0;
    while (u < BYTE_UNITS.length - 1 && max >= Math.pow(1024, u + 1)) u++;
    const unit = Math.pow(1024, u);
    const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) / unit : 1;
    const digits = Math.min(6, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)));
    return ticks.map((t) => (t === 0 ? '0' : (t / unit).toFixed(digits)) + ' ' + BYTE_UNITS[u]);
}

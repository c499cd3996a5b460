// timeline.js - live bytes against heap height over program steps. Fragmentation is shaded
// where there is some: where the heap height passes the lower bound (the most bytes ever live
// at once, which no packing can beat), from the lower bound (or the live bytes, when higher)
// up to the heap height. Its highest point is the Fragmentation card's figure, peak - lower
// bound; a plan at its lower bound shows none. Follows the layout chart's x range.
// With packing.runtime (the plan replayed through XLA's BFC allocator, the GPU-style runtime
// allocator, not what the TPU compiler does) it also draws that allocator's heap height as a
// dashed curve, its reserved bytes when they are in range, and the first step where one of its
// allocations would fail on a GPU (labelled so, never as a TPU out-of-memory).

import { fmtBytes, fmtInt, fmtPct } from './util.js';
import { Chart, tipRows } from './chart.js';

const M = { left: 84, right: 16, top: 18, bottom: 40 };

export class TimelineChart extends Chart {
    // tl: packing.timeline; end: one past the last step; opts: {capacity, peakStep, runtime,
    // lowerBound} (runtime: packing.runtime, or null; lowerBound: summary.lower_bound_bytes)
    constructor(canvas, tooltip, tl, end, opts) {
        super(canvas, tooltip, M);
        this.opts = opts || {};
        const n = tl.step.length;
        this.step = Float64Array.from(tl.step);
        this.end = Float64Array.from(tl.step.map((s, i) => (i + 1 < n ? tl.step[i + 1] : Math.max(end, s + 1))));
        this.live = Float64Array.from(tl.live_bytes);
        this.heap = Float64Array.from(tl.heap_bytes || tl.live_bytes);
        this.gapMax = tl.largest_gap_bytes ? Float64Array.from(tl.largest_gap_bytes) : null;
        this.n = n;
        this.full = { x0: n ? this.step[0] : 0, x1: n ? this.end[n - 1] : 1 };
        this.rt = runtimeSeries(this.opts.runtime, n);
        let ymax = 1;
        for (let i = 0; i < n; i++) ymax = Math.max(ymax, this.heap[i], this.live[i], this.rt ? this.rt.heap[i] : 0);
        const cap = this.opts.capacity;
        // Show the capacity line (and the runtime allocator's reserved bytes) when close
        // enough to be informative.
        this.showCap = Number.isFinite(cap) && cap > 0 && cap <= ymax * 1.6;
        if (this.rt) this.rt.show = this.rt.reservedMax <= ymax * 1.6;
        const top = Math.max(ymax, this.showCap ? cap : 0, this.rt && this.rt.show ? this.rt.reservedMax : 0);
        this.view = { ...this.full, y0: 0, y1: top * 1.08 };
        canvas.addEventListener('pointermove', (ev) => this.onMove(ev));
        canvas.addEventListener('pointerleave', () => this.hideTip());
    }

    // Shades [start, end) (a buffer's lifetime), or clears the shade with null.
    setHighlight(range) {
        const same = range && this.highlight && range[0] === this.highlight[0] && range[1] === this.highlight[1];
        if (same || (!range && !this.highlight)) return;
        this.highlight = range;
        this.draw();
    }

    setX(x0, x1) {
        this.view.x0 = Math.max(this.full.x0, x0);
        this.view.x1 = Math.min(this.full.x1, x1);
        this.draw();
    }

    draw() {
        const { ctx, c } = this.beginDraw();
        const v = this.view;
        this.drawAxes(ctx, c, { yTickPx: 45, xTitleGap: 22 });
        this.clipPlot(ctx);
        // Reduce to one value per pixel column (the maximum over the segments it covers),
        // so a frame costs O(segments + width) and draws whole pixels only.
        const cols = Math.ceil(this.pw);
        const lv = new Float64Array(cols).fill(-1), hv = new Float64Array(cols).fill(-1);
        const gv = this.gapMax ? new Float64Array(cols).fill(-1) : null;
        const k = this.pw / (v.x1 - v.x0);
        for (let i = 0; i < this.n; i++) {
            const cr = this.columns(i, k, cols);
            if (!cr) continue;
            for (let col = cr[0]; col <= cr[1]; col++) {
                if (this.live[i] > lv[col]) lv[col] = this.live[i];
                if (this.heap[i] > hv[col]) hv[col] = this.heap[i];
                if (gv && this.gapMax[i] > gv[col]) gv[col] = this.gapMax[i];
            }
        }
        const base = Math.round(this.py(0));
        const line = (arr) => {
            const p = new Path2D();
            let open = false;
            for (let col = 0; col < cols; col++) {
                if (arr[col] < 0) {
                    open = false;
                    continue;
                }
                const y = Math.round(this.py(arr[col])) + 0.5;
                if (!open) p.moveTo(M.left + col, y);
                else p.lineTo(M.left + col, y);
                p.lineTo(M.left + col + 1, y);
                open = true;
            }
            return p;
        };
        for (let col = 0; col < cols; col++) {
            if (lv[col] < 0) continue;
            const yl = Math.round(this.py(lv[col]));
            const frag = this.fragAt(lv[col], hv[col]);
            if (frag > 0) {
                const yh = Math.round(this.py(hv[col])), yb = Math.round(this.py(hv[col] - frag));
                ctx.fillStyle = c.gap;
                ctx.fillRect(M.left + col, yh, 1, yb - yh);
            }
            ctx.fillStyle = c.liveFill;
            ctx.fillRect(M.left + col, yl, 1, base - yl);
        }
        ctx.lineWidth = 2;
        ctx.strokeStyle = c.live;
        ctx.stroke(line(lv));
        ctx.strokeStyle = c.heap;
        ctx.stroke(line(hv));
        if (this.rt) this.drawRuntime(ctx, c, cols, k, line);
        if (gv) {
            // Largest free block below the heap top: what one more allocation could get.
            ctx.lineWidth = 1.5;
            ctx.strokeStyle = c.muted;
            ctx.setLineDash([3, 3]);
            ctx.stroke(line(gv));
            ctx.setLineDash([]);
        }
        if (this.highlight) {
            // The hovered buffer's lifetime (from the layout chart).
            const a = Math.max(M.left, this.px(this.highlight[0])), b = Math.min(M.left + this.pw, this.px(this.highlight[1]));
            if (b > a) {
                ctx.fillStyle = c.accent;
                ctx.globalAlpha = 0.18;
                ctx.fillRect(a, M.top, Math.max(1, b - a), this.ph);
                ctx.globalAlpha = 1;
                ctx.strokeStyle = c.accent;
                ctx.lineWidth = 1;
                ctx.strokeRect(Math.round(a) + 0.5, M.top + 0.5, Math.max(1, Math.round(b - a)), this.ph - 1);
            }
        }
        ctx.font = '600 12px system-ui, sans-serif';
        if (this.showCap) {
            const y = Math.round(this.py(this.opts.capacity)) + 0.5;
            ctx.strokeStyle = c.capacity;
            ctx.setLineDash([8, 4]);
            ctx.beginPath();
            ctx.moveTo(M.left, y);
            ctx.lineTo(M.left + this.pw, y);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.fillStyle = c.capacity;
            ctx.textAlign = 'right';
            ctx.textBaseline = 'bottom';
            ctx.fillText('capacity ' + fmtBytes(this.opts.capacity), M.left + this.pw - 6, y - 3);
        }
        const peak = this.opts.peakStep;
        if (Number.isFinite(peak)) {
            const x = Math.round(this.px(peak + 0.5)) + 0.5;
            ctx.strokeStyle = c.peak;
            ctx.lineWidth = 1.5;
            ctx.setLineDash([5, 3]);
            ctx.beginPath();
            ctx.moveTo(x, M.top);
            ctx.lineTo(x, M.top + this.ph);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.fillStyle = c.peak;
            ctx.textBaseline = 'top';
            ctx.textAlign = x + 60 < M.left + this.pw ? 'left' : 'right';
            ctx.fillText('peak', ctx.textAlign === 'left' ? x + 4 : x - 4, M.top + 2);
        }
        ctx.restore();
        this.drawBorder(ctx, c);
    }

    // Fragmentation at a step with these live bytes and heap height: the heap above the lower
    // bound and above the live bytes (0 when the heap stays within the lower bound).
    fragAt(live, heap) {
        const lb = this.opts.lowerBound;
        if (!Number.isFinite(lb)) return 0;
        return Math.max(0, heap - Math.max(live, lb));
    }

    // The pixel columns [c0, c1] segment i covers in the view (k: px per step), or null.
    columns(i, k, cols) {
        const v = this.view;
        if (this.end[i] <= v.x0 || this.step[i] >= v.x1) return null;
        const c0 = Math.max(0, Math.floor((this.step[i] - v.x0) * k));
        return [c0, Math.min(cols - 1, Math.max(c0, Math.ceil((this.end[i] - v.x0) * k) - 1))];
    }

    // The runtime allocator's heap height (dashed), its reserved bytes (dotted, when in
    // range) and its first failed allocation (a vertical mark).
    drawRuntime(ctx, c, cols, k, line) {
        const v = this.view, rt = this.rt;
        const hv = new Float64Array(cols).fill(-1), rv = new Float64Array(cols).fill(-1);
        for (let i = 0; i < this.n; i++) {
            const cr = this.columns(i, k, cols);
            if (!cr) continue;
            for (let col = cr[0]; col <= cr[1]; col++) {
                if (rt.heap[i] > hv[col]) hv[col] = rt.heap[i];
                if (rt.reserved[i] > rv[col]) rv[col] = rt.reserved[i];
            }
        }
        ctx.strokeStyle = c.runtime;
        ctx.lineWidth = 2;
        ctx.setLineDash([6, 3]);
        ctx.stroke(line(hv));
        if (rt.show) {
            ctx.lineWidth = 1;
            ctx.setLineDash([1, 3]);
            ctx.stroke(line(rv));
        }
        ctx.setLineDash([]);
        if (Number.isFinite(rt.oomStep) && rt.oomStep >= v.x0 && rt.oomStep < v.x1) {
            const x = Math.round(this.px(rt.oomStep + 0.5)) + 0.5;
            ctx.lineWidth = 1.5;
            ctx.beginPath();
            ctx.moveTo(x, M.top);
            ctx.lineTo(x, M.top + this.ph);
            ctx.stroke();
            ctx.font = '600 12px system-ui, sans-serif';
            ctx.fillStyle = c.runtime;
            ctx.textBaseline = 'top';
            ctx.textAlign = x + 150 < M.left + this.pw ? 'left' : 'right';
            ctx.fillText('GPU alloc fails (BFC)', ctx.textAlign === 'left' ? x + 4 : x - 4, M.top + 16);
        }
    }

    onMove(ev) {
        const { x: sx, y: sy } = this.pointer(ev);
        const x = this.dx(sx);
        if (sx < M.left || sx > M.left + this.pw || !this.n) {
            this.hideTip();
            return;
        }
        let lo = 0, hi = this.n - 1;
        while (lo < hi) {
            const mid = (lo + hi + 1) >> 1;
            if (this.step[mid] <= x) lo = mid;
            else hi = mid - 1;
        }
        const i = lo;
        const rows = [
            ['steps', `${fmtInt(this.step[i])} \u2013 ${fmtInt(this.end[i])}`],
            ['live', fmtBytes(this.live[i])],
            ['heap height', fmtBytes(this.heap[i])],
            ['fragmentation', fmtBytes(this.fragAt(this.live[i], this.heap[i]))],
        ];
        if (this.gapMax) rows.push(['largest free block', fmtBytes(this.gapMax[i])]);
        if (this.rt) {
            const rt = this.rt;
            rows.push(
                ['BFC heap (GPU runtime)', fmtBytes(rt.heap[i])],
                ['BFC in use', fmtBytes(rt.inUse[i])],
                ['BFC reserved', fmtBytes(rt.reserved[i])],
                ['BFC largest free chunk', fmtBytes(rt.largest[i])],
                ['BFC fragmentation', fmtPct(rt.frag[i])],
            );
        }
        this.showTip([tipRows(rows)], sx, sy, -20);
    }
}

// packing.runtime's timeline as typed arrays, when it has the static timeline's n points.
function runtimeSeries(rt, n) {
    const t = rt && rt.timeline;
    if (!t || !Array.isArray(t.heap_bytes) || t.heap_bytes.length !== n) return null;
    const reserved = Float64Array.from(t.reserved_bytes);
    return {
        heap: Float64Array.from(t.heap_bytes),
        inUse: Float64Array.from(t.in_use_bytes),
        reserved,
        largest: Float64Array.from(t.largest_free_bytes),
        frag: Float64Array.from(t.fragmentation),
        reservedMax: reserved.reduce((a, b) => Math.max(a, b), 0),
        oomStep: rt.first_failure ? rt.first_failure.step : undefined,
        show: false,
    };
}

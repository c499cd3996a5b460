// timeline.js - live bytes against heap height over program steps. The shaded gap between the
// two curves is memory lost to fragmentation at that step. Follows the layout chart's x range.

import { fmtBytes, fmtInt } from './util.js';
import { Chart, tipRows } from './chart.js';

const M = { left: 84, right: 16, top: 18, bottom: 40 };

export class TimelineChart extends Chart {
    // tl: packing.timeline; end: one past the last step; opts: {capacity, peakStep}
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
        let ymax = 1;
        for (let i = 0; i < n; i++) ymax = Math.max(ymax, this.heap[i], this.live[i]);
        const cap = this.opts.capacity;
        // Show the capacity line when it is close enough to be informative.
        this.showCap = Number.isFinite(cap) && cap > 0 && cap <= ymax * 1.6;
        this.view = { ...this.full, y0: 0, y1: (this.showCap ? Math.max(ymax, cap) : ymax) * 1.08 };
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
            if (this.end[i] <= v.x0 || this.step[i] >= v.x1) continue;
            const c0 = Math.max(0, Math.floor((this.step[i] - v.x0) * k));
            const c1 = Math.min(cols - 1, Math.max(c0, Math.ceil((this.end[i] - v.x0) * k) - 1));
            for (let col = c0; col <= c1; col++) {
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
            const yl = Math.round(this.py(lv[col])), yh = Math.round(this.py(hv[col]));
            ctx.fillStyle = c.gap;
            ctx.fillRect(M.left + col, yh, 1, yl - yh);
            ctx.fillStyle = c.liveFill;
            ctx.fillRect(M.left + col, yl, 1, base - yl);
        }
        ctx.lineWidth = 2;
        ctx.strokeStyle = c.live;
        ctx.stroke(line(lv));
        ctx.strokeStyle = c.heap;
        ctx.stroke(line(hv));
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
            ['fragmentation gap', fmtBytes(this.heap[i] - this.live[i])],
        ];
        if (this.gapMax) rows.push(['largest free block', fmtBytes(this.gapMax[i])]);
        this.showTip([tipRows(rows)], sx, sy, -20);
    }
}

// layoutchart.js - the memory layout chart: offset (y) against program step (x), one
// rectangle per buffer, drawn on one canvas.
//
// Built for 100,000+ buffers: the data arrives as columns (GET /api/v1/plans/{id}?view=layout:
// one array per tensor field, repeated strings as dictionaries, no object per tensor) and
// lives in typed arrays; a frame walks them once,
// culls rectangles outside the view and rasterises the rest into one pixel buffer (see
// drawRects), so sub-pixel buffers merge into the pixels they fall on. Hover hit-testing uses
// a uniform grid over the data space (CSR arrays): a mouse move checks a few buffers, not all.

import { fmtBytes, fmtInt, el } from './util.js';
import { KINDS, kindIndex } from './theme.js';
import { Chart, tipRows } from './chart.js';

const M = { left: 84, right: 16, top: 24, bottom: 44 };
const GRID_MAX_ITEMS = 6e6; // cap on hit-test index entries (24 MB)

export class LayoutChart extends Chart {
    // cols: the layout view ({tensors: n, name: [...], start: [...], kind: {values, index}, ...},
    // entry i of each column is tensor id i); opts: {capacity, budget, yMax (a byte axis shared
    // with another chart), peakStep, onView(x0, x1), onFocus(range)}
    constructor(canvas, tooltip, cols, opts) {
        super(canvas, tooltip, M);
        this.cols = cols;
        this.opts = opts || {};
        this.hover = -1;
        this.pinned = -1;
        this.matches = null; // Uint8Array of search matches, or null
        this.matchCount = 0;
        this.baseCols = cols;
        this.load(cols);
        this.view = this.fullView();
        this.bindEvents();
    }

    load(cols) {
        const n = cols.start.length;
        const { start, end, offset, padded_bytes: padded, logical_bytes: logical } = cols;
        const kindOf = cols.kind.values.map(kindIndex), kind = cols.kind.index;
        this.n = n;
        this.x0 = new Float64Array(n);
        this.x1 = new Float64Array(n);
        this.y0 = new Float64Array(n);
        this.y1 = new Float64Array(n);
        this.kind = new Uint8Array(n);
        let xmin = Infinity, xmax = -Infinity, ymax = 0, placed = 0;
        for (let i = 0; i < n; i++) {
            const known = Number.isFinite(start[i]) && Number.isFinite(end[i]);
            const a = known ? start[i] : 0, b = known ? end[i] : 1;
            const off = Number.isFinite(offset[i]) ? offset[i] : NaN;
            const size = Number.isFinite(padded[i]) ? padded[i] : logical[i] || 0;
            this.x0[i] = a;
            this.x1[i] = Math.max(b, a + 1e-9);
            this.y0[i] = off;
            this.y1[i] = off + size;
            this.kind[i] = kindOf[kind[i]];
            if (Number.isNaN(off)) continue;
            placed++;
            if (a < xmin) xmin = a;
            if (b > xmax) xmax = b;
            if (off + size > ymax) ymax = off + size;
        }
        if (!placed) {
            xmin = 0;
            xmax = 1;
        }
        this.placed = placed;
        this.extent = { x0: xmin, x1: Math.max(xmax, xmin + 1), y0: 0, y1: Math.max(ymax, this.opts.yMax || 0, 1) };
        const seen = new Uint8Array(KINDS.length);
        for (let i = 0; i < n; i++) seen[this.kind[i]] = 1;
        this.kindsPresent = KINDS.filter((_, k) => seen[k]);
        this.grid = null; // built on the first hover, so it never delays the first paint
    }

    buildIndex() {
        const { x0: ex0, x1: ex1, y0: ey0, y1: ey1 } = this.extent;
        for (let g = 128; g >= 4; g >>= 1) {
            const sx = g / (ex1 - ex0), sy = g / (ey1 - ey0);
            const cell = (v, lo, s) => Math.min(g - 1, Math.max(0, Math.floor((v - lo) * s)));
            let total = 0;
            for (let i = 0; i < this.n; i++) {
                if (Number.isNaN(this.y0[i])) continue;
                const w = cell(this.x1[i], ex0, sx) - cell(this.x0[i], ex0, sx) + 1;
                const h = cell(this.y1[i], ey0, sy) - cell(this.y0[i], ey0, sy) + 1;
                total += w * h;
            }
            if (total > GRID_MAX_ITEMS && g > 4) continue;
            const start = new Uint32Array(g * g + 1);
            const fill = (visit) => {
                for (let i = 0; i < this.n; i++) {
                    if (Number.isNaN(this.y0[i])) continue;
                    const cx0 = cell(this.x0[i], ex0, sx), cx1 = cell(this.x1[i], ex0, sx);
                    const cy0 = cell(this.y0[i], ey0, sy), cy1 = cell(this.y1[i], ey0, sy);
                    for (let cy = cy0; cy <= cy1; cy++)
                        for (let cx = cx0; cx <= cx1; cx++) visit(cy * g + cx, i);
                }
            };
            fill((c) => start[c + 1]++);
            for (let c = 0; c < g * g; c++) start[c + 1] += start[c];
            const pos = start.slice(0, g * g);
            const items = new Uint32Array(total);
            fill((c, i) => (items[pos[c]++] = i));
            this.grid = { g, sx, sy, start, items, cell };
            return;
        }
    }

    fullView() {
        const e = this.extent;
        return { x0: e.x0, x1: e.x1, y0: 0, y1: e.y1 * 1.04 };
    }

    reset() {
        this.view = this.fullView();
        this.draw();
    }

    // Draws the same buffers at other offsets (a column of the layout view, e.g. XLA's own
    // layout, xla_offset; null: the chosen packing's). Placed counts follow the column.
    useOffsets(offset) {
        this.cols = offset ? { ...this.baseCols, offset } : this.baseCols;
        this.load(this.cols);
        this.reset();
    }

    // HLO inputs: the op_name scopes (an op_name without its last "/" component, e.g.
    // "jit(train)/transformer/layer_3" for ".../layer_3/dot_general"), each with its buffer
    // count and padded bytes, largest first; [] without op names.
    opGroups() {
        const col = this.cols.op_name;
        if (!col) return [];
        const groups = new Map();
        for (let i = 0; i < this.n; i++) {
            const name = col.values[col.index[i]];
            if (typeof name !== 'string') continue;
            const cut = name.lastIndexOf('/');
            const scope = cut > 0 ? name.slice(0, cut) : name;
            const g = groups.get(scope) || { scope, count: 0, bytes: 0 };
            g.count++;
            g.bytes += this.cols.padded_bytes[i] || 0;
            groups.set(scope, g);
        }
        return [...groups.values()].sort((a, b) => b.bytes - a.bytes || (a.scope < b.scope ? -1 : 1));
    }

    // Highlights the buffers whose op_name lies in scope (the same dimming as a search);
    // '' clears it. Returns the number highlighted.
    setGroup(scope) {
        const col = this.cols.op_name;
        if (!scope || !col) return this.setSearch('');
        this.matches = new Uint8Array(this.n);
        let c = 0;
        for (let i = 0; i < this.n; i++) {
            const name = col.values[col.index[i]];
            if (typeof name === 'string' && (name === scope || name.startsWith(scope + '/'))) {
                this.matches[i] = 1;
                c++;
            }
        }
        this.matchCount = c;
        this.draw();
        return c;
    }

    setSearch(query) {
        const q = (query || '').trim().toLowerCase();
        if (!q) {
            this.matches = null;
            this.matchCount = 0;
        } else {
            this.matches = new Uint8Array(this.n);
            let c = 0;
            const names = this.cols.name;
            for (let i = 0; i < this.n; i++) {
                const name = names[i];
                if (typeof name === 'string' && name.toLowerCase().includes(q)) {
                    this.matches[i] = 1;
                    c++;
                }
            }
            this.matchCount = c;
        }
        this.draw();
        return this.matchCount;
    }

    // Zooms so that buffer i fills a good part of the view.
    focus(i) {
        if (i < 0 || i >= this.n || Number.isNaN(this.y0[i])) return;
        const w = this.x1[i] - this.x0[i], h = this.y1[i] - this.y0[i];
        const e = this.extent;
        const vw = Math.max(w * 1.6, (e.x1 - e.x0) / 50), vh = Math.max(h * 4, (e.y1 - e.y0) / 2000);
        const cx = (this.x0[i] + this.x1[i]) / 2, cy = (this.y0[i] + this.y1[i]) / 2;
        this.view = { x0: cx - vw / 2, x1: cx + vw / 2, y0: Math.max(0, cy - vh / 2), y1: Math.max(0, cy - vh / 2) + vh };
        this.draw();
    }

    // Shows buffer i picked outside the chart (a table row): zooms to it, pins its details
    // and scrolls the chart into view.
    reveal(i) {
        this.focus(i);
        this.pinned = i;
        this.hover = i;
        this.draw();
        const p = this.screenPoint(i);
        this.tooltip.classList.add('pinned');
        this.showTooltip(i, p.x, p.y);
        this.canvas.scrollIntoView({ block: 'center', behavior: 'instant' });
    }

    firstMatch() {
        if (!this.matches) return -1;
        return this.matches.indexOf(1);
    }

    draw() {
        const { ctx, c } = this.beginDraw();
        this.drawAxes(ctx, c, { yTickPx: 50, xTitleGap: 24, yTitle: 'offset in HBM' });
        // Under the rectangles: where none is drawn, the raster in drawRects is transparent.
        this.drawBorder(ctx, c);
        this.clipPlot(ctx);
        this.drawRects(ctx, c);
        this.drawMarkers(ctx, c);
        ctx.restore();
        if (this.opts.onView) this.opts.onView(this.view.x0, this.view.x1);
        if (this.opts.onFocus) {
            const i = this.pinned >= 0 ? this.pinned : this.hover;
            this.opts.onFocus(i >= 0 ? [this.x0[i], this.x1[i]] : null);
        }
    }

    // Rasterises every visible buffer straight into a pixel buffer. A valid packing has no
    // overlapping buffers, so the pixels written add up to at most the plot area plus one
    // pixel per buffer: the cost is O(n + pixels) however many tiny buffers there are, and
    // sub-pixel buffers merge by landing on the same pixel. One drawImage composites it.
    drawRects(ctx, c) {
        const dpr = window.devicePixelRatio || 1;
        const W = Math.max(1, Math.round(this.pw * dpr)), H = Math.max(1, Math.round(this.ph * dpr));
        if (!this.scratch) this.scratch = document.createElement('canvas');
        const sc = this.scratch;
        if (sc.width !== W || sc.height !== H) {
            sc.width = W;
            sc.height = H;
        }
        const sctx = sc.getContext('2d');
        const img = sctx.createImageData(W, H);
        const buf = new Uint32Array(img.data.buffer);
        const bg = rgba(c.bg);
        const searching = this.matches !== null;
        const full = c.kinds.map(rgba);
        const dim = searching ? full.map((k) => mix(k, bg, 0.18)) : full;
        const pack = full.map(pack32), dimPack = dim.map(pack32);
        const vx0 = this.view.x0, vx1 = this.view.x1, vy0 = this.view.y0, vy1 = this.view.y1;
        const kx = W / (vx1 - vx0), ky = H / (vy1 - vy0);
        const seam = Math.max(1, Math.round(dpr));
        let drawn = 0;
        for (let i = 0; i < this.n; i++) {
            const a = this.x0[i], b = this.x1[i], y0 = this.y0[i], y1 = this.y1[i];
            if (b <= vx0 || a >= vx1 || y1 <= vy0 || y0 >= vy1 || y0 !== y0) continue;
            let X0 = Math.round((a - vx0) * kx), X1 = Math.round((b - vx0) * kx);
            let Y0 = Math.round(H - (y1 - vy0) * ky), Y1 = Math.round(H - (y0 - vy0) * ky);
            // Leave a seam between neighbours once they are big enough to read as boxes.
            if (X1 - X0 > 4 * seam) X1 -= seam;
            if (Y1 - Y0 > 4 * seam) Y1 -= seam;
            if (X0 < 0) X0 = 0;
            if (Y0 < 0) Y0 = 0;
            if (X1 > W) X1 = W;
            if (Y1 > H) Y1 = H;
            if (X1 <= X0) X1 = Math.min(W, X0 + 1);
            if (Y1 <= Y0) Y1 = Math.min(H, Y0 + 1);
            if (X0 >= W || Y0 >= H) continue;
            const color = searching && !this.matches[i] ? dimPack[this.kind[i]] : pack[this.kind[i]];
            for (let y = Y0; y < Y1; y++) buf.fill(color, y * W + X0, y * W + X1);
            drawn++;
        }
        // Matches go on top so a dimmed neighbour rounded onto the same pixel cannot hide them.
        if (searching) {
            for (let i = 0; i < this.n; i++) {
                if (!this.matches[i]) continue;
                const a = this.x0[i], b = this.x1[i], y0 = this.y0[i], y1 = this.y1[i];
                if (b <= vx0 || a >= vx1 || y1 <= vy0 || y0 >= vy1 || y0 !== y0) continue;
                const X0 = Math.max(0, Math.round((a - vx0) * kx)), X1 = Math.min(W, Math.max(X0 + 1, Math.round((b - vx0) * kx)));
                const Y0 = Math.max(0, Math.round(H - (y1 - vy0) * ky)), Y1 = Math.min(H, Math.max(Y0 + 1, Math.round(H - (y0 - vy0) * ky)));
                for (let y = Y0; y < Y1; y++) buf.fill(pack[this.kind[i]], y * W + X0, y * W + X1);
            }
        }
        sctx.putImageData(img, 0, 0);
        ctx.drawImage(sc, M.left, M.top, this.pw, this.ph);
        this.drawn = drawn;
        const outline = (i, color, width) => {
            if (i < 0 || Number.isNaN(this.y0[i])) return;
            ctx.strokeStyle = color;
            ctx.lineWidth = width;
            const x0 = this.px(this.x0[i]), x1 = this.px(this.x1[i]);
            const y0 = this.py(this.y1[i]), y1 = this.py(this.y0[i]);
            ctx.strokeRect(x0 - 1, y0 - 1, Math.max(2, x1 - x0) + 1, Math.max(2, y1 - y0) + 1);
        };
        if (searching && this.matchCount <= 2000) {
            for (let i = 0; i < this.n; i++) if (this.matches[i]) outline(i, c.highlight, 1);
        }
        outline(this.pinned, c.accent, 2);
        outline(this.hover, c.highlight, 2);
    }

    drawMarkers(ctx, c) {
        const peak = this.opts.peakStep;
        ctx.font = '600 12px system-ui, sans-serif';
        if (Number.isFinite(peak)) {
            const x = Math.round(this.px(peak + 0.5)) + 0.5;
            if (x >= M.left && x <= M.left + this.pw) {
                haloLine(ctx, c, c.peak, [6, 3], x, M.top, x, M.top + this.ph);
                ctx.fillStyle = c.peak;
                ctx.textBaseline = 'top';
                const label = 'peak (step ' + fmtInt(peak) + ')';
                const right = x + 4 + ctx.measureText(label).width < M.left + this.pw;
                ctx.textAlign = right ? 'left' : 'right';
                this.fillLabel(ctx, c, label, right ? x + 4 : x - 4, M.top + 3);
            }
        }
        this.drawLimit(ctx, c, this.opts.capacity, c.capacity, 'capacity', [8, 4]);
        this.drawLimit(ctx, c, this.opts.budget, c.budget, 'budget', [2, 3]);
    }

    // A horizontal line at bytes v (the capacity, the budget), labelled; when it is above
    // the view, only the label, at the top.
    drawLimit(ctx, c, v, colour, name, dash) {
        if (!Number.isFinite(v) || v <= 0) return;
        ctx.textBaseline = 'bottom';
        ctx.textAlign = name === 'budget' ? 'left' : 'right';
        const x = name === 'budget' ? M.left + 6 : M.left + this.pw - 6;
        if (v >= this.view.y0 && v <= this.view.y1) {
            const y = Math.round(this.py(v)) + 0.5;
            haloLine(ctx, c, colour, dash, M.left, y, M.left + this.pw, y);
            ctx.fillStyle = colour;
            this.fillLabel(ctx, c, name + ' ' + fmtBytes(v), x, y - 3);
        } else if (v > this.view.y1) {
            ctx.fillStyle = colour;
            ctx.textBaseline = 'top';
            this.fillLabel(ctx, c, name + ' ' + fmtBytes(v) + ' is above this view \u2191', x, M.top + 3);
        }
    }

    // Text with a background box so it stays readable over rectangles.
    fillLabel(ctx, c, text, x, y) {
        const w = ctx.measureText(text).width;
        const left = ctx.textAlign === 'right' ? x - w : ctx.textAlign === 'center' ? x - w / 2 : x;
        const top = ctx.textBaseline === 'bottom' ? y - 15 : ctx.textBaseline === 'middle' ? y - 8 : y - 1;
        const fill = ctx.fillStyle;
        ctx.fillStyle = c.bg;
        ctx.globalAlpha = 0.85;
        ctx.fillRect(left - 3, top, w + 6, 16);
        ctx.globalAlpha = 1;
        ctx.fillStyle = fill;
        ctx.fillText(text, x, y);
    }

    // The buffer under (or within 4 px of) a canvas point, or -1.
    hit(sx, sy) {
        if (!this.grid) this.buildIndex();
        if (sx < M.left || sx > M.left + this.pw || sy < M.top || sy > M.top + this.ph) return -1;
        const { g, sx: gsx, sy: gsy, start, items, cell } = this.grid;
        const e = this.extent;
        const tol = 4;
        const ax = this.dx(sx - tol), bx = this.dx(sx + tol), ay = this.dy(sy + tol), by = this.dy(sy - tol);
        const cx0 = cell(ax, e.x0, gsx), cx1 = cell(bx, e.x0, gsx), cy0 = cell(ay, e.y0, gsy), cy1 = cell(by, e.y0, gsy);
        let best = -1, bestD = Infinity;
        for (let cy = cy0; cy <= cy1; cy++) {
            for (let cx = cx0; cx <= cx1; cx++) {
                const c = cy * g + cx;
                for (let k = start[c]; k < start[c + 1]; k++) {
                    const i = items[k];
                    const l = this.px(this.x0[i]), r = this.px(this.x1[i]);
                    const t = this.py(this.y1[i]), b = this.py(this.y0[i]);
                    const ddx = sx < l ? l - sx : sx > r ? sx - r : 0;
                    const ddy = sy < t ? t - sy : sy > b ? sy - b : 0;
                    const d = Math.max(ddx, ddy);
                    if (d > tol) continue;
                    // Inside beats near; among equals the smaller buffer wins (it is harder to hit).
                    const score = d * 1e6 + (r - l) * (b - t) / 1e6;
                    if (score < bestD) {
                        bestD = score;
                        best = i;
                    }
                }
            }
        }
        return best;
    }

    // Buffer i as an object with the result's tensor field names (server/planner/RESULT.md#fields), for tooltips
    // and tables: built on demand, never for all buffers at once.
    tensor(i) {
        const c = this.cols;
        return {
            id: i, name: c.name[i], kind: lookup(c.kind, i), shape: lookup(c.shape, i),
            logical_bytes: c.logical_bytes[i], padded_bytes: c.padded_bytes[i],
            live: Number.isFinite(c.start[i]) ? [c.start[i], c.end[i]] : null, offset: c.offset[i],
            layout_source: lookup(c.layout_source, i), confidence: lookup(c.confidence, i), tags: c.tags[i],
            op_name: c.op_name ? lookup(c.op_name, i) : null,
        };
    }

    // Canvas-relative centre of buffer i in the current view (for tests and keyboard focus).
    screenPoint(i) {
        const x = (Math.max(this.px(this.x0[i]), M.left) + Math.min(this.px(this.x1[i]), M.left + this.pw)) / 2;
        const y = (Math.max(this.py(this.y1[i]), M.top) + Math.min(this.py(this.y0[i]), M.top + this.ph)) / 2;
        return { x, y };
    }

    showTooltip(i, sx, sy) {
        if (i < 0) {
            this.hideTip();
            return;
        }
        const t = this.tensor(i);
        const rows = [
            ['kind', t.kind || '–'],
            ['shape', t.shape || '–'],
            ['logical', sizeText(t.logical_bytes)],
            ['padded', sizeText(t.padded_bytes) + (t.padded_bytes > t.logical_bytes && t.logical_bytes > 0 ? ` (+${((t.padded_bytes / t.logical_bytes - 1) * 100).toFixed(1)}%)` : '')],
            ['lifetime', Array.isArray(t.live) ? `steps ${fmtInt(t.live[0])} \u2013 ${fmtInt(t.live[1])} (${fmtInt(t.live[1] - t.live[0])} steps, end exclusive)` : '–'],
            ['offset', Number.isFinite(t.offset) ? `${fmtInt(t.offset)} (0x${t.offset.toString(16)}, ${fmtBytes(t.offset)})` : 'not placed'],
        ];
        if (t.layout_source) rows.push(['layout', t.layout_source + (t.confidence ? ` (${t.confidence})` : '')]);
        if (t.op_name) rows.push(['op_name', t.op_name]);
        if (Array.isArray(t.tags) && t.tags.length) rows.push(['tags', t.tags.join(', ')]);
        const name = el('div', { class: 'tt-name', text: String(t.name ?? '#' + (t.id ?? i)) });
        const note = el('div', { class: 'note', text: this.pinned === i ? 'pinned: click elsewhere to unpin' : 'click to pin' });
        this.showTip([name, tipRows(rows), note], sx, sy, 16);
    }

    bindEvents() {
        const cv = this.canvas;
        let drag = null;
        let raf = 0;
        const redraw = () => {
            if (raf) return;
            raf = requestAnimationFrame(() => {
                raf = 0;
                this.draw();
            });
        };
        cv.addEventListener('wheel', (ev) => {
            ev.preventDefault();
            const p = this.pointer(ev);
            const f = Math.exp(Math.max(-0.5, Math.min(0.5, ev.deltaY * 0.0015)));
            const v = this.view;
            const zx = !ev.altKey, zy = !ev.shiftKey;
            if (zx) {
                const cx = this.dx(p.x);
                v.x0 = cx - (cx - v.x0) * f;
                v.x1 = cx + (v.x1 - cx) * f;
            }
            if (zy) {
                const cy = this.dy(p.y);
                v.y0 = cy - (cy - v.y0) * f;
                v.y1 = cy + (v.y1 - cy) * f;
            }
            this.clampView();
            redraw();
        }, { passive: false });
        cv.addEventListener('pointerdown', (ev) => {
            if (ev.button !== 0) return;
            drag = { p: this.pointer(ev), v: { ...this.view }, moved: false };
            cv.setPointerCapture(ev.pointerId);
        });
        cv.addEventListener('pointermove', (ev) => {
            const p = this.pointer(ev);
            if (drag) {
                const ddx = p.x - drag.p.x, ddy = p.y - drag.p.y;
                if (Math.abs(ddx) + Math.abs(ddy) > 3) drag.moved = true;
                if (drag.moved) {
                    cv.classList.add('dragging');
                    const sx = (drag.v.x1 - drag.v.x0) / this.pw, sy = (drag.v.y1 - drag.v.y0) / this.ph;
                    this.view = { x0: drag.v.x0 - ddx * sx, x1: drag.v.x1 - ddx * sx, y0: drag.v.y0 + ddy * sy, y1: drag.v.y1 + ddy * sy };
                    this.clampView();
                    redraw();
                    return;
                }
            }
            if (this.pinned >= 0) return;
            const i = this.hit(p.x, p.y);
            if (i !== this.hover) {
                this.hover = i;
                redraw();
            }
            this.showTooltip(i, p.x, p.y);
        });
        cv.addEventListener('pointerup', (ev) => {
            cv.classList.remove('dragging');
            if (drag && !drag.moved) {
                const p = this.pointer(ev);
                const i = this.hit(p.x, p.y);
                this.pinned = i === this.pinned ? -1 : i;
                this.hover = i;
                this.tooltip.classList.toggle('pinned', this.pinned >= 0);
                this.showTooltip(i, p.x, p.y);
                redraw();
            }
            drag = null;
        });
        cv.addEventListener('pointerleave', () => {
            if (drag || this.pinned >= 0) return;
            this.hover = -1;
            this.showTooltip(-1);
            redraw();
        });
        cv.addEventListener('dblclick', () => this.reset());
        // Keyboard: arrows pan, + and - zoom, 0 resets, Escape unpins.
        cv.tabIndex = 0;
        cv.addEventListener('keydown', (ev) => {
            const v = this.view, w = v.x1 - v.x0, h = v.y1 - v.y0;
            const zoom = (f) => {
                const cx = (v.x0 + v.x1) / 2, cy = (v.y0 + v.y1) / 2;
                this.view = { x0: cx - (w * f) / 2, x1: cx + (w * f) / 2, y0: cy - (h * f) / 2, y1: cy + (h * f) / 2 };
            };
            const moves = {
                ArrowLeft: () => ((v.x0 -= w / 10), (v.x1 -= w / 10)),
                ArrowRight: () => ((v.x0 += w / 10), (v.x1 += w / 10)),
                ArrowUp: () => ((v.y0 += h / 10), (v.y1 += h / 10)),
                ArrowDown: () => ((v.y0 -= h / 10), (v.y1 -= h / 10)),
                '+': () => zoom(0.8),
                '=': () => zoom(0.8),
                '-': () => zoom(1.25),
                0: () => (this.view = this.fullView()),
                Escape: () => {
                    this.pinned = -1;
                    this.tooltip.classList.remove('pinned');
                    this.showTooltip(-1);
                },
            };
            const f = moves[ev.key];
            if (!f) return;
            ev.preventDefault();
            f();
            this.clampView();
            redraw();
        });
    }

    clampView() {
        const e = this.extent, v = this.view;
        const fw = e.x1 - e.x0, fh = e.y1 * 1.04;
        const minW = Math.min(fw, 1e-6 * fw + 0.5), minH = Math.min(fh, 64);
        if (v.x1 - v.x0 < minW) {
            const c = (v.x0 + v.x1) / 2;
            v.x0 = c - minW / 2;
            v.x1 = c + minW / 2;
        }
        if (v.y1 - v.y0 < minH) {
            const c = (v.y0 + v.y1) / 2;
            v.y0 = c - minH / 2;
            v.y1 = c + minH / 2;
        }
        // Never wider than the data (plus the capacity and budget lines), never far outside it.
        const maxH = Math.max(fh, Math.max(this.opts.capacity || 0, this.opts.budget || 0) * 1.05);
        if (v.x1 - v.x0 > fw) {
            v.x0 = e.x0;
            v.x1 = e.x1;
        }
        if (v.y1 - v.y0 > maxH) {
            v.y0 = 0;
            v.y1 = maxH;
        }
        if (v.x0 < e.x0) {
            v.x1 += e.x0 - v.x0;
            v.x0 = e.x0;
        }
        if (v.x1 > e.x1) {
            v.x0 -= v.x1 - e.x1;
            v.x1 = e.x1;
        }
        if (v.y0 < 0) {
            v.y1 -= v.y0;
            v.y0 = 0;
        }
        if (v.y1 > maxH) {
            v.y0 -= v.y1 - maxH;
            v.y1 = maxH;
        }
    }
}

// Entry i of a dictionary column ({values, index}) of the layout view.
export function lookup(col, i) {
    return col.values[col.index[i]];
}

function sizeText(n) {
    if (!Number.isFinite(n)) return '–';
    return `${fmtBytes(n)} (${fmtInt(n)} B)`;
}

// "#rrggbb" / "rgb(a)(...)" -> [r, g, b, a] (0..255); canvas parses anything CSS allows.
const colorCache = new Map();
function rgba(css) {
    if (colorCache.has(css)) return colorCache.get(css);
    const cv = document.createElement('canvas');
    cv.width = cv.height = 1;
    const x = cv.getContext('2d', { willReadFrequently: true });
    x.fillStyle = css;
    x.fillRect(0, 0, 1, 1);
    const d = x.getImageData(0, 0, 1, 1).data;
    const out = [d[0], d[1], d[2], d[3]];
    colorCache.set(css, out);
    return out;
}

function mix(a, b, t) {
    return [0, 1, 2].map((k) => Math.round(a[k] * t + b[k] * (1 - t))).concat(255);
}

// ImageData's Uint32 view is little-endian on every platform browsers run on: ABGR.
function pack32(c) {
    return ((255 << 24) | (c[2] << 16) | (c[1] << 8) | c[0]) >>> 0;
}

// A marker line with a background-coloured halo, so it stays visible over dense rectangles.
function haloLine(ctx, c, color, dash, x0, y0, x1, y1) {
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    ctx.strokeStyle = c.bg;
    ctx.lineWidth = 5;
    ctx.setLineDash([]);
    ctx.stroke();
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.setLineDash(dash);
    ctx.stroke();
    ctx.setLineDash([]);
}

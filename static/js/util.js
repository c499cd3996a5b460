// util.js - DOM building, byte formatting and API calls shared by both pages.
//
// Every user-supplied string reaches the page through textContent (el() below); nothing is
// ever assigned to innerHTML, so a tensor named "<img src=x onerror=...>" stays text.

export function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
        for (const [k, v] of Object.entries(attrs)) {
            if (v === undefined || v === null || v === false) continue;
            if (k === 'class') node.className = v;
            else if (k === 'text') node.textContent = String(v);
            else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
            else node.setAttribute(k, v === true ? '' : String(v));
        }
    }
    for (const c of children) {
        if (c === undefined || c === null || c === false) continue;
        node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
}

export function $(sel, root = document) {
    return root.querySelector(sel);
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

// Binary units, three significant digits: 16911433728 -> "15.75 GiB".
export function fmtBytes(n) {
    if (n === null || n === undefined || !Number.isFinite(n)) return '–';
    const neg = n < 0;
    let v = Math.abs(n);
    let u = 0;
    while (v >= 1024 && u < UNITS.length - 1) {
        v /= 1024;
        u++;
    }
    const s = u === 0 ? String(v) : v >= 100 ? v.toFixed(1) : v.toFixed(2);
    return (neg ? '-' : '') + s + ' ' + UNITS[u];
}

// Axis labels for a list of byte ticks: one unit (that of the largest tick) and just enough
// decimals that neighbouring ticks differ ("386.75 MiB", "386.80 MiB").
export function fmtTicks(ticks) {
    const max = Math.max(...ticks.map(Math.abs), 1);
    let u = 0;
    while (u < UNITS.length - 1 && max >= Math.pow(1024, u + 1)) u++;
    const unit = Math.pow(1024, u);
    const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) / unit : 1;
    const digits = Math.min(6, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)));
    return ticks.map((t) => (t === 0 ? '0' : (t / unit).toFixed(digits)) + ' ' + UNITS[u]);
}

export function fmtInt(n) {
    if (n === null || n === undefined || !Number.isFinite(n)) return '–';
    return n.toLocaleString('en-US');
}

export function fmtPct(x, digits = 1) {
    if (x === null || x === undefined || !Number.isFinite(x)) return '–';
    return (x * 100).toFixed(digits) + '%';
}

// Axis ticks: about `count` round values covering [lo, hi].
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

// Byte-axis ticks at round binary values (1, 2, 4 ... KiB/MiB/GiB multiples).
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

// Draws horizontal grid lines with right-aligned byte labels left of the plot, for the
// byte ticks `ticks`; `py` maps bytes to a y pixel. The caller sets stroke, fill and font.
export function drawByteGrid(ctx, ticks, py, left, width) {
    const labels = fmtTicks(ticks);
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const [k, t] of ticks.entries()) {
        const y = Math.round(py(t)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(left, y);
        ctx.lineTo(left + width, y);
        ctx.stroke();
        ctx.fillText(labels[k], left - 6, y);
    }
}

// Reads an RFC 9457 problem (or any error body) into an Error with .status, .detail, .where.
async function problemError(res) {
    let body = null;
    try {
        body = await res.json();
    } catch {
        body = null;
    }
    const detail = (body && (body.detail || body.title)) || `${res.status} ${res.statusText}`;
    const err = new Error(detail);
    err.status = res.status;
    err.detail = detail;
    err.where = body && typeof body.where === 'string' ? body.where : null;
    err.problem = body;
    return err;
}

export async function apiGet(url) {
    const res = await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    if (!res.ok) throw await problemError(res);
    return { body: await res.json(), res };
}

export async function apiPost(url, body, headers) {
    const res = await fetch(url, { method: 'POST', body, headers: { Accept: 'application/json', ...headers } });
    if (!res.ok) throw await problemError(res);
    return { body: await res.json(), res };
}

// Seconds to wait before the next poll: the server's Retry-After, clamped to [0.25, 5].
export function retryAfter(res, fallback = 0.5) {
    const h = res && res.headers.get('Retry-After');
    const v = h === null ? NaN : Number(h);
    const s = Number.isFinite(v) ? v : fallback;
    return Math.min(5, Math.max(0.25, s));
}

export function sleep(seconds) {
    return new Promise((r) => setTimeout(r, seconds * 1000));
}

// Offers a Blob as a download without navigating away.
export function download(filename, blob) {
    const url = URL.createObjectURL(blob);
    const a = el('a', { href: url, download: filename });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function statusBadge(status) {
    const cls = status === 'done' ? 'ok' : status === 'failed' ? 'bad' : 'run';
    return el('span', { class: 'badge ' + cls, text: status || 'unknown' });
}

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

export const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

// Binary units, three significant digits: 16911433728 -> "15.75 GiB".
export function fmtBytes(n) {
    if (n === null || n === undefined || !Number.isFinite(n)) return '–';
    const neg = n < 0;
    let v = Math.abs(n);
    let u = 0;
    while (v >= 1024 && u < BYTE_UNITS.length - 1) {
        v /= 1024;
        u++;
    }
    const s = u === 0 ? String(v) : v >= 100 ? v.toFixed(1) : v.toFixed(2);
    return (neg ? '-' : '') + s + ' ' + BYTE_UNITS[u];
}

// Bytes as the planner's own sentences print them (the verdict's checks, `tpuplan fit`):
// layout_format_bytes, after TSL's HumanReadableNumBytes: integer-divided by 1024 while at
// least 1 MiB, then divided once more and printed with two decimals (one for K), rounded as
// printf rounds (half to even on the exact value, done here in integers): 16911433728 ->
// "15.75G", 1262254080 -> "1.17G". Where the dashboard repeats a planner's answer, the figures
// then read the same as in the CLI.
export function fmtBytesShort(n) {
    if (n === null || n === undefined || !Number.isFinite(n) || n < 0) return '–';
    if (n < 1024) return Math.floor(n) + 'B';
    let v = Math.floor(n), u = 0;
    while (v >= 1048576) {
        v = Math.floor(v / 1024);
        u++;
    }
    const digits = u === 0 ? 1 : 2, scale = 10 ** digits;
    const q0 = Math.floor((v * scale) / 1024), r = v * scale - q0 * 1024;
    const q = r * 2 > 1024 || (r * 2 === 1024 && q0 % 2 === 1) ? q0 + 1 : q0;
    return `${Math.floor(q / scale)}.${String(q % scale).padStart(digits, '0')}${'KMGTPE'[u]}`;
}

export function fmtInt(n) {
    if (n === null || n === undefined || !Number.isFinite(n)) return '–';
    return n.toLocaleString('en-US');
}

export function fmtPct(x, digits = 1) {
    if (x === null || x === undefined || !Number.isFinite(x)) return '–';
    return (x * 100).toFixed(digits) + '%';
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

// The path the dashboard is served under ("" or e.g. "/tpuplan", the server's --base-path):
// this module lives at BASE/js/util.js, so it is read off the module's own address and
// every page works behind a reverse proxy without the server rewriting any file.
export const BASE = new URL('..', import.meta.url).pathname.replace(/\/$/, '');

// The address of an absolute application path ("/api/v1/chips") under BASE.
export function appUrl(path) {
    return BASE + path;
}

// GET/DELETE address of plan `id`; view: 'summary' or 'layout' (the result's two views), or none.
export function planUrl(id, view) {
    return appUrl('/api/v1/plans/' + encodeURIComponent(id)) + (view ? '?view=' + view : '');
}

// headers: more request headers (ownerHeaders() for the plan list). A large read (a whole
// plan of 100,000 tensors or more, its layout, a diff) that finds the server busy with others
// is 503 with Retry-After
// (server/service/README.md#large-reads-and-memory): asked again, up to BUSY_TRIES times.
const BUSY_TRIES = 5;
export async function apiGet(url, headers = {}) {
    for (let tries = 1; ; tries++) {
        const res = await fetch(url, { headers: { Accept: 'application/json', ...headers }, credentials: 'same-origin' });
        if (res.status === 503 && res.headers.get('Retry-After') !== null && tries < BUSY_TRIES) {
            await sleep(retryAfter(res));
            continue;
        }
        if (!res.ok) throw await problemError(res);
        return { body: await res.json(), res };
    }
}

// The API key a server under --require-key wants on every submission
// (server/service/README.md#api-keys:
// Authorization: Bearer tpk_...), kept for this tab only: sessionStorage is gone when the tab
// closes and is never sent anywhere but with the dashboard's own POSTs.
const KEY_ITEM = 'tpuplan.apikey';
export function apiKey() {
    try {
        return sessionStorage.getItem(KEY_ITEM) || '';
    } catch {
        return ''; // storage disabled: no key kept
    }
}
export function setApiKey(key) {
    try {
        if (key) sessionStorage.setItem(KEY_ITEM, key);
        else sessionStorage.removeItem(KEY_ITEM);
    } catch {
        // storage disabled: the key is sent with this submission only
    }
}
// This browser's client token (server/service/README.md#private-plans): 32 random bytes in
// base64url, made once and kept in localStorage, sent as TPUplan-Client with submissions and
// with the plan list, which then shows the plans this browser made. The server keeps only its
// SHA-256. A cross-site form cannot send the header, which is how the server tells the
// dashboard's own uploads from a forged one. Without storage it lasts as long as the page.
const CLIENT_ITEM = 'tpuplan.client';
let pageClient = '';
function newClientToken() {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
export function clientToken() {
    try {
        let t = localStorage.getItem(CLIENT_ITEM);
        if (!t || !/^[A-Za-z0-9_-]{22,64}$/.test(t)) {
            t = newClientToken();
            localStorage.setItem(CLIENT_ITEM, t);
        }
        return t;
    } catch {
        if (!pageClient) pageClient = newClientToken();
        return pageClient;
    }
}
// The headers that say whose plans a request is about: this browser's token, and the API key
// when one is kept (the list then holds the key's plans too).
export function ownerHeaders() {
    const key = apiKey();
    return { 'TPUplan-Client': clientToken(), ...(key ? { Authorization: 'Bearer ' + key } : {}) };
}

// Whether an API error is the server asking for an API key (401 key-required, 403 key-revoked).
export function isKeyProblem(err) {
    return (err.status === 401 || err.status === 403) && /\/problems\/key-[a-z]+$/.test(err.problem?.type || '');
}

// POSTs are submissions (a plan, a what-if): they carry this browser's token and the API key
// when one is kept.
export async function apiPost(url, body, headers) {
    const res = await fetch(url, { method: 'POST', body, headers: { Accept: 'application/json', ...ownerHeaders(), ...headers } });
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

// The one polling loop of the pages: GETs url (a plan's summary view: its status without the
// tensors; a frontier search, /api/v1/frontiers/{fid}) while the job is queued or running,
// waiting Retry-After between asks, and resolves to the last { body, res } (status done or
// failed). first, when given,
// is an answer already in hand (the upload's 201 or 202), read before any request.
// onWait(status, seconds) runs before each wait, seconds since the poll began. A failed
// request rejects with apiGet's error.
export async function pollPlan(url, { first, onWait } = {}) {
    const started = Date.now();
    let got = first || (await apiGet(url));
    while (got.body.status === 'queued' || got.body.status === 'running') {
        if (onWait) onWait(got.body.status, Math.round((Date.now() - started) / 1000));
        await sleep(retryAfter(got.res));
        got = await apiGet(url);
    }
    return got;
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

// POSTs a plan (body, with more request headers) to /api/v1/plans and follows it to its page
// (followPlan, progress in the element text). RFC 7240: small plans come back finished (201)
// in this one request; bigger ones answer 202 after at most 10 s and are polled. The manage
// token is kept in localStorage (only needed to delete the plan later).
export async function submitPlan(body, headers, text) {
    const h = { Prefer: 'respond-async, wait=10', ...headers };
    if (crypto.randomUUID) h['Idempotency-Key'] = crypto.randomUUID();
    const { body: created, res } = await apiPost(appUrl('/api/v1/plans'), body, h);
    try {
        if (created.manage_token) localStorage.setItem('tpuplan.manage.' + created.id, created.manage_token);
    } catch {
        // storage disabled: the token is only needed to delete the plan later
    }
    await followPlan(created, res, text);
}

// After a submission (created: its 201 or 202 body, res its response): polls the plan
// (pollPlan: Retry-After honoured) until it is done, saying so in the element text, then
// opens its page; a failed plan rejects with its problem (status, detail, where).
export async function followPlan(created, res, text) {
    const self = created.links?.self || planUrl(created.id);
    const first = { body: { ...created, status: created.status || 'queued' }, res };
    // The summary view: a finished plan's status without its (possibly 37 MB) tensors.
    const { body } = await pollPlan(self + '?view=summary', {
        first,
        onWait: (status, secs) => (text.textContent = `Plan ${status}… ${secs} s`),
    });
    if (body.status !== 'done') {
        const e = body.error || {};
        const err = new Error(e.detail || 'The planner failed.');
        err.status = e.status || 422;
        err.detail = err.message;
        err.where = e.where;
        throw err;
    }
    text.textContent = 'Done. Opening the plan…';
    location.assign(appUrl('/p/' + encodeURIComponent(created.id)));
}

// Canonical chip names from server/planner/chip.h, used only when the server offers no chip
// list; the usable HBM of each chip then comes back in the plan result.
const FALLBACK_CHIPS = ['v2', 'v3', 'v4', 'v5e', 'v5p', 'v6e', 'v7'];

// Fills the page's #chip select (and its #chip-hint) from GET /api/v1/chips.
export async function loadChips() {
    const select = $('#chip');
    const hint = $('#chip-hint');
    let chips = null;
    try {
        const { body } = await apiGet(appUrl('/api/v1/chips'));
        chips = Array.isArray(body) ? body : body.chips || body.items;
    } catch {
        chips = null;
    }
    if (Array.isArray(chips) && chips.length) {
        const notes = new Map();
        for (const c of chips) {
            const hbm = c.usable_hbm_bytes;
            const unsure = Array.isArray(c.uncertain) && c.uncertain.some((f) => /hbm/.test(f)) ? ' (assumed)' : '';
            select.append(el('option', { value: c.name, text: `${c.name}${c.device_kind ? ' — ' + c.device_kind : ''}${hbm ? ' · usable HBM ' + fmtBytes(hbm) + unsure : ''}` }));
            if (c.notes) notes.set(c.name, c.notes);
        }
        const base = 'Usable HBM is the capacity the runtime reports.';
        hint.textContent = base;
        select.addEventListener('change', () => (hint.textContent = notes.get(select.value) || base));
    } else {
        for (const n of FALLBACK_CHIPS) select.append(el('option', { value: n, text: n }));
        hint.textContent = "The chip's usable HBM is shown with the plan.";
    }
}

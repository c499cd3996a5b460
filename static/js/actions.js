// actions.js - the plan page's buttons: copy the share link, download the whole result as
// JSON or the layout as CSV (MiniMalloc's columns with the offsets, names and kinds), and
// delete the plan (offered only to the browser that created it).

import { $, apiGet, apiKey, appUrl, download, planUrl } from './util.js';
import { lookup } from './layoutchart.js';

// One CSV cell. A text cell that a spreadsheet would run as a formula (it starts with
// = + - @, a tab or a carriage return: OWASP's "CSV Injection") or that starts with the
// apostrophe itself gets a leading apostrophe, the spreadsheets' mark for text, as
// `tpuplan pack --out` writes its ids; numbers are written as they are.
function csvField(v) {
    let s = v === null || v === undefined ? '' : String(v);
    if (typeof v === 'string' && /^[=+\-@\t\r']/.test(s)) s = "'" + s;
    return /[",\r\n]/.test(s) || /^[ \t]|[ \t]$/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

function layoutCsv(c) {
    const lines = ['id,lower,upper,size,offset,name,kind'];
    c.name.forEach((name, i) => {
        lines.push([i, c.start[i] ?? '', c.end[i] ?? '', c.padded_bytes[i] ?? c.logical_bytes[i], c.offset[i] ?? '', name, lookup(c.kind, i)].map(csvField).join(','));
    });
    return lines.join('\n') + '\n';
}

function safeFileName(name) {
    return (String(name || 'plan').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'plan');
}

// plan: the summary view; id: its id; layout: the layout chart (whose columns the CSV lists).
export function wireActions(plan, id, layout) {
    const r = plan.result;
    const status = $('#action-status');
    const share = plan.links?.share ? new URL(plan.links.share, location.origin).href : location.origin + appUrl('/p/' + encodeURIComponent(id));
    const input = $('#share-url');
    input.value = share;
    $('#copy-link').addEventListener('click', async () => {
        try {
            await navigator.clipboard.writeText(share);
            status.textContent = 'Share link copied: ' + share;
        } catch {
            // Clipboard blocked (insecure origin or permissions): let the user copy by hand.
            input.classList.remove('hidden');
            input.select();
            status.textContent = 'Copy the selected link (Ctrl+C):';
        }
    });
    wireDelete(id, status);
    const base = safeFileName(plan.name || r.model?.name);
    // The whole result is the one thing the page never needs to draw: fetched on click.
    const dl = $('#dl-json');
    dl.addEventListener('click', async () => {
        dl.disabled = true;
        status.textContent = 'Fetching the whole result…';
        try {
            const { body } = await apiGet(planUrl(id));
            download(base + '.plan.json', new Blob([JSON.stringify(body.result, null, 2)], { type: 'application/json' }));
            status.textContent = '';
        } catch (err) {
            status.textContent = 'Could not fetch the result: ' + (err.detail || err.message);
        } finally {
            dl.disabled = false;
        }
    });
    $('#dl-csv').addEventListener('click', () => download(base + '.layout.csv', new Blob([layoutCsv(layout.cols)], { type: 'text/csv' })));
}

// The manage token is kept only by the browser that created the plan (upload.js); share
// links are read-only, so only that browser offers to delete. Under --require-key the server
// takes the API key that created the plan instead, so the tab's key goes when one is kept.
function wireDelete(id, status) {
    let token = null;
    try {
        token = localStorage.getItem('tpuplan.manage.' + id);
    } catch {
        token = null;
    }
    if (!token) return;
    const button = $('#delete');
    button.classList.remove('hidden');
    button.addEventListener('click', async () => {
        if (!confirm('Delete this plan? Its share link stops working.')) return;
        const res = await fetch(planUrl(id), { method: 'DELETE', headers: { Authorization: 'Bearer ' + (apiKey() || token) } });
        if (res.ok || res.status === 404) {
            localStorage.removeItem('tpuplan.manage.' + id);
            location.assign(appUrl('/'));
            return;
        }
        const body = await res.json().catch(() => null);
        status.textContent = 'Could not delete: ' + ((body && body.detail) || res.status);
    });
}

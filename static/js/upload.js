// upload.js - the upload page (/): pick or drop a model description, a safetensors file (only
// its header is read and sent) or a MiniMalloc CSV, choose chip and strategies, POST it to
// /api/v1/plans, follow the job until it is done, then open the plan page.

import { el, $, fmtBytes, fmtInt, apiGet, apiKey, setApiKey, isKeyProblem, ownerHeaders, appUrl, statusBadge, submitPlan, loadChips } from './util.js';
import { readSafetensorsHeader, detectFormat } from './safetensors.js';

const FIELDS = ['file', 'name', 'chip', 'strategies', 'capacity', 'time_limit', 'xla_assignment', 'xla_report', 'api_key'];

let picked = null; // {file, format, body (Blob to send), info}

function clearErrors() {
    for (const f of [...FIELDS, 'general']) {
        $('#err-' + f).textContent = '';
        const input = $('#' + f);
        if (input) input.classList.remove('invalid');
    }
    $('#drop').classList.remove('invalid');
}

// Puts an API problem next to the field its `where` names (model errors go to the file).
function showProblem(err) {
    if (isKeyProblem(err)) {
        // Under --require-key: ask for the key where it is typed, then the user resubmits.
        showKeyField();
        $('#err-api_key').textContent = err.detail;
        $('#api_key').classList.add('invalid');
        $('#api_key').focus();
        return;
    }
    const where = (err.where || '').toLowerCase();
    let field = 'file';
    // A parameter problem without `where` names its field first ("capacity must be ...").
    const first = !where && /^([a-z_]+)\b/.exec(err.detail || '');
    if (first && FIELDS.includes(first[1])) field = first[1];
    for (const f of FIELDS) if (where === f || where.startsWith(f + '.') || where.startsWith(f + '[')) field = f;
    if (where.startsWith('time_limit') || where.startsWith('time-limit')) field = 'time_limit';
    // Transport failures, overload and server faults are not about any one field.
    if ((!err.status || err.status >= 500 || err.status === 429) && !err.where) field = 'general';
    const text = err.detail + (err.where && field === 'file' && where !== 'file' ? `\n(at ${err.where})` : '');
    $('#err-' + field).textContent = text;
    (field === 'file' ? $('#drop') : $('#' + field) || $('#drop')).classList.add('invalid');
}

// The API key field is shown once the server has asked for a key (or one is kept already).
function showKeyField() {
    $('#api_key-field').classList.remove('hidden');
}

async function pick(file) {
    clearErrors();
    picked = null;
    $('#submit-hint').textContent = 'Reading…';
    const info = $('#file-info');
    info.textContent = '';
    try {
        const format = await detectFormat(file);
        if (format === 'safetensors') {
            const h = await readSafetensorsHeader(file);
            picked = { file, format, body: h.blob, info: h };
            info.textContent = `${file.name}: safetensors, ${fmtInt(h.tensors)} tensors; only the ${fmtBytes(h.blob.size)} header is sent (${fmtBytes(file.size - h.blob.size)} of weights stay here).`;
        } else {
            const limit = 64 * 1024 * 1024;
            if (file.size > limit) throw new Error(`${file.name} is ${fmtBytes(file.size)}; model descriptions and CSVs are limited to ${fmtBytes(limit)}.`);
            picked = { file, format, body: file };
            const what = { csv: 'MiniMalloc CSV', json: 'model description (JSON)', text: 'text (an XLA program as HLO or StableHLO, an XLA buffer assignment or an XLA out-of-memory report, detected by the server)' }[format];
            info.textContent = `${file.name}: ${what}, ${fmtBytes(file.size)}.`;
        }
        $('#submit-hint').textContent = 'Ready.';
    } catch (err) {
        $('#err-file').textContent = err.message;
        $('#drop').classList.add('invalid');
        $('#submit-hint').textContent = 'Choose another file.';
    }
}

const MIME = { safetensors: 'application/octet-stream', json: 'application/json', csv: 'text/csv', text: 'text/plain' };
// Optional files sent beside the model: XLA's dumps of the same program (multipart fields).
const ATTACH = ['xla_assignment', 'xla_report'];

async function submit(ev) {
    ev.preventDefault();
    clearErrors();
    if (!picked) {
        $('#err-file').textContent = 'Choose a model description, a safetensors file, a CSV or an XLA program first.';
        $('#drop').classList.add('invalid');
        return;
    }
    const form = new FormData();
    // The file part carries only what must be sent: the safetensors header, or the whole text.
    const blob = new Blob([picked.body], { type: MIME[picked.format] });
    form.append('file', blob, picked.file.name);
    for (const f of ATTACH) {
        const file = $('#' + f).files[0];
        if (file) form.append(f, new Blob([file], { type: 'text/plain' }), file.name);
    }
    const name = $('#name').value.trim();
    if (name) form.append('name', name);
    if ($('#chip').value) form.append('chip', $('#chip').value);
    form.append('strategies', $('#strategies').value);
    const cap = $('#capacity').value.trim();
    if (cap) {
        const gib = Number(cap);
        if (!(gib > 0)) {
            showProblem({ status: 400, detail: 'Capacity must be a positive number of GiB.', where: 'capacity' });
            return;
        }
        form.append('capacity', String(Math.round(gib * 1024 * 1024 * 1024)));
    }
    const tl = $('#time_limit').value.trim();
    if (tl) form.append('time_limit', tl);
    if (!$('#api_key-field').classList.contains('hidden')) setApiKey($('#api_key').value.trim());

    const button = $('#submit');
    button.disabled = true;
    $('#progress').classList.remove('hidden');
    const text = $('#progress-text');
    text.textContent = `Uploading ${fmtBytes(blob.size)} and planning…`;
    try {
        await submitPlan(form, {}, text);
    } catch (err) {
        $('#progress').classList.add('hidden');
        showProblem(err.status ? err : { detail: 'Could not reach the server: ' + err.message });
    } finally {
        button.disabled = false;
    }
}

let cursor = null;
async function loadRecent(reset) {
    const tbody = $('#recent tbody');
    const note = $('#recent-note');
    if (reset) {
        cursor = null;
        tbody.replaceChildren();
    }
    const params = new URLSearchParams({ limit: '20' });
    if (cursor) params.set('cursor', cursor);
    const q = $('#recent-filter').value.trim();
    if (q) params.set('name', q);
    try {
        // The server lists this browser's plans (and its API key's), or everyone's under
        // --public-list (scope "all").
        const { body } = await apiGet(appUrl('/api/v1/plans?' + params), ownerHeaders());
        const items = body.items || [];
        for (const p of items) {
            const s = p.summary || p; // list items carry the summary columns inline
            const link = el('a', { href: appUrl('/p/' + encodeURIComponent(p.id)), text: p.name || p.id });
            const fits = s.fits === true ? el('span', { class: 'badge ok', text: 'fits' }) : s.fits === false && p.status === 'done' ? el('span', { class: 'badge bad', text: 'over' }) : '–';
            tbody.append(el('tr', null, el('td', { class: 'name' }, link), el('td', { text: p.chip || '' }), el('td', null, statusBadge(p.status)),
                el('td', { class: 'num', text: fmtInt(s.tensors) }), el('td', { class: 'num', text: s.peak_bytes ? fmtBytes(s.peak_bytes) : '–' }),
                el('td', null, fits), el('td', { class: 'small muted', text: p.created_at ? String(p.created_at).replace('T', ' ').slice(0, 19) : '' })));
        }
        cursor = body.next_cursor || null;
        $('#recent-more').classList.toggle('hidden', !cursor);
        const mine = body.scope === 'mine';
        $('#recent-title').textContent = mine ? 'Your recent plans' : 'Recent plans';
        note.textContent = tbody.children.length ? '' : q ? 'No plan matches.' : mine ? 'No plans from this browser yet. Plans others share with you open from their links.' : 'No plans yet.';
    } catch (err) {
        note.textContent = 'Could not list plans: ' + (err.detail || err.message);
    }
}

function wire() {
    const drop = $('#drop');
    const input = $('#file');
    input.addEventListener('change', () => input.files[0] && pick(input.files[0]));
    drop.addEventListener('click', (ev) => {
        if (ev.target.closest('label') || ev.target === input) return;
        input.click();
    });
    drop.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
            ev.preventDefault();
            input.click();
        }
    });
    drop.addEventListener('dragover', (ev) => {
        ev.preventDefault();
        drop.classList.add('over');
    });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', (ev) => {
        ev.preventDefault();
        drop.classList.remove('over');
        const f = ev.dataTransfer.files[0];
        if (f) pick(f);
    });
    $('#upload-form').addEventListener('submit', submit);
    let t = 0;
    $('#recent-filter').addEventListener('input', () => {
        clearTimeout(t);
        t = setTimeout(() => loadRecent(true), 200);
    });
    $('#recent-more').addEventListener('click', () => loadRecent(false));
}

wire();
if (apiKey()) {
    $('#api_key').value = apiKey();
    showKeyField();
}
loadChips();
loadRecent(true);

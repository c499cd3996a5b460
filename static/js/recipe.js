// recipe.js - the "From a model config" page (/recipe.html): a preset or a pasted config.json,
// a training step (batch, sequence, microbatches, remat policy, optimizer, attention), a chip
// and a mesh become a recipe (server/planner/INPUT.md#from-a-model-config-recipes), POSTed as
// JSON to /api/v1/plans; the page follows the plan and opens it. The presets, policies and
// named choices come from GET /api/v1/recipes. Every field but a pasted config lives in the
// page's address (history.replaceState on each change), so a configuration is a link.

import { el, $, fmtInt, apiGet, appUrl, isKeyProblem, submitPlan, loadChips } from './util.js';

// The form's fields kept in the address, with their defaults (a default is left out of it).
const PARAMS = { preset: '', batch: '8', seq: '4096', microbatches: '1', remat: 'nothing_saveable', optimizer: 'adamw', state_dtype: 'f32', attention: 'flash', chip: '', data: '1', fsdp: '1', tensor: '1', sequence: '1', expert: '1', pipeline: '1' };
const MESH = ['data', 'fsdp', 'tensor', 'sequence', 'expert', 'pipeline'];
const FIELDS = [...Object.keys(PARAMS), 'config'];

function fill(select, values, label = (v) => v) {
    select.replaceChildren(...values.map((v) => el('option', { value: v, text: label(v) })));
}

function clearErrors() {
    for (const f of [...FIELDS, 'general']) {
        const err = $('#err-' + f);
        if (err) err.textContent = '';
        const input = $('#' + f);
        if (input) input.classList.remove('invalid');
    }
}

// The form field a problem's `where` names: "train.batch" -> batch, "mesh.fsdp" -> fsdp,
// "model.preset" -> preset, another "model." field -> the pasted config.
function fieldOf(where) {
    const w = (where || '').replace(/^overrides\.recipe\./, '');
    const [head, key, sub] = w.split('.');
    if (head === 'train' && key === 'optimizer') return sub === 'state_dtype' ? 'state_dtype' : 'optimizer';
    if (head === 'train' && key in PARAMS) return key;
    if (head === 'mesh') return key === 'context' ? 'sequence' : key === 'stage' ? 'pipeline' : MESH.includes(key) ? key : 'general';
    if (head === 'model') return $('#source').value === 'preset' ? 'preset' : 'config';
    if (head === 'chip') return 'chip';
    return 'general';
}

function showProblem(err) {
    const field = fieldOf(err.where);
    const extra = isKeyProblem(err) ? ' Enter the API key on the upload page (it is kept for this tab).' : '';
    $('#err-' + field).textContent = err.detail + (field === 'general' && err.where ? ` (at ${err.where})` : '') + extra;
    const input = $('#' + field);
    if (input) input.classList.add('invalid');
}

// The recipe the form describes; throws {where, detail} for what the page can tell itself.
function recipe() {
    const int = (id) => Number($('#' + id).value);
    let model;
    if ($('#source').value === 'preset') {
        model = { preset: $('#preset').value };
    } else {
        try {
            model = JSON.parse($('#config').value);
        } catch (e) {
            throw { where: 'model', detail: 'config.json is not JSON: ' + e.message };
        }
        if (!model || typeof model !== 'object' || Array.isArray(model)) throw { where: 'model', detail: 'config.json must be a JSON object' };
    }
    const r = {
        model,
        train: {
            batch: int('batch'),
            seq: int('seq'),
            microbatches: int('microbatches'),
            remat: $('#remat').value,
            optimizer: { name: $('#optimizer').value, state_dtype: $('#state_dtype').value },
            attention: $('#attention').value,
        },
    };
    if ($('#chip').value) r.chip = $('#chip').value;
    const mesh = {};
    for (const ax of MESH) if (int(ax) !== 1) mesh[ax] = int(ax);
    if (Object.keys(mesh).length) r.mesh = mesh;
    return r;
}

// The address of this configuration: every field that is not its default.
function link() {
    const q = new URLSearchParams();
    for (const [k, def] of Object.entries(PARAMS)) {
        if (k === 'preset' && $('#source').value !== 'preset') continue;
        const v = $('#' + k).value;
        if (v !== '' && v !== def) q.set(k, v);
    }
    if ($('#source').value === 'preset') q.set('preset', $('#preset').value);
    return location.pathname + (q.toString() ? '?' + q : '');
}

function syncLink() {
    const url = link();
    history.replaceState(null, '', url);
    $('#share').href = url;
}

function showSource() {
    const preset = $('#source').value === 'preset';
    $('#preset-field').classList.toggle('hidden', !preset);
    $('#config-field').classList.toggle('hidden', preset);
}

async function submit(ev) {
    ev.preventDefault();
    clearErrors();
    let body;
    try {
        body = JSON.stringify(recipe());
    } catch (e) {
        return showProblem(e);
    }
    const button = $('#submit');
    const text = $('#progress-text');
    button.disabled = true;
    $('#progress').classList.remove('hidden');
    text.textContent = 'Making the step and planning it…';
    try {
        await submitPlan(body, { 'Content-Type': 'application/json' }, text);
    } catch (err) {
        $('#progress').classList.add('hidden');
        showProblem(err.status ? err : { detail: 'Could not reach the server: ' + err.message });
    } finally {
        button.disabled = false;
    }
}

// One number field per mesh axis (recipe.html's #mesh-fields), named as the recipe names it.
function meshFields() {
    const labels = { sequence: 'sequence (context)', pipeline: 'pipeline stages' };
    for (const ax of MESH) {
        $('#mesh-fields').append(el('label', { class: 'field', for: ax }, labels[ax] || ax,
            el('input', { type: 'number', id: ax, name: ax, min: '1', step: '1', value: '1' }),
            el('span', { class: 'field-error', id: 'err-' + ax, 'data-field': ax })));
    }
}

// The selects from the catalog, then the fields from the address.
async function main() {
    meshFields();
    let cat;
    try {
        cat = (await apiGet(appUrl('/api/v1/recipes'))).body;
    } catch (err) {
        $('#err-general').textContent = 'Could not load the presets: ' + (err.detail || err.message);
        return;
    }
    const presets = new Map(cat.presets.map((p) => [p.name, p]));
    fill($('#preset'), [...presets.keys()], (n) => `${n} · ${presets.get(n).family} · ${fmtInt(presets.get(n).parameters)} parameters`);
    const policies = new Map(cat.remat_policies.map((p) => [p.name, p]));
    fill($('#remat'), [...policies.keys()]);
    fill($('#optimizer'), cat.choices['train.optimizer.name']);
    fill($('#attention'), cat.choices['train.attention']);
    await loadChips();
    $('#chip').prepend(el('option', { value: '', text: 'default chip' }));
    $('#chip').value = '';

    const q = new URLSearchParams(location.search);
    for (const [k, def] of Object.entries(PARAMS)) {
        const v = q.get(k) ?? def;
        if (v !== '' || k === 'chip') $('#' + k).value = v;
    }
    if (!presets.has($('#preset').value)) $('#preset').value = presets.has('llama-3.1-8b') ? 'llama-3.1-8b' : cat.presets[0].name;
    const hints = () => {
        const p = presets.get($('#preset').value);
        $('#preset-hint').textContent = p ? `${p.architecture}, ${p.layers} layers, hidden ${p.hidden_size}; config.json: ${p.url}` : '';
        $('#remat-hint').textContent = policies.get($('#remat').value)?.doc || '';
    };
    hints();
    showSource();

    const form = $('#recipe-form');
    form.addEventListener('input', () => {
        hints();
        syncLink();
    });
    form.addEventListener('change', () => {
        showSource();
        hints();
        syncLink();
    });
    form.addEventListener('submit', submit);
    // A config.json chosen, or dropped on the text box, is read into it.
    const readConfig = async (f) => {
        if (!f) return;
        $('#config').value = await f.text();
        $('#config-info').textContent = f.name;
    };
    $('#config-file').addEventListener('change', () => readConfig($('#config-file').files[0]));
    $('#config').addEventListener('dragover', (ev) => ev.preventDefault());
    $('#config').addEventListener('drop', (ev) => {
        ev.preventDefault();
        readConfig(ev.dataTransfer.files[0]);
    });
    syncLink();
    window.__tpuplan = { ready: true };
}

main();

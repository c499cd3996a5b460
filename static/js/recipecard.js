// recipecard.js - the plan page's "Recipe" panel, for a plan made from a model config
// (result.recipe, server/planner/RESULT.md#the-recipe-section): the model and its parameter
// count, the step as planned (defaults filled), the mesh, the bytes per category (logical and
// padded, per device) and, with a pipeline, every stage's peak with the planned (worst) one.

import { el, $, fmtBytes, fmtInt } from './util.js';

function fieldsLine(run) {
    if (!run) return '';
    const parts = [];
    for (const [k, v] of Object.entries(run)) {
        if (v !== null && typeof v === 'object') parts.push(`${k} ${Object.entries(v).map(([a, b]) => `${a} ${b}`).join(', ')}`);
        else parts.push(`${k} ${v}`);
    }
    return parts.join(' · ');
}

function table(head, rows) {
    return el('div', { class: 'table-wrap' }, el('table', null,
        el('thead', null, el('tr', null, ...head.map(([h, num]) => el('th', { class: num ? 'num' : null, text: h })))),
        el('tbody', null, ...rows.map((r) => el('tr', null, ...r.map((c, i) => el('td', { class: head[i][1] ? 'num' : null, text: c })))))));
}

export function renderRecipe(result) {
    const rc = result.recipe;
    const panel = $('#recipe-panel');
    if (!rc || !panel) return;
    panel.classList.remove('hidden');
    const m = rc.model || {};
    const published = m.published_parameters ? ` (published ${fmtInt(m.published_parameters)})` : '';
    const mesh = Object.entries(rc.mesh || {}).map(([a, n]) => `${a} ${n}`).join(' × ') || 'one device';
    $('#recipe-model').textContent = `${m.architecture} (${m.family})${m.preset ? ', preset ' + m.preset : ''}: ${fmtInt(m.parameters)} parameters${published}, ${m.layers} layers, hidden ${m.hidden_size}`;
    $('#recipe-run').textContent = (rc.train ? 'train: ' + fieldsLine(rc.train) : 'serve: ' + fieldsLine(rc.serve));
    $('#recipe-mesh').textContent = `mesh: ${mesh}${rc.devices > 1 ? ` (${fmtInt(rc.devices)} devices)` : ''}; every figure below is per device`;
    const rows = Object.entries(rc.bytes || {}).map(([cat, b]) => [cat, fmtInt(b.count), fmtBytes(b.logical_bytes), fmtBytes(b.padded_bytes)]);
    const box = $('#recipe-bytes');
    box.replaceChildren(table([['category'], ['tensors', true], ['logical', true], ['padded', true]], rows));
    if (rc.host_offloaded_bytes > 0) box.append(el('p', { class: 'note', text: `Offloaded to host memory by the remat policy (not in this plan): ${fmtBytes(rc.host_offloaded_bytes)}.` }));
    const pp = rc.pipeline;
    if (pp && Array.isArray(pp.stages)) {
        box.append(el('h3', { class: 'small', text: `Pipeline: ${pp.stages.length} stages, stage ${pp.planned_stage} planned (the worst)` }),
            table([['stage'], ['layers'], ['microbatches in flight', true], ['live peak', true]],
                pp.stages.map((s) => [String(s.stage) + (s.stage === pp.planned_stage ? ' (planned)' : ''), `${s.layers[0]}–${s.layers[1]}`, fmtInt(s.in_flight_microbatches), fmtBytes(s.live_peak_bytes)])));
    }
}

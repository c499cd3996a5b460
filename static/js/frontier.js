// frontier.js - the plan page's "The most that fits" panel, shown for a plan made from a
// recipe only: the largest batch, sequence, microbatches, context or concurrent sequences that
// fits, optionally once per value of a second field (remat policy, optimizer, chip, a mesh
// axis...). The form POSTs /api/v1/plans/{id}/frontiers; the search runs as a job, polled
// (pollPlan) at /api/v1/frontiers/{fid}; its result (server/planner/RESULT.md#the-frontier) is
// drawn as the answer in `tpuplan fit`'s words, its table and a chart (frontierchart.js). The
// search is in the page's address (?frontier=FID), so an answer is a link; the plan's earlier
// searches are listed from /api/v1/plans/{id}/frontiers.

import { el, $, apiGet, apiPost, appUrl, pollPlan, isKeyProblem, fmtBytesShort } from './util.js';
import { capacities, drawFrontier } from './frontierchart.js';
import { whatifLink } from './whatif.js';

// The fields a search can maximize, by the kind of step: [alias, recipe path, label]
// (frontier_field's aliases; a stored query names the path).
const MAXIMIZE = {
    train: [['batch', 'train.batch', 'global batch'], ['seq', 'train.seq', 'sequence length'], ['microbatches', 'train.microbatches', 'microbatches']],
    serve: [['context', 'serve.context', 'context'], ['sequences', 'serve.sequences', 'concurrent sequences']],
};

// The fields a search can sweep: [recipe path, label, values]. values: a list, or where the
// dashboard reads them: 'remat' (GET /api/v1/recipes' policies), 'choices' (its named choices
// of that path), 'chips' (GET /api/v1/chips); null: typed in (a mesh axis's sizes).
const MESH = ['data', 'fsdp', 'tensor', 'sequence', 'expert', 'pipeline'].map((a) => [`mesh.${a}`, `mesh axis ${a}`, null]);
const SWEEP = {
    train: [['train.remat', 'remat policy', 'remat'], ['train.optimizer.state_dtype', 'optimizer state dtype', ['f32', 'bf16', 'int8']],
        ['train.optimizer.name', 'optimizer', 'choices'], ['chip', 'chip', 'chips'], ...MESH],
    serve: [['serve.kv_dtype', 'KV cache dtype', ['bf16', 'int8']], ['serve.weights', 'weights', 'choices'], ['chip', 'chip', 'chips'], ...MESH],
};

const FIELDS = ['maximize', 'min', 'max', 'step', 'sweep', 'values'];

const frontierUrl = (fid) => appUrl('/api/v1/frontiers/' + encodeURIComponent(fid));
const listUrl = (id) => appUrl('/api/v1/plans/' + encodeURIComponent(id) + '/frontiers');

// The form field a refusal names (the problem's field or where): "min" or "query.min" ->
// min, the planner's "lo"/"hi" -> min/max, "sweep.values[1]" -> values.
function fieldOf(name) {
    const parts = String(name || '').replace(/^(query|body)\./, '').split(/[.[]/);
    const alias = { lo: 'min', hi: 'max' };
    const head = alias[parts[0]] || parts[0];
    if (head === 'sweep') return parts[1] === 'values' ? 'values' : 'sweep';
    return FIELDS.includes(head) ? head : null;
}

function clearErrors() {
    for (const f of FIELDS) {
        $('#fr-err-' + f).textContent = '';
        $('#fr-' + f)?.classList.remove('invalid');
    }
    $('#fr-error').textContent = '';
}

// A refusal (a 422 problem, a failed job's error) beside the input it names, else under the form.
function showProblem(p) {
    const f = fieldOf(p.field ?? p.problem?.field) || fieldOf(p.where);
    const text = (p.detail || String(p)) + (isKeyProblem(p) ? ' Enter the API key in the upload form (it is kept for this tab).' : '');
    if (f) {
        $('#fr-err-' + f).textContent = text;
        $('#fr-' + f)?.classList.add('invalid');
    } else {
        $('#fr-error').textContent = text + (p.where ? ` (at ${p.where})` : '');
    }
}

// The search the form describes: only maximize is required.
function query() {
    const q = { maximize: $('#fr-maximize').value };
    for (const k of ['min', 'max', 'step']) {
        const v = $('#fr-' + k).value.trim();
        if (v !== '') q[k] = Number(v);
    }
    const field = $('#fr-sweep').value;
    if (field) {
        const box = $('#fr-values');
        const text = box.querySelector('input[type="text"]');
        const values = text ? text.value.split(',').map((s) => s.trim()).filter(Boolean) : [...box.querySelectorAll('input:checked')].map((c) => c.value);
        q.sweep = { field, values }; // strings, as on tpuplan fit's command line
    }
    return q;
}

// The values of sweep field path: checkboxes when they are known, else a text box. The last
// call wins when the field changes again while the values are being read.
let valuesAsked = 0;
async function showValues(kind, path, catalog, checked = []) {
    const asked = ++valuesAsked;
    const from = path ? SWEEP[kind].find((s) => s[0] === path)[2] : [];
    let values = Array.isArray(from) ? from : [];
    if (from === 'remat') values = ((await catalog)?.remat_policies || []).map((p) => p.name);
    if (from === 'choices') values = (await catalog)?.choices?.[path] || [];
    if (from === 'chips') values = await chipNames();
    if (asked !== valuesAsked) return;
    if (values.length) values = [...values, ...checked.filter((v) => !values.includes(v))]; // an alias, a typo: as asked
    const box = $('#fr-values');
    const err = $('#fr-err-values');
    for (const n of [...box.children]) if (n.tagName !== 'LEGEND' && n !== err) n.remove();
    box.classList.toggle('hidden', !path);
    if (!path) return;
    if (!values.length) {
        box.insertBefore(el('input', { type: 'text', id: 'fr-values-text', class: 'mono', placeholder: 'e.g. 1,2,4,8', 'aria-label': `Values of ${path}, comma-separated`, value: checked.join(',') }), err);
        return;
    }
    for (const v of values)
        box.insertBefore(el('label', {}, el('input', { type: 'checkbox', value: v, checked: checked.includes(v) }), v), err);
}

let chips = null;
async function chipNames() {
    if (!chips) {
        try {
            const { body } = await apiGet(appUrl('/api/v1/chips'));
            chips = (Array.isArray(body) ? body : body.chips || body.items || []).map((c) => c.name);
        } catch {
            chips = [];
        }
    }
    return chips;
}

// One line's answer in `tpuplan fit`'s words (its table's columns, as a sentence).
function sentence(f, ln, name) {
    if (ln.error) return `${name}: ${ln.error}`;
    const most = ln.max_fit === null ? 'most fits none' : `most fits ${ln.max_fit}, peak ${fmtBytesShort(ln.max_fit_peak_bytes)}`;
    const next = ln.next === null ? `; every value up to ${f.hi} fits` : `; next ${ln.next}, peak ${fmtBytesShort(ln.next_peak_bytes)}, over by ${fmtBytesShort(ln.next_over_bytes)}`;
    return `${name}: ${most}${next}.`;
}

// Sets recipe path (train.batch, mesh.fsdp, chip) to value in patch, a what-if's overrides
// (a merge patch of the recipe under "recipe"); a whole number is sent as a number.
function setPath(patch, path, value) {
    const keys = path.split('.');
    let o = (patch.recipe ||= {});
    for (const k of keys.slice(0, -1)) o = o[k] ||= {};
    o[keys.at(-1)] = /^\d+$/.test(String(value)) ? Number(value) : value;
    return patch;
}

// A link that plans the recipe at a line's largest that fits (and its swept value) as a
// what-if of plan id, whose page then opens.
function planLink(id, f, ln) {
    const overrides = setPath(f.sweep ? setPath({}, f.sweep, ln.value) : {}, f.maximize, ln.max_fit);
    const a = whatifLink(id, overrides, 'plan it', 'fr-plan', $('#fr-error'));
    a.title = 'Plan the recipe with ' + JSON.stringify(overrides.recipe);
    return a;
}

// The table: `tpuplan fit`'s columns, one row per line, and a link that plans the largest
// that fits; a line the recipe refused says why.
// The lines' capacities differ (a chip sweep): each row says its own, as the CLI's does.
function table(id, f, names) {
    const own = capacities(f, names).length > 1;
    const head = [f.sweep || '', 'most fits', 'peak', 'next', 'peak', 'over by', ...(own ? ['capacity'] : []), ''];
    const n = head.length - 1;
    $('#fr-table thead').replaceChildren(el('tr', {}, ...head.map((h, i) => el('th', { class: i && i < n ? 'num' : null, text: h }))));
    const rows = f.lines.map((ln, k) => {
        if (ln.error) return el('tr', { 'data-value': names[k] }, el('td', { text: names[k] }), el('td', { class: 'fr-error', colspan: n, text: ln.error }));
        const cells = [names[k], ln.max_fit ?? 'none', ln.max_fit === null ? '-' : fmtBytesShort(ln.max_fit_peak_bytes),
            ln.next ?? '-', ln.next === null ? '-' : fmtBytesShort(ln.next_peak_bytes), ln.next === null ? '-' : fmtBytesShort(ln.next_over_bytes),
            ...(own ? [fmtBytesShort(ln.capacity_bytes)] : [])];
        return el('tr', { 'data-value': names[k] }, ...cells.map((c, i) => el('td', { class: i ? 'num' : null, text: c })),
            el('td', {}, ln.max_fit === null ? '' : planLink(id, f, ln)));
    });
    $('#fr-table tbody').replaceChildren(...rows);
}

// A finished search on the page.
function render(job) {
    const f = job.frontier;
    const names = f.lines.map((ln) => (f.sweep ? String(ln.value) : '(recipe)'));
    const what = f.sweep ? (k) => `${f.sweep} ${names[k]}` : () => f.maximize;
    // each line fits against its own chip's capacity: one figure, or one per chip in a chip sweep
    const caps = capacities(f, names);
    const limits = (caps.length > 1 ? 'capacity ' + caps.map((c) => `${c.of.join(', ')} ${fmtBytesShort(c.bytes)}`).join(', ') : `capacity ${fmtBytesShort(caps[0].bytes)}`) + (f.budget_bytes ? `, budget ${fmtBytesShort(f.budget_bytes)}` : '');
    $('#fr-answer').replaceChildren(
        ...f.lines.map((ln, k) => el('span', { class: 'fr-sentence', 'data-value': names[k], text: sentence(f, ln, what(k)) })),
        el('span', { class: 'fr-head', text: `maximize ${f.maximize}, multiples of ${f.step} from ${f.lo} to ${f.hi}; ${f.plans} plans; ${limits}` }));
    table(job.plan, f, names);
    drawFrontier($('#fr-chart'), $('#fr-legend'), f, names);
    $('#fr-result').classList.remove('hidden');
}

// The address of this page showing search fid (none: no search).
function setAddress(fid) {
    const u = new URL(location.href);
    if (fid) u.searchParams.set('frontier', fid);
    else u.searchParams.delete('frontier');
    history.replaceState(null, '', u);
}

// Follows search fid of plan id (first: the POST's answer, when there is one) until it ends,
// and shows it.
async function follow(id, fid, first) {
    const status = $('#fr-status');
    $('#fr-result').classList.add('hidden');
    status.textContent = 'Searching…';
    let job;
    try {
        job = (await pollPlan(frontierUrl(fid), { first, onWait: (s, secs) => (status.textContent = `Search ${s}… ${secs} s`) })).body;
    } catch (e) {
        status.textContent = '';
        $('#fr-error').textContent = e.status === 404 ? `There is no search ${fid} (it may have expired).` : e.detail || String(e);
        return null;
    }
    status.textContent = '';
    if (job.plan !== id) {
        // a link edited by hand: the search is of another plan, whose page shows it
        const u = new URL(appUrl('/p/' + encodeURIComponent(job.plan)), location.href);
        u.searchParams.set('frontier', fid);
        $('#fr-error').replaceChildren('This search is of another plan: ', el('a', { href: u.pathname + u.search, text: job.plan }), '.');
        return job;
    }
    if (job.status !== 'done' || !job.frontier) {
        const e = job.error || {};
        showProblem({ detail: 'The search failed: ' + (e.detail || 'no reason given.'), where: e.where, field: e.field });
        return job;
    }
    render(job);
    window.__tpuplan.frontier = job;
    return job;
}

// The form as query q asked (an earlier search opened from its link).
// The server stores a query normalised (the field's path, every bound): a bound that is the
// default, which the input's placeholder shows, is left out.
async function fillForm(kind, q, cat) {
    if (!q) return;
    const m = MAXIMIZE[kind].find((f) => f[0] === q.maximize || f[1] === q.maximize);
    if (m) $('#fr-maximize').value = m[0];
    for (const k of ['min', 'max', 'step']) {
        $('#fr-' + k).value = bound(k, q[k]) ?? '';
        delete $('#fr-' + k).dataset.auto; // the search's own bounds
    }
    const field = q.sweep?.field || '';
    if (field && !SWEEP[kind].some((s) => s[0] === field)) return;
    $('#fr-sweep').value = field;
    await showValues(kind, field, cat, (q.sweep?.values || []).map(String));
}

// The bounds a field needs that the API's defaults (from 1, multiples of 1) do not give: a
// serving context holds at least one prefill chunk; a training batch splits evenly into its
// microbatches and pipeline microbatches, so it is a multiple of both. Without them the search
// fails at its first value.
function fieldBounds(rc, field) {
    if (field === 'context' && rc.serve?.prefill_chunk > 1) return { min: rc.serve.prefill_chunk };
    const unit = (rc.train?.microbatches || 1) * (rc.parallelism?.pipeline?.microbatches || 1);
    if (field === 'batch' && unit > 1) return { min: unit, step: unit };
    return {};
}

// Fills the chosen field's bounds into the empty inputs, marked as filled in (data-auto), and
// clears what was filled in for the field chosen before; what the user typed is kept.
function applyBounds(rc) {
    const b = fieldBounds(rc, $('#fr-maximize').value);
    for (const k of ['min', 'step']) {
        const input = $('#fr-' + k);
        if (input.dataset.auto) input.value = '';
        delete input.dataset.auto;
        if (b[k] && input.value === '') {
            input.value = b[k];
            input.dataset.auto = '1';
        }
    }
}

// A query's bound k (min, max, step), or null when it is missing or the default.
function bound(k, v) {
    return v === undefined || v === null || String(v) === $('#fr-' + k).placeholder ? null : v;
}

// The plan's searches, newest first; current: the one shown.
async function listSearches(id, current, open) {
    let list;
    try {
        list = (await apiGet(listUrl(id))).body.frontiers || [];
    } catch {
        return; // the list is a convenience: the panel works without it
    }
    $('#fr-earlier').classList.toggle('hidden', !list.length);
    $('#fr-history').replaceChildren(...list.map((s) => {
        const q = s.query || {};
        const u = new URL(location.href);
        u.searchParams.set('frontier', s.id);
        const range = [bound('min', q.min) && `from ${q.min}`, bound('max', q.max) && `to ${q.max}`, bound('step', q.step) && `multiples of ${q.step}`].filter(Boolean).join(' ');
        const sweep = q.sweep ? `, sweep ${q.sweep.field} = ${(q.sweep.values || []).join(', ')}` : '';
        const a = el('a', { href: u.pathname + u.search, 'data-id': s.id, 'aria-current': s.id === current ? 'true' : null, text: `${q.maximize}${range ? ' ' + range : ''}${sweep}` });
        a.addEventListener('click', (ev) => {
            ev.preventDefault();
            open(s.id, q);
        });
        return el('li', {}, a, ` · ${s.status} · ${String(s.created || '').replace('T', ' ').slice(0, 19)}`);
    }));
}

export async function wireFrontier(plan, id) {
    const rc = plan.result?.recipe;
    if (!rc || !(rc.train || rc.serve)) return; // a JSON or HLO plan has no recipe fields to search
    const kind = rc.train ? 'train' : 'serve';
    $('#frontier-panel').classList.remove('hidden');
    // The catalog (remat policies, named choices) is needed only for a sweep's values.
    const cat = apiGet(appUrl('/api/v1/recipes')).then((r) => r.body, () => null); // null: values typed in
    $('#fr-maximize').replaceChildren(...MAXIMIZE[kind].map(([v, path, label]) => el('option', { value: v, text: `${label} (${path})` })));
    $('#fr-sweep').replaceChildren(el('option', { value: '', text: 'nothing' }), ...SWEEP[kind].map(([v, label]) => el('option', { value: v, text: `${label} (${v})` })));
    $('#fr-sweep').addEventListener('change', () => showValues(kind, $('#fr-sweep').value, cat));
    $('#fr-maximize').addEventListener('change', () => applyBounds(rc));
    for (const k of ['min', 'step']) $('#fr-' + k).addEventListener('input', (ev) => delete ev.target.dataset.auto);
    applyBounds(rc);
    // Shows search fid: q, its query when known (the form is set to it first), else the form
    // follows the search's own; first, the POST's answer for a search just made (the form
    // already says what it asked).
    let shown = null;
    const open = async (fid, q, first) => {
        shown = fid;
        clearErrors();
        setAddress(fid);
        if (q) await fillForm(kind, q, cat);
        const job = await follow(id, fid, first);
        if (job && job.plan !== id) return;
        if (job && !q && !first) await fillForm(kind, job.query, cat);
        if (shown === fid) await listSearches(id, fid, open);
    };
    $('#fr-form').addEventListener('submit', async (ev) => {
        ev.preventDefault();
        clearErrors();
        $('#fr-run').disabled = true;
        try {
            const got = await apiPost(listUrl(id), JSON.stringify(query()), { 'Content-Type': 'application/json' });
            await open(got.body.id, null, got);
        } catch (e) {
            showProblem(e);
        } finally {
            $('#fr-run').disabled = false;
        }
    });
    const fid = new URLSearchParams(location.search).get('frontier');
    if (fid) await open(fid);
    else await listSearches(id, null, open);
}

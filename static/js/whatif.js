// whatif.js - the plan page's what-if form: overrides (chip, activations dtype, remat
// pattern, and any others as JSON; for a recipe's plan the global batch, sent as a merge patch
// of the recipe) POSTed to /api/v1/plans/{id}/whatif; the new plan's page opens when it is
// planned, and it links back here (plan.js shows the parent).

import { el, $, apiPost, appUrl, isKeyProblem } from './util.js';

// The overrides the form describes; throws with a message naming the field when bad.
function overrides() {
    let o = {};
    const extra = $('#wi-json').value.trim();
    if (extra) {
        try {
            o = JSON.parse(extra);
        } catch (err) {
            throw new Error('More overrides: not JSON (' + err.message + ')');
        }
        if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error('More overrides: must be a JSON object');
    }
    const chip = $('#wi-chip').value.trim();
    if (chip) o.chip = chip;
    const act = $('#wi-act').value;
    if (act) o.dtype = { ...(o.dtype || {}), activation: act };
    const remat = $('#wi-remat').value.trim();
    if (remat) o.remat = remat;
    const batch = $('#wi-batch').value.trim();
    if (batch) o.recipe = { ...(o.recipe || {}), train: { ...(o.recipe?.train || {}), batch: Number(batch) } };
    return o;
}

// POSTs overrides as a what-if of plan id and opens the new plan's page; rejects with the
// problem (its detail and where) when it is refused.
export async function planWhatif(id, overrides) {
    const { body: child } = await apiPost(appUrl('/api/v1/plans/' + encodeURIComponent(id) + '/whatif'), JSON.stringify(overrides), { 'Content-Type': 'application/json', Prefer: 'wait=30' });
    location.assign(appUrl('/p/' + encodeURIComponent(child.id)));
}

// A link (class cls, text text) that plans overrides as a what-if of plan id and opens it; a
// refusal is shown in element error.
export function whatifLink(id, overrides, text, cls, error) {
    const a = el('a', { href: '#', class: cls, text });
    a.dataset.overrides = JSON.stringify(overrides);
    a.addEventListener('click', async (ev) => {
        ev.preventDefault();
        error.textContent = '';
        a.setAttribute('aria-busy', 'true');
        try {
            await planWhatif(id, overrides);
        } catch (e) {
            error.textContent = whatifError(e);
            a.removeAttribute('aria-busy');
        }
    });
    return a;
}

// A refused what-if in words.
export function whatifError(e) {
    return (e.detail || String(e)) + (e.where ? ` (at ${e.where})` : '') +
        (isKeyProblem(e) ? ' Enter the API key in the upload form (it is kept for this tab).' : '');
}

export function wireWhatif(plan, id) {
    const form = $('#whatif-form');
    if (!form) return;
    const format = plan.result?.model?.source_format || plan.source_format;
    if (format !== 'json' && format !== 'recipe') {
        $('#whatif-panel').classList.add('hidden'); // a what-if changes a JSON model description or a recipe
        return;
    }
    // A recipe's tensors follow from its fields: its what-if changes them, not tensor patterns.
    const isRecipe = format === 'recipe';
    for (const n of form.querySelectorAll('.model-only')) n.classList.toggle('hidden', isRecipe);
    for (const n of form.querySelectorAll('.recipe-only')) n.classList.toggle('hidden', !(isRecipe && plan.result?.recipe?.train));
    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const err = $('#wi-error');
        err.textContent = '';
        let o;
        try {
            o = overrides();
        } catch (e) {
            err.textContent = e.message;
            return;
        }
        $('#wi-run').disabled = true;
        try {
            await planWhatif(id, o);
        } catch (e) {
            err.textContent = whatifError(e);
            $('#wi-run').disabled = false;
        }
    });
}

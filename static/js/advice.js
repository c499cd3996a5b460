// advice.js - the plan page's "What to change" panel, from the result's advice
// (server/planner/RESULT.md#advice): each change planned for real, ranked, with the peak it
// gives and its cost, and a link that plans it as a what-if (whatif.js); then the smallest set
// that fits, "apply these N", linked the same way. Shown only when the plan does not fit, is
// over its budget or within 10 % of either.

import { el, $, fmtBytes, fmtInt } from './util.js';
import { whatifLink } from './whatif.js';

// An offload's cost, in the CLI's words (server/cli/cli_advice.c host_text).
function hostText(c) {
    if (!Number.isFinite(c.host_bytes_per_step)) return `host memory traffic (${c.note || 'copied out and back a step'})`;
    if (Number.isFinite(c.host_seconds_per_step)) return `copy ${fmtBytes(c.host_bytes_per_step)} to and from host memory a step (${(c.host_seconds_per_step * 1e3).toFixed(3)} ms at ${(c.host_link_bytes_per_s / 1e9).toFixed(0)} GB/s: ${c.host_link_source})`;
    return `copy ${fmtBytes(c.host_bytes_per_step)} to and from host memory a step (${c.note || 'copied out and back a step'})`;
}

// The recompute FLOPs a change adds, after its cost (cli_advice.c flops_text): '' when not
// known or none.
function flopsText(c) {
    if (!Number.isFinite(c.recompute_flops) || c.recompute_flops <= 0) return '';
    const share = Number.isFinite(c.recompute_flops_fraction) ? ` (${(c.recompute_flops_fraction * 100).toFixed(1)} % of the step's)` : '';
    return `; ${(c.recompute_flops / 1e12).toFixed(2)} TFLOPs recomputed a step${share}`;
}

function costText(c) {
    if (!c) return '';
    return costWords(c) + flopsText(c);
}

function costWords(c) {
    if (c.kind === 'recompute') return Number.isFinite(c.recompute_bytes) ? `recompute ${fmtBytes(c.recompute_bytes)} of activations in the backward` : 'recompute in the backward';
    if (c.kind === 'host') return hostText(c);
    if (c.kind === 'reshape') return 'the program stores the tensor reshaped';
    if (c.kind === 'steps') return 'more passes a step, fewer examples each';
    if (c.kind === 'communication') return `all-gather and reduce-scatter ${fmtBytes(c.comm_bytes_per_step)} a step per device`;
    if (c.kind === 'precision') return 'lower precision (numerics)';
    if (c.kind === 'chips') return 'another chip, or more of them';
    return 'none';
}

function verdictText(fits, within) {
    return fits ? (within === false ? 'fits, over budget' : 'fits') : 'does not fit';
}

// A link that plans overrides as a what-if of plan id and opens it.
function planLink(id, overrides, text) {
    return whatifLink(id, overrides, text, 'advice-plan', $('#advice-error'));
}

export function renderAdvice(r, id) {
    const a = r.advice;
    if (!a) return;
    $('#advice-panel').classList.remove('hidden');
    const items = Array.isArray(a.items) ? a.items : [];
    $('#advice-note').textContent = a.unavailable
        ? `The plan ${a.reason}. No change planned: ${a.unavailable}.`
        : `The plan ${a.reason} (peak ${fmtBytes(a.peak)}). Each change below was planned for real (${fmtInt(a.replans)} plans, strategies ${a.strategies}); the link plans it as a what-if.`;
    const list = $('#advice-list');
    for (const it of items) {
        const saved = it.saves_bytes >= 0 ? `saves ${fmtBytes(it.saves_bytes)}` : `adds ${fmtBytes(-it.saves_bytes)}`;
        list.append(el('li', { class: 'advice-item ' + (it.fits_after && it.within_budget_after !== false ? 'good' : 'bad') },
            el('span', { class: 'advice-change', text: it.change }), ' ',
            el('span', { class: 'advice-figures', text: `${saved} → peak ${fmtBytes(it.peak_after)}, ${verdictText(it.fits_after, it.within_budget_after)}; cost: ${costText(it.cost)}` }), ' ',
            planLink(id, it.overrides, 'plan it')));
    }
    const c = a.combination;
    if (c) {
        const n = c.items.length;
        $('#advice-combo').append(
            `Apply ${n === 1 ? 'change' : 'these ' + n}: ${c.items.map((i) => i + 1).join(', ')} → peak ${fmtBytes(c.peak_after)}, ${c.fits_after ? 'fits' : 'still does not fit'}. `,
            planLink(id, c.overrides, n === 1 ? 'plan it' : `plan these ${n}`));
    }
}

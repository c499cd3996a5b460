// theme.js - colours for canvas charts, read from the CSS custom properties of the current
// colour scheme (css/app.css), and a hook to redraw when the system theme changes.

export const KINDS = ['param', 'grad', 'optimizer', 'activation', 'temp', 'input', 'output', 'kv_cache', 'other'];

const KIND_INDEX = new Map(KINDS.map((k, i) => [k, i]));

export function kindIndex(kind) {
    const i = KIND_INDEX.get(kind);
    return i === undefined ? KINDS.length - 1 : i;
}

export function themeColors() {
    const cs = getComputedStyle(document.documentElement);
    const v = (name) => cs.getPropertyValue(name).trim();
    return {
        bg: v('--panel'),
        fg: v('--fg'),
        muted: v('--muted'),
        grid: v('--grid'),
        border: v('--border'),
        accent: v('--accent'),
        highlight: v('--highlight'),
        peak: v('--peak'),
        capacity: v('--capacity'),
        budget: v('--budget'),
        live: v('--live'),
        liveFill: v('--live-fill'),
        heap: v('--heap'),
        gap: v('--gap'),
        runtime: v('--runtime'),
        kinds: KINDS.map((k) => v('--k-' + k)),
    };
}

export function onThemeChange(fn) {
    const mq = window.matchMedia('(prefers-color-scheme: dark)');
    mq.addEventListener('change', fn);
}

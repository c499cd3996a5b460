// dashboard.test.mjs BASE TMPDIR CHROMIUM [PREFIXED [KEYED KEY]] - the dashboard end to end in real Chromium against
// a running bin/tpuplan-server (tests/browser/run.sh starts it). Prints TAP; exits 1 when a
// test fails. Tests run in order and share one browser; later ones use the plan the upload
// test created, so a failure early may cascade (the first "not ok" is the one to read).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadavg, cpus } from 'node:os';
import { chromium } from 'playwright-core';
import { makeResult, summaryView, layoutView, writeSafetensors } from './fixtures.mjs';

// PREFIXED: a second server on the same database with --base-path /tpuplan (its URL ends
// in /tpuplan), for the test that the dashboard works behind a reverse proxy's path.
// KEYED, KEY: a third with --require-key, and an API key it accepts.
const [base, tmp, executablePath, prefixed, keyed, apiKey] = process.argv.slice(2);
const here = new URL('.', import.meta.url).pathname;
const artifacts = join(here, '../artifacts');
const fixture = (name) => join(here, 'fixtures', name);
const model = JSON.parse(readFileSync(fixture('model.json'), 'utf8'));
const XSS = '<img src=x onerror=alert(1)>';

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
function assert(cond, msg) {
    if (!cond) throw new Error(msg);
}

const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const state = { dialogs: 0, confirms: 0, problems: [] };

// A page that records dialogs (alert() from injected markup), page errors and console
// errors (CSP violations among them). The chip list endpoint is optional: its 404 is expected.
async function newPage(options = {}) {
    const ctx = await browser.newContext({ viewport: { width: 1300, height: 900 }, acceptDownloads: true, ...options });
    const page = await ctx.newPage();
    page.on('dialog', (d) => {
        // Our own "Delete this plan?" confirm is expected once; anything else (an alert from
        // injected markup) is counted.
        if (d.type() === 'confirm' && state.confirms > 0) {
            state.confirms--;
            d.accept().catch(() => {});
            return;
        }
        state.dialogs++;
        d.dismiss().catch(() => {});
    });
    page.on('pageerror', (e) => state.problems.push('pageerror: ' + e.message));
    page.on('console', (m) => {
        if (m.type() !== 'error') return;
        // Chromium logs every 4xx answer (the error-path tests ask for some); 5xx still count.
        if (/Failed to load resource: .*status of 4\d\d/.test(m.text())) return;
        state.problems.push('console: ' + m.text() + ' @ ' + (m.location().url || ''));
    });
    return page;
}

async function waitPlanPage(page) {
    await page.waitForURL(/\/p\/[A-Za-z0-9_-]+$/, { timeout: 30000 });
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
}

// Puts path in the upload form's file picker and waits until the form says what it read
// (kind, a RegExp over #file-info).
async function pickFile(page, path, kind) {
    await page.setInputFiles('#file', path);
    await page.waitForFunction((re) => new RegExp(re).test(document.querySelector('#file-info').textContent), kind.source);
}

// From the upload page: path picked (kind as pickFile), submitted, its plan page shown.
async function uploadPlan(page, path, kind) {
    await page.goto(base + '/');
    await pickFile(page, path, kind);
    await page.click('#submit');
    await waitPlanPage(page);
}

// The page draws from two small views and never downloads the whole result; the tests
// compare what it shows against the whole result, fetched here (as "Download JSON" does).
async function fullResult(page) {
    return page.evaluate(async () => {
        const res = await fetch(location.pathname.replace(/^\/p\//, '/api/v1/plans/'));
        return (await res.json()).result;
    });
}

// The plan API requests a page made while loading: [url...].
async function planRequests(page) {
    return page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((u) => u.includes('/api/v1/plans/')));
}

// Pixels of a canvas that differ from its background colour (the top-left pixel's colour).
async function inkedPixels(page, sel) {
    return page.$eval(sel, (cv) => {
        const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - d[0]) + Math.abs(d[i + 1] - d[1]) + Math.abs(d[i + 2] - d[2]) > 30) n++;
        return n;
    });
}

// ---------------------------------------------------------------------------------------
test('upload page renders with chip picker, strategies and recent plans', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    await page.waitForSelector('#chip option:nth-child(2)', { state: 'attached' });
    const chips = await page.$$eval('#chip option', (o) => o.map((x) => x.value));
    assert(chips.includes('v5e') && chips.includes('v4'), 'chip options: ' + chips.join(','));
    const strategies = await page.$$eval('#strategies option', (o) => o.map((x) => x.value));
    assert(strategies.includes('best') && strategies.includes('all'), 'strategy options: ' + strategies);
    await page.waitForFunction(() => document.querySelector('#recent-note').textContent !== '' || document.querySelector('#recent tbody tr'));
    const note = await page.textContent('#recent-note');
    assert(!/Could not/.test(note), 'recent plans failed: ' + note);
    // Drag and drop: a real DataTransfer carrying a File, dropped on the drop zone.
    await page.evaluate(() => {
        const dt = new DataTransfer();
        dt.items.add(new File(['id,lower,upper,size\n0,0,1,64\n'], 'dropped.csv', { type: 'text/csv' }));
        const drop = document.querySelector('#drop');
        drop.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
        drop.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await page.waitForFunction(() => /dropped\.csv: MiniMalloc CSV/.test(document.querySelector('#file-info').textContent));
    await page.screenshot({ path: join(artifacts, 'upload-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(artifacts, 'upload-dark.png') });
    await page.context().close();
});

test('the chip picker shows each chip\'s usable HBM from a chip list (bin/tpuplan chips --json)', async () => {
    // The server has no chip endpoint yet; this pins the format the page expects from one.
    const chips = execFileSync(join(here, '../../bin/tpuplan'), ['chips', '--json']);
    const page = await newPage();
    await page.route('**/api/v1/chips', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: chips }));
    await page.goto(base + '/');
    await page.waitForFunction(() => /usable HBM/.test(document.querySelector('#chip').textContent));
    const v5e = await page.$eval('#chip option[value=v5e]', (o) => o.textContent);
    assert(/usable HBM 15\.75 GiB/.test(v5e), 'v5e option: ' + v5e);
    await page.selectOption('#chip', 'v5e');
    assert(/v5e|runtime/.test(await page.textContent('#chip-hint')), 'no chip note');
    await page.context().close();
});

test('a model description uploaded through the file picker opens its plan page', async () => {
    const page = await newPage();
    state.page = page;
    await page.goto(base + '/');
    await pickFile(page, fixture('model.json'), /model description/);
    await page.selectOption('#strategies', 'all');
    await page.click('#submit');
    await waitPlanPage(page);
    state.planUrl = page.url();
    state.planRequests = await planRequests(page); // before fullResult() adds its own
    const name = await page.textContent('#plan-name');
    assert(name === model.name, `plan name ${JSON.stringify(name)}`);
    const r = await fullResult(page);
    assert(r.tensors.length === model.tensors.length, `tensors ${r.tensors.length}`);
    const cols = await page.evaluate(() => window.__tpuplan.cols);
    assert(cols.name.length === model.tensors.length && cols.name.every((x, i) => x === r.tensors[i].name), 'layout view names differ from the result');
    assert(cols.offset.every((x, i) => x === r.tensors[i].offset) && cols.start.every((x, i) => x === r.tensors[i].live[0]), 'layout view offsets or lifetimes differ');
    state.result = r;
});

test("Recent plans lists this browser's own plans, not another browser's, which still opens the share link", async () => {
    const id = new URL(state.planUrl).pathname.split('/').pop();
    const mine = (page) => page.$$eval('#recent a[href]', (as) => as.map((a) => a.getAttribute('href').split('/').pop()));
    const listed = (page) => page.waitForFunction(() => document.querySelector('#recent-note').textContent !== '' || document.querySelector('#recent tbody tr'));
    // The uploading browser (same context: same localStorage) lists its plan.
    const again = await state.page.context().newPage();
    await again.goto(base + '/');
    await listed(again);
    assert((await mine(again)).includes(id), 'the uploading browser does not list its plan');
    assert((await again.textContent('#recent-title')) === 'Your recent plans', 'title: ' + (await again.textContent('#recent-title')));
    await again.close();
    // Another browser lists none of it, then uploads: its request carries its own token, and
    // its list holds its plan alone.
    const other = await newPage();
    const sent = [];
    other.on('request', (req) => req.method() === 'POST' && sent.push(req.headers()['tpuplan-client']));
    await other.goto(base + '/');
    await listed(other);
    assert(!(await mine(other)).includes(id), "another browser lists the first one's plan");
    assert(/No plans from this browser yet/.test(await other.textContent('#recent-note')), 'note: ' + (await other.textContent('#recent-note')));
    await other.setInputFiles('#file', { name: 'own.csv', mimeType: 'text/csv', buffer: Buffer.from('id,lower,upper,size\n0,0,1,64\n') });
    await other.waitForFunction(() => /MiniMalloc CSV/.test(document.querySelector('#file-info').textContent));
    await other.click('#submit');
    await waitPlanPage(other);
    const own = new URL(other.url()).pathname.split('/').pop();
    const token = await other.evaluate(() => localStorage.getItem('tpuplan.client'));
    assert(/^[A-Za-z0-9_-]{43}$/.test(token || '') && sent.length === 1 && sent[0] === token, `upload's TPUplan-Client ${sent} vs stored ${token}`);
    await other.goto(base + '/');
    await listed(other);
    const hrefs = await mine(other);
    assert(hrefs.includes(own) && !hrefs.includes(id), 'the second browser lists: ' + hrefs.join(' '));
    // The first browser's share link opens here all the same.
    await other.goto(state.planUrl);
    await waitPlanPage(other);
    assert((await other.textContent('#plan-name')) === model.name, 'the share link did not open');
    await other.context().close();
});

test('a time limit out of range is refused next to its field, in the words of tpuplan plan', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    await pickFile(page, fixture('model.json'), /model description/);
    await page.fill('#time_limit', '4000');
    await page.click('#submit');
    await page.waitForFunction(() => document.querySelector('#err-time_limit').textContent !== '');
    const t = await page.textContent('#err-time_limit');
    assert(t === 'time_limit: must be above 0 and at most 3600 s, got "4000"', 'time limit: ' + t);
    assert(await page.$eval('#time_limit', (e) => e.classList.contains('invalid')), 'time limit field not marked');
    assert(/^\/$/.test(new URL(page.url()).pathname), 'left the upload page');
    await page.context().close();
});

test('the plan page loads only the summary and layout views, never the whole result', async () => {
    const urls = state.planRequests;
    const views = urls.map((u) => new URL(u).searchParams.get('view')).sort();
    assert(views.length >= 2 && views.includes('summary') && views.includes('layout'), 'requests: ' + urls.join(' '));
    assert(views.every((v) => v === 'summary' || v === 'layout'), 'the whole result was fetched: ' + urls.join(' '));
    const r = await state.page.evaluate(() => window.__tpuplan.result);
    assert(r.schema_version === 1 && !('tensors' in r) && r.summary.tensors === model.tensors.length, 'summary view: ' + Object.keys(r));
});

test('summary cards show chip, usable HBM, peak vs lower bound, padding and fits', async () => {
    const text = await state.page.textContent('#cards');
    for (const want of ['Chip', 'v5e', 'usable HBM', 'Peak vs lower bound', 'lower bound', 'Fragmentation', 'Padding overhead', 'Fits', 'Assumptions'])
        assert(text.includes(want), `cards lack ${want}: ${text}`);
    // The verdict the fixture implies. Padded to (8,128) tiles of the two minor dims, the
    // buffers live at step 18 are those live throughout (embed 65,536,000 B; per layer
    // wqkv 6,144,000, w_in 5,632,000 and adam_m 12,288,000), the four wqkv grads (from steps
    // 18, 16, 14 and 12: 12,288,000 each), layers.0.h and layers.1.h (8,257,536 each; layers.2.h
    // ends at 18) and logits (from step 10: 258,048,000): 485,507,072 B (463.0 MiB), the most
    // ever live at once, so the peak of an optimal packing. v5e's usable HBM is 16,911,433,728 B
    // (15.75 GiB, bin/tpuplan chips): it fits, with 16,425,926,656 B (15.30 GiB) to spare.
    const s = state.result.summary;
    assert(s.peak_bytes === 485507072 && s.capacity_bytes === 16911433728 && s.fits === true && s.headroom_bytes === 16425926656,
        'the plan differs from the fixture\'s arithmetic: ' + JSON.stringify([s.peak_bytes, s.capacity_bytes, s.fits, s.headroom_bytes]));
    const fits = await state.page.$$eval('#cards .card', (cards) => cards.map((c) => ({ cls: c.className, text: [...c.children].map((x) => x.textContent) })).find((c) => c.text[0] === 'Fits'));
    // In the planner's words (summary.verdict), as tpuplan plan --format text prints them.
    assert(fits && JSON.stringify(fits.text) === JSON.stringify(['Fits', 'fits', 'HBM peak 463.02M within the 15.75G capacity, 15.30G headroom']), 'fits card: ' + JSON.stringify(fits));
    assert(fits.cls === 'card good', 'fits card class: ' + fits.cls);
    assert(s.verdict.checks[0].text === fits.text[2], 'the card and summary.verdict differ: ' + JSON.stringify(s.verdict));
    const notes = await state.page.textContent('#assumptions');
    for (const a of state.result.chip.assumptions) assert(notes.includes(a), 'chip assumption not listed: ' + a);
    for (const t of state.result.tensors.filter((x) => x.confidence === 'assumed'))
        assert(notes.includes(t.layout_source + ':'), 'assumed layout rule not listed: ' + t.layout_source);
});

test('the peak breakdown beside the live table: its step, and bars that add up to the live bytes', async () => {
    const page = state.page;
    const pk = state.result.peak;
    // The fixture (no ops) peaks at step 18 with 485,507,072 B live in 20 tensors (the cards'
    // test has the arithmetic): output (logits) 258,048,000 B first.
    assert(pk.step === 18 && pk.live_bytes === 485507072 && pk.tensors === 20 && pk.op === null, 'peak: ' + JSON.stringify([pk.step, pk.live_bytes, pk.tensors, pk.op]));
    const head = await page.textContent('#peak-op');
    assert(head === 'Peak 463.0 MiB at step 18: 463.0 MiB live in 20 tensors', 'headline: ' + head);
    const parts = await page.$$eval('#peak-breakdown .pk-part', (ps) => ps.map((p) => {
        const track = p.querySelector('.pk-track').getBoundingClientRect();
        return {
            key: p.dataset.part,
            segs: [...p.querySelectorAll('.pk-seg')].map((s) => ({ name: s.dataset.name, bytes: Number(s.dataset.bytes), w: s.getBoundingClientRect().width })),
            track: track.width,
        };
    }));
    assert(JSON.stringify(parts.map((p) => p.key)) === JSON.stringify(['by_kind', 'by_tag', 'by_layer']), 'partitions: ' + parts.map((p) => p.key));
    const kinds = parts[0];
    assert(JSON.stringify(kinds.segs.map((x) => x.name)) === JSON.stringify(pk.by_kind.map((g) => g.name)) && kinds.segs[0].name === 'output' && kinds.segs[0].bytes === 258048000,
        'by kind: ' + JSON.stringify(kinds.segs));
    for (const p of parts) {
        const sum = p.segs.reduce((a, x) => a + x.bytes, 0);
        assert(sum === pk.live_bytes, `${p.key}: segments sum to ${sum}, not the live bytes`);
        for (const x of p.segs)
            assert(Math.abs(x.w - (x.bytes / pk.live_bytes) * p.track) < 1.5, `${p.key} ${x.name}: ${x.w}px of ${p.track}px for ${x.bytes} B`);
    }
    assert(parts[1].segs.at(-1).name === '(untagged)' && parts[2].segs[0].name === 'layers.0', 'tag and layer groups: ' + JSON.stringify(parts.slice(1)));
    // Beside the table, not under it, at the test's 1300 px.
    const t = await page.locator('.peak-wrap > .table-wrap').boundingBox(), b = await page.locator('#peak-breakdown').boundingBox();
    assert(b.x >= t.x + t.width - 1 && Math.abs(b.y - t.y) < 40, 'breakdown not beside the table: ' + JSON.stringify([t, b]));
});

test('layout and timeline charts drew, with a legend and the peak marker', async () => {
    const page = state.page;
    const layoutInk = await inkedPixels(page, '#layout-canvas');
    const tlInk = await inkedPixels(page, '#timeline-canvas');
    assert(layoutInk > 20000, `layout canvas has only ${layoutInk} non-background pixels`);
    assert(tlInk > 5000, `timeline canvas has only ${tlInk} non-background pixels`);
    const legend = await page.$$eval('#legend li', (li) => li.map((x) => x.textContent));
    for (const k of ['param', 'grad', 'optimizer', 'activation', 'temp', 'input', 'output']) assert(legend.includes(k), 'legend lacks ' + k + ': ' + legend);
    // The peak line is drawn in --peak at x = px(peak step + 0.5): look for that colour there.
    const found = await page.evaluate(() => {
        const L = window.__tpuplan.layout;
        const cv = L.canvas, dpr = cv.width / cv.clientWidth;
        const x = Math.round(L.px(L.opts.peakStep + 0.5) * dpr);
        const probe = document.createElement('canvas').getContext('2d');
        probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue('--peak').trim();
        probe.fillRect(0, 0, 1, 1);
        const want = probe.getImageData(0, 0, 1, 1).data;
        const col = cv.getContext('2d').getImageData(x - 2, 0, 5, cv.height).data;
        let hits = 0;
        for (let i = 0; i < col.length; i += 4) if (Math.abs(col[i] - want[0]) + Math.abs(col[i + 1] - want[1]) + Math.abs(col[i + 2] - want[2]) < 40) hits++;
        return { hits, step: L.opts.peakStep };
    });
    assert(Number.isFinite(found.step), 'no peak step');
    assert(found.hits > 40, `peak marker colour found on ${found.hits} pixels only`);
});

// Pixels of a canvas within 40 of the colour of CSS variable name.
async function colourPixels(page, sel, name) {
    return page.$eval(sel, (cv, v) => {
        const probe = document.createElement('canvas').getContext('2d');
        probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue(v).trim();
        probe.fillRect(0, 0, 1, 1);
        const want = probe.getImageData(0, 0, 1, 1).data;
        const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - want[0]) + Math.abs(d[i + 1] - want[1]) + Math.abs(d[i + 2] - want[2]) < 40) n++;
        return n;
    }, name);
}

test('the GPU runtime replay (BFC) is off by default on a TPU plan: no row, no curve, no note', async () => {
    const page = state.page;
    assert(state.result.packing.runtime === null, 'the default plan replayed the BFC allocator');
    assert((await page.$$('#strategies .bar-row[data-strategy="bfc-runtime"]')).length === 0, 'a bfc-runtime row');
    assert(!(await page.isVisible('#legend-runtime')) && !(await page.isVisible('#legend-runtime-row')) && !(await page.isVisible('#runtime-note')), 'runtime legend or note shown');
    assert((await page.evaluate(() => window.__tpuplan.timeline.rt)) === null, 'the timeline has a runtime series');
});

test('the runtime allocator (BFC), asked for with runtime=bfc, has a labelled row, never chosen, and a curve on the live-bytes chart', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    const id = await page.evaluate(async (body) => {
        const res = await fetch('/api/v1/plans?runtime=bfc', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' }, body });
        return (await res.json()).id;
    }, JSON.stringify(model));
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const rt = await page.evaluate(() => window.__tpuplan.result.packing.runtime);
    assert(rt && rt.name === 'bfc-runtime', 'the result has no runtime replay');
    const row = await page.$eval('#strategies .bar-row[data-strategy="bfc-runtime"]', (r) => ({ label: r.querySelector('.bar-label').textContent, text: r.querySelector('.bar-text').textContent, title: r.title }));
    assert(row.label === 'bfc-runtime (GPU runtime model, not the TPU)', 'row label: ' + row.label);
    assert(/not what the TPU compiler does/.test(row.title), 'row title: ' + row.title);
    assert(/GPU runtime model, not the TPU/.test(row.text) && /every GPU allocation succeeds/.test(row.text) && !/OOM/.test(row.text), 'row text: ' + row.text);
    const labels = await page.$$eval('#strategies .bar-label', (l) => l.map((x) => x.textContent));
    assert(labels.filter((x) => /\(chosen\)/.test(x)).length === 1 && !labels.some((x) => /bfc-runtime.*chosen/.test(x)), 'chosen: ' + labels);
    assert(await page.isVisible('#legend-runtime'), 'the runtime curve has no legend entry');
    assert(/GPU-style allocator, not what the TPU compiler does/.test(await page.textContent('#legend-runtime')), 'legend text');
    const note = await page.textContent('#runtime-note');
    assert(/^Asked for \(runtime: bfc\): the runtime behaviour of the GPU-style allocator/.test(note) && /not what the TPU compiler does/.test(note) && /75% of/.test(note) && !/OOM/.test(note), 'note: ' + note);
    // the verdict is the TPU plan's: the replay does not change it
    const fits = await page.$eval('#fits-card', (c) => [...c.children].map((x) => x.textContent));
    assert(fits[1] === 'fits', 'fits card: ' + fits);
    const drawn = await page.evaluate(() => !!(window.__tpuplan.timeline && window.__tpuplan.timeline.rt));
    assert(drawn, 'the timeline has no runtime series');
    const ink = await colourPixels(page, '#timeline-canvas', '--runtime');
    assert(ink > 100, `the runtime curve's colour is on ${ink} pixels only`);
    // the tooltip names the runtime figures
    await page.locator('#timeline-canvas').scrollIntoViewIfNeeded();
    const box = await page.locator('#timeline-canvas').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForSelector('#timeline-tip:not(.hidden)');
    const tip = await page.textContent('#timeline-tip');
    assert(/BFC heap \(GPU runtime\)/.test(tip) && /BFC reserved/.test(tip) && /BFC fragmentation/.test(tip), 'tooltip: ' + tip);
    await page.context().close();
});

test(`the runtime note shows a GPU allocation that would fail with free memory, naming a tensor called ${XSS} as text`, async () => {
    const page = await newPage();
    await page.goto(base + '/');
    // 8192 x 0.5 = 4096 bytes; two of four 1024-byte buffers die at step 1, leaving two
    // 1024-byte holes for a 2048-byte buffer: it fails with 2048 bytes free.
    const csv = `id,lower,upper,size\nb0,0,1,1024\nb1,0,5,1024\nb2,0,1,1024\nb3,0,5,1024\n${XSS},1,5,2048\n`;
    const id = await page.evaluate(async (body) => {
        const res = await fetch('/api/v1/plans?capacity=8192B&mem_fraction=0.5', { method: 'POST', headers: { 'Content-Type': 'text/csv', Prefer: 'wait=20' }, body });
        return (await res.json()).id;
    }, csv);
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const note = await page.textContent('#runtime-note');
    assert(note.includes(`step 1: ${XSS} needs 2.00 KiB with 2.00 KiB free (largest free chunk 1.00 KiB)`), 'note: ' + note);
    assert(/it would fail with free memory/.test(note) && /First failed GPU allocation at step 1/.test(note) && /not a TPU out-of-memory/.test(note) && !/OOM/.test(note), 'note: ' + note);
    assert(/a GPU allocation would fail at step 1/.test(await page.textContent('#strategies .bar-row[data-strategy="bfc-runtime"] .bar-text')), 'row');
    // the TPU plan itself: no capacity but the one given, within which it fits
    assert((await page.$eval('#fits-card .value', (n) => n.textContent)) === 'fits', 'fits card');
    assert((await page.evaluate(() => document.querySelectorAll('img').length)) === 0, 'markup from the name became an element');
    assert(state.dialogs === 0, `${state.dialogs} dialogs opened`);
    await page.context().close();
});

test('a plan that does not fit lists each change planned, and a change\'s link plans it as a what-if', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    // tests/unit/test_advice.c's model (peak 360,448 B) against 300K: seven changes, the
    // optimizer state in host memory first (229,376 B, fits; 256 KiB out and back a step, in
    // the CLI's words), the 8-bit optimizer state second (262,144), every activation
    // offloaded fourth (294,912).
    const t = (name, shape, kind, live) => ({ name, shape, dtype: 'f32', kind, live });
    const body = JSON.stringify({ name: 'browser-advice', chip: 'v5e', tensors: [t('p', [256, 128], 'param', [0, 6]), t('opt', [256, 128], 'optimizer', [0, 6]),
        t('layers.0.h', [64, 128], 'activation', [0, 6]), t('layers.1.h', [64, 128], 'activation', [1, 5]), t('t', [64, 128], 'temp', [2, 4])] });
    const id = await page.evaluate(async (b) => {
        const res = await fetch('/api/v1/plans?capacity=300K', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' }, body: b });
        return (await res.json()).id;
    }, body);
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const adv = await page.evaluate(() => window.__tpuplan.result.advice);
    assert(adv && adv.reason === 'does not fit' && adv.items.length === 7 && adv.items[0].peak_after === 229376 && adv.items[1].peak_after === 262144, 'advice: ' + JSON.stringify(adv));
    assert(!(await page.locator('#advice-panel').evaluate((n) => n.classList.contains('hidden'))), 'the panel is hidden');
    const items = await page.$$eval('#advice-list li', (li) => li.map((x) => ({ text: x.textContent, overrides: x.querySelector('a.advice-plan').dataset.overrides })));
    assert(items.length === 7 && items[0].text.includes('host memory') &&
        items[0].text.includes('saves 128.0 KiB → peak 224.0 KiB, fits; cost: copy 256.0 KiB to and from host memory a step (0.016 ms at 16 GB/s: Scaling Book') &&
        items[1].text.includes('8 bits') && items[1].text.includes('saves 96.00 KiB → peak 256.0 KiB, fits'), 'items: ' + JSON.stringify(items));
    for (let k = 0; k < 7; k++) assert(items[k].overrides === JSON.stringify(adv.items[k].overrides), `item ${k}: ${items[k].overrides}`);
    const combo = await page.textContent('#advice-combo');
    assert(combo.startsWith('Apply change: 1 → peak 224.0 KiB, fits.'), 'combination: ' + combo);
    // The fourth item's link (every activation offloaded): a what-if plan of the model with it,
    // whose peak is the item's and whose host copies are a Host memory card apart from HBM.
    assert(items[3].overrides === '{"memory_space":{"activation":"host"}}', 'item 3: ' + items[3].overrides);
    await page.locator('#advice-list li').nth(3).locator('a.advice-plan').click();
    await page.waitForURL((u) => !u.pathname.endsWith('/' + id), { timeout: 30000 });
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready && window.__tpuplan.result, null, { timeout: 30000 });
    const child = await page.evaluate(() => window.__tpuplan.result);
    assert(child.summary.peak_bytes === adv.items[3].peak_after && child.summary.peak_bytes === 294912 && child.summary.fits === true, 'the what-if plan: ' + JSON.stringify(child.summary));
    assert(JSON.stringify(child.memory_spaces) === '[{"space":"host","memory_space":5,"buffers":2,"bytes":65536,"peak_bytes":65536}]', 'host: ' + JSON.stringify(child.memory_spaces));
    const host = await page.textContent('#space-host-card');
    assert(host.includes('64.00 KiB') && host.includes('apart from HBM'), 'host card: ' + host);
    await page.context().close();
});

test('a plan with a budget shows the verdict card and the budget line on the layout chart', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    // The fixture's peak is 485,507,072 B (above); a budget of 400,000,000 B is 85,507,072 B
    // (81.5 MiB) under it.
    const r = await page.evaluate(async (body) => {
        const res = await fetch('/api/v1/plans?budget=400000000', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' }, body });
        return res.json();
    }, JSON.stringify(model));
    assert(r.result && r.result.summary.budget_bytes === 400000000 && r.result.summary.within_budget === false, 'verdict: ' + JSON.stringify(r.result && r.result.summary));
    await page.goto(`${base}/p/${r.id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const card = await page.$$eval('#cards .card', (cards) => cards.map((c) => ({ cls: c.className, text: [...c.children].map((x) => x.textContent) })).find((c) => c.text[0] === 'Budget'));
    assert(card && card.cls === 'card bad' && card.text[1] === 'over budget' && card.text[2] === 'peak 463.02M over the 381.47M budget by 81.55M', 'budget card: ' + JSON.stringify(card));
    // The line is drawn in --budget across the plot at y = py(budget): count that colour on the row.
    const hits = await page.evaluate(() => {
        const L = window.__tpuplan.layout;
        const cv = L.canvas, dpr = cv.width / cv.clientWidth;
        const y = Math.round(L.py(L.opts.budget) * dpr);
        const probe = document.createElement('canvas').getContext('2d');
        probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue('--budget').trim();
        probe.fillRect(0, 0, 1, 1);
        const want = probe.getImageData(0, 0, 1, 1).data;
        const row = cv.getContext('2d').getImageData(0, y - 2, cv.width, 5).data;
        let n = 0;
        for (let i = 0; i < row.length; i += 4) if (Math.abs(row[i] - want[0]) + Math.abs(row[i + 1] - want[1]) + Math.abs(row[i + 2] - want[2]) < 40) n++;
        return n;
    });
    assert(hits > 200, `the budget line's colour is on ${hits} pixels of its row only`);
    await page.screenshot({ path: join(artifacts, 'plan-budget.png'), fullPage: false });
    await page.context().close();
});

// POSTs body (a model or CSV text) with query q, waiting for the plan; opens its page.
async function planPage(body, q, type) {
    const page = await newPage();
    await page.goto(base + '/');
    const id = await page.evaluate(async ([b, query, t]) => {
        const res = await fetch('/api/v1/plans' + query, { method: 'POST', headers: { 'Content-Type': t, Prefer: 'wait=30' }, body: b });
        return (await res.json()).id;
    }, [body, q, type]);
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    return page;
}

// The cards' texts by label: {Fits: ['does not fit', 'detail'], ...}.
async function cardTexts(page) {
    return page.$$eval('#cards .card', (cards) => Object.fromEntries(cards.map((c) => [c.children[0].textContent, [...c.children].slice(1).map((x) => x.textContent)])));
}

test('the Pallas example: HBM fits, a kernel does not, and the Fits card says so in the planner\'s words, with no negative figure', async () => {
    const page = await planPage(readFileSync(join(here, '../data/models/pallas-kernels.json'), 'utf8'), '', 'application/json');
    const cards = await cardTexts(page);
    // tests/unit/test_verdict.c works these out: 96 MiB of HBM on v6e's 31.25G; "attention"
    // needs 74.00M of VMEM against its 32.00M limit. The card read "over by -31.16 GiB".
    assert(JSON.stringify(cards.Fits) === JSON.stringify(['does not fit', 'HBM peak 96.00M within the 31.25G capacity, 31.16G headroom · kernel "attention" needs 74.00M of VMEM, over its 32.00M limit by 42.00M (1 of 2 kernels over)']), 'fits card: ' + JSON.stringify(cards.Fits));
    assert((await page.getAttribute('#fits-card', 'class')) === 'card bad', 'fits card class');
    const all = await page.textContent('#cards');
    assert(!/-\d/.test(all.replace(/[A-Za-z]-\d/g, '')), 'a negative figure on the cards: ' + all);
    await page.screenshot({ path: join(artifacts, 'plan-pallas.png'), fullPage: false });
    await page.context().close();
});

test('fragmentation is drawn only where there is some: the chart and the Fragmentation card agree', async () => {
    // The default plan sits at its lower bound: no fragmentation on the card, none drawn.
    const frag = (page) => page.evaluate(() => {
        const T = window.__tpuplan.timeline;
        let most = 0;
        for (let i = 0; i < T.n; i++) most = Math.max(most, T.fragAt(T.live[i], T.heap[i]));
        return { most, card: window.__tpuplan.result.summary.fragmentation_bytes, legend: !document.querySelector('#legend-gap').classList.contains('hidden') };
    });
    let f = await frag(state.page);
    assert(f.card === 0 && f.most === 0 && !f.legend, 'default plan: ' + JSON.stringify(f));
    // perfect-48.csv packed first-fit: 1588224 B against a lower bound of 1048576 B.
    const page = await planPage(readFileSync(join(here, '../data/perfect-48.csv'), 'utf8'), '?strategies=first-fit', 'text/csv');
    f = await frag(page);
    assert(f.card === 1588224 - 1048576 && f.most === f.card && f.legend, 'first-fit plan: ' + JSON.stringify(f));
    await page.context().close();
});

test('the diff page draws both layouts on one byte scale, the deltas by kind and the tensors by |delta|', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    // B: the four attention-score temporaries in bf16 instead of f32, the logits (live all
    // along, so in the peak) in f32 instead of bf16, and the tensor named like markup widened
    // from [7,3] to [7,300]: six changed tensors, nothing added or removed.
    const b = JSON.parse(JSON.stringify(model));
    b.name = 'browser-test-lm-bf16-scores';
    for (const t of b.tensors) {
        if (t.kind === 'temp') t.dtype = 'bf16';
        if (t.name === XSS) t.shape = [7, 300];
        if (t.name === 'logits') t.dtype = 'f32';
    }
    const ids = await page.evaluate(async (ms) => {
        const post = async (m) => (await (await fetch('/api/v1/plans', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' }, body: JSON.stringify(m) })).json()).id;
        return [await post(ms[0]), await post(ms[1])];
    }, [model, b]);
    await page.goto(`${base}/d/${ids[0]}/${ids[1]}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const d = await page.evaluate(() => window.__tpuplan.diff);
    const s = d.summary;
    assert(s.changed === 6 && s.added === 0 && s.removed === 0 && s.unchanged === model.tensors.length - 6 && s.peak_bytes_delta > 0, 'counts: ' + JSON.stringify(s));
    assert(d.by_kind.temp.padded_bytes_delta < 0 && d.by_kind.param.padded_bytes_delta === 0, 'by kind: ' + JSON.stringify(d.by_kind));
    const cards = await page.$$eval('#cards .card', (cs) => cs.map((c) => [...c.children].map((x) => x.textContent)));
    const peak = cards.find((c) => c[0] === 'Peak');
    assert(peak && peak[1].startsWith('+') && peak[2].includes('→'), 'peak card: ' + JSON.stringify(peak));
    assert(cards[0][0] === 'Peak' && (await page.getAttribute('#peak-card', 'class')).includes('headline'), 'the peak is not the headline: ' + cards.map((c) => c[0]));
    assert(cards.some((c) => c[0] === 'Tensors' && c[2].includes('6 changed')), 'tensors card: ' + JSON.stringify(cards));
    // one byte scale: both charts have the same extent and view height
    const ext = await page.evaluate(() => window.__tpuplan.layouts.map((l) => [l.extent.y1, l.view.y1]));
    assert(ext[0][0] === ext[1][0] && ext[0][1] === ext[1][1] && ext[0][0] >= Math.max(s.peak_bytes_before, s.peak_bytes_after), 'scales: ' + JSON.stringify(ext));
    for (const sel of ['#layout-a', '#layout-b']) {
        const ink = await inkedPixels(page, sel);
        assert(ink > 5000, `${sel} has only ${ink} non-background pixels`);
    }
    // the delta table: every changed tensor, largest |delta| first
    const rows = await page.$$eval('#delta-table tbody tr', (trs) => trs.map((tr) => [tr.dataset.name, tr.children[3].textContent]));
    assert(rows.length === 6 && rows.map((r) => r[0]).join() === d.tensors.map((t) => t.name).join(), 'rows: ' + JSON.stringify(rows));
    const mags = d.tensors.map((t) => Math.abs(t.padded_bytes_delta));
    assert(mags.every((m, i) => i === 0 || mags[i - 1] >= m), 'not sorted by |delta|: ' + mags);
    assert(rows[0][0] === 'logits' && rows[0][1].startsWith('+'), 'first row: ' + rows[0]);
    assert(rows.some((r) => r[0] === XSS) && (await page.evaluate(() => document.querySelectorAll('img').length)) === 0, 'the markup name is not text');
    const kinds = await page.$$eval('#kind-table tbody tr', (trs) => trs.map((tr) => tr.dataset.kind));
    assert(kinds.includes('temp') && kinds.includes('param'), 'kind rows: ' + kinds);
    assert((await page.getAttribute('#link-a', 'href')) === '/p/' + ids[0] && (await page.getAttribute('#link-b', 'href')) === '/p/' + ids[1], 'links to both plans');
    await page.fill('#delta-filter', 'scores');
    assert((await page.$$('#delta-table tbody tr')).length === 4, 'the filter keeps the four scores');
    await page.screenshot({ path: join(artifacts, 'diff.png'), fullPage: true });
    state.diffIds = ids;
    assert(state.dialogs === 0, `${state.dialogs} dialogs opened`);
    await page.context().close();
});

test('a remat diff: the peak is the headline, the summed buffer sizes neutral and labelled, the remat copies one row', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    // tests/cli/diff.sh: a and b recomputed at step 3: peak 104.0K -> 72.0K, two copies of
    // 32.0K each added (+64.0K summed). The page read "Padded bytes +64 KiB" in red.
    const bodies = ['lm-saved', 'lm-remat'].map((n) => readFileSync(join(here, `../data/diff/${n}.json`), 'utf8'));
    const ids = await page.evaluate(async (bs) => {
        const post = async (b) => (await (await fetch('/api/v1/plans', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' }, body: b })).json()).id;
        return [await post(bs[0]), await post(bs[1])];
    }, bodies);
    await page.goto(`${base}/d/${ids[0]}/${ids[1]}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const cards = await page.$$eval('#cards .card', (cs) => cs.map((c) => ({ cls: c.className, text: [...c.children].map((x) => x.textContent) })));
    assert(cards[0].text[0] === 'Peak' && cards[0].text[1] === '-32.00 KiB' && cards[0].cls === 'card headline good', 'peak card: ' + JSON.stringify(cards[0]));
    const padded = cards.find((c) => c.text[0] === 'Sum of padded buffer sizes');
    assert(padded && padded.text[1] === '+64.00 KiB' && padded.cls === 'card' && /not memory/.test(padded.text[2]), 'sum card: ' + JSON.stringify(padded));
    assert(!cards.some((c) => c.text[0] === 'Padded bytes'), 'a "Padded bytes" card');
    const verdict = cards.find((c) => c.text[0] === 'Verdict');
    assert(verdict && verdict.text[1] === 'fits → fits', 'verdict card: ' + JSON.stringify(verdict));
    const groups = await page.$$eval('#group-table tbody tr', (trs) => trs.map((tr) => [...tr.children].slice(0, 4).map((td) => td.textContent)));
    assert(JSON.stringify(groups) === JSON.stringify([['2 remat copies', '*/remat', 'added', '+64.00 KiB']]), 'groups: ' + JSON.stringify(groups));
    const rows = await page.$$eval('#delta-table tbody tr', (trs) => trs.map((tr) => tr.dataset.name));
    assert(rows.length === 0, 'remat copies listed one by one: ' + rows);
    assert((await page.$$eval('#kind-table td.good, #kind-table td.bad, #delta-table td.good, #delta-table td.bad', (x) => x.length)) === 0, 'a buffer-size sum coloured as memory');
    await page.screenshot({ path: join(artifacts, 'diff-remat.png'), fullPage: false });
    await page.context().close();
});

test('hovering a buffer shows its name, shape, sizes, lifetime and offset', async () => {
    const page = state.page;
    const target = state.result.tensors.reduce((a, b) => (b.padded_bytes > a.padded_bytes ? b : a));
    const pt = await page.evaluate((name) => {
        const L = window.__tpuplan.layout;
        return L.screenPoint(L.cols.name.indexOf(name));
    }, target.name);
    await page.locator('#layout-canvas').scrollIntoViewIfNeeded();
    const box = await page.locator('#layout-canvas').boundingBox();
    await page.mouse.move(box.x + pt.x, box.y + pt.y);
    await page.waitForSelector('#layout-tip:not(.hidden)');
    const tip = await page.textContent('#layout-tip');
    assert(tip.includes(target.name), 'tooltip lacks the name: ' + tip);
    assert(tip.includes(target.shape), 'tooltip lacks the XLA shape: ' + tip);
    assert(tip.includes(`steps ${target.live[0]}`), 'tooltip lacks the lifetime: ' + tip);
    assert(tip.includes(target.offset.toLocaleString('en-US')), 'tooltip lacks the offset: ' + tip);
    assert(/logical/.test(tip) && /padded/.test(tip), 'tooltip lacks sizes');
    const band = await page.evaluate(() => window.__tpuplan.timeline.highlight);
    assert(band && band[0] === target.live[0] && band[1] === target.live[1], 'timeline does not shade the lifetime: ' + JSON.stringify(band));
    await page.mouse.move(box.x + 2, box.y + 2);
});

test('wheel zooms, drag pans, and reset restores the full view', async () => {
    const page = state.page;
    const view = () => page.evaluate(() => ({ ...window.__tpuplan.layout.view }));
    const full = await view();
    await page.locator('#layout-canvas').scrollIntoViewIfNeeded();
    const box = await page.locator('#layout-canvas').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -400);
    await page.waitForTimeout(100);
    const zoomed = await view();
    assert(zoomed.x1 - zoomed.x0 < (full.x1 - full.x0) * 0.9 && zoomed.y1 - zoomed.y0 < (full.y1 - full.y0) * 0.9, 'wheel did not zoom both axes');
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 120, box.y + box.height / 2 - 60, { steps: 5 });
    await page.mouse.up();
    await page.waitForTimeout(50);
    const panned = await view();
    assert(panned.x0 < zoomed.x0 && panned.y0 < zoomed.y0, `drag did not pan: ${JSON.stringify([zoomed, panned])}`);
    await page.focus('#layout-canvas');
    await page.keyboard.press('0');
    const k0 = await view();
    await page.keyboard.press('+');
    await page.keyboard.press('ArrowRight');
    const k1 = await view();
    assert(k1.x1 - k1.x0 < k0.x1 - k0.x0 && k1.x0 > k0.x0, 'keyboard zoom/pan did nothing');
    await page.click('#reset-zoom');
    const reset = await view();
    assert(Math.abs(reset.x0 - full.x0) < 1e-9 && Math.abs(reset.y1 - full.y1) < 1e-6, 'reset did not restore the view');
});

test('search by name highlights the matching buffers', async () => {
    const page = state.page;
    await page.fill('#search', 'wqkv.grad');
    await page.waitForFunction(() => /match/.test(document.querySelector('#search-count').textContent));
    const count = await page.textContent('#search-count');
    assert(count.startsWith('4 matches'), 'search count: ' + count);
    const m = await page.evaluate(() => window.__tpuplan.layout.matchCount);
    assert(m === 4, 'matchCount ' + m);
    await page.fill('#search', '');
});

test('padding table sorts by clicking headers and filters by text', async () => {
    const page = state.page;
    const col = (i) => page.$$eval(`#pad-table tbody tr td:nth-child(${i})`, (tds) => tds.map((td) => Number((td.getAttribute('title') || '').replace(/[^0-9]/g, ''))));
    const wasted = await col(6);
    assert(wasted.every((x, i) => i === 0 || wasted[i - 1] >= x), 'default order is not most wasted bytes first');
    await page.click('#pad-table th[data-key=logical_bytes]');
    let v = await col(4);
    assert(v.length === model.tensors.length, `rows ${v.length}`);
    assert(v.every((x, i) => i === 0 || v[i - 1] >= x), 'not descending by logical bytes: ' + v.slice(0, 6));
    assert((await page.getAttribute('#pad-table th[data-key=logical_bytes]', 'aria-sort')) === 'descending', 'aria-sort not set');
    await page.click('#pad-table th[data-key=logical_bytes]');
    v = await col(4);
    assert(v.every((x, i) => i === 0 || v[i - 1] <= x), 'not ascending after a second click');
    await page.fill('#pad-filter', 'adam');
    await page.waitForFunction(() => document.querySelectorAll('#pad-table tbody tr').length === 4);
    await page.fill('#pad-filter', '');
    await page.waitForFunction((n) => document.querySelectorAll('#pad-table tbody tr').length === n, model.tensors.length);
});

test('the peak table lists what is live at the peak; a table row finds its buffer in the chart', async () => {
    const page = state.page;
    const peak = state.result.packing.peak;
    const rows = await page.$$eval('#peak-table tbody tr', (trs) => trs.map((tr) => tr.children[0].textContent.trim()));
    assert(rows.length === Math.min(12, peak.buffers.length), `peak rows ${rows.length} for ${peak.buffers.length} buffers`);
    const biggest = state.result.tensors.filter((t) => peak.buffers.includes(t.id)).sort((a, b) => b.padded_bytes - a.padded_bytes)[0];
    assert(rows[0] === biggest.name, `first peak row ${rows[0]}, want ${biggest.name}`);
    await page.click('#pad-table tbody tr:nth-child(2)');
    const idx = Number(await page.getAttribute('#pad-table tbody tr:nth-child(2)', 'data-index'));
    await page.waitForSelector('#layout-tip.pinned:not(.hidden)');
    const tip = await page.textContent('#layout-tip .tt-name');
    assert(tip === state.result.tensors[idx].name, `pinned ${tip}, clicked ${state.result.tensors[idx].name}`);
    assert((await page.evaluate(() => window.__tpuplan.layout.pinned)) === idx, 'not pinned');
    await page.evaluate(() => {
        const L = window.__tpuplan.layout;
        L.pinned = -1;
        L.hover = -1;
        L.tooltip.classList.remove('pinned');
        L.showTooltip(-1);
        L.reset();
    });
});

test(`a tensor named ${XSS} is shown as text and runs nothing`, async () => {
    const page = state.page;
    const cells = await page.$$eval('#pad-table td.name', (tds) => tds.map((td) => td.textContent));
    assert(cells.includes(XSS), 'the hostile name is not shown verbatim');
    const imgs = await page.evaluate(() => document.querySelectorAll('img').length);
    assert(imgs === 0, `${imgs} img elements in the page`);
    await page.fill('#search', 'onerror');
    await page.waitForFunction(() => /match/.test(document.querySelector('#search-count').textContent));
    const pt = await page.evaluate((name) => {
        const L = window.__tpuplan.layout;
        const i = L.cols.name.indexOf(name);
        L.focus(i);
        return L.screenPoint(i);
    }, XSS);
    await page.locator('#layout-canvas').scrollIntoViewIfNeeded();
    const box = await page.locator('#layout-canvas').boundingBox();
    await page.mouse.move(box.x + pt.x, box.y + pt.y);
    await page.waitForSelector('#layout-tip:not(.hidden)');
    assert((await page.textContent('#layout-tip .tt-name')) === XSS, 'tooltip name is not the literal text');
    assert((await page.evaluate(() => document.querySelectorAll('img, b').length)) === 0, 'markup from a name or tag became elements');
    await page.waitForTimeout(200);
    assert(state.dialogs === 0, `${state.dialogs} dialogs opened`);
    await page.fill('#search', '');
    await page.click('#reset-zoom');
});

test('downloads: result JSON and layout CSV (id,lower,upper,size,offset,name,kind)', async () => {
    const page = state.page;
    const [dj] = await Promise.all([page.waitForEvent('download'), page.click('#dl-json')]);
    const json = JSON.parse(readFileSync(await dj.path(), 'utf8'));
    assert(json.schema_version === 1 && json.tensors.length === model.tensors.length, 'JSON download differs');
    const [dc] = await Promise.all([page.waitForEvent('download'), page.click('#dl-csv')]);
    const lines = readFileSync(await dc.path(), 'utf8').trim().split('\n');
    assert(lines[0] === 'id,lower,upper,size,offset,name,kind', 'CSV header: ' + lines[0]);
    assert(lines.length === model.tensors.length + 1, `CSV rows ${lines.length - 1}`);
    const t0 = state.result.tensors[0];
    assert(lines[1] === [t0.id, t0.live[0], t0.live[1], t0.padded_bytes, t0.offset, t0.name, t0.kind].join(','), 'CSV row 1: ' + lines[1]);
});

// RFC 4180 rows of text (quoted cells, "" for a quote), as a spreadsheet reads them.
function csvRows(text) {
    const rows = [];
    let row = [], cell = '', quoted = false;
    for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (quoted && c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
        else if (c === '"') quoted = !quoted;
        else if (!quoted && c === ',') { row.push(cell); cell = ''; }
        else if (!quoted && c === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; }
        else cell += c;
    }
    return rows;
}

test('the layout CSV writes a tensor named =HYPERLINK("x") as text, not a formula', async () => {
    const names = ['=HYPERLINK("x")', '+1', '-2', '@SUM(A1)', 'a,=b', "'q", 'plain'];
    const m = { name: 'csv-injection', chip: 'v5e', tensors: names.map((name) => ({ name, shape: [8, 128], dtype: 'f32', kind: 'activation' })) };
    const page = await newPage();
    await page.goto(base + '/');
    const id = await page.evaluate(async (body) => {
        const res = await fetch('/api/v1/plans', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=20' }, body });
        return (await res.json()).id;
    }, JSON.stringify(m));
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const [dc] = await Promise.all([page.waitForEvent('download'), page.click('#dl-csv')]);
    const text = readFileSync(await dc.path(), 'utf8');
    const lines = text.trim().split('\n');
    assert(lines[1].endsWith(',"\'=HYPERLINK(""x"")",activation'), 'row 1: ' + lines[1]);
    const rows = csvRows(text);
    assert(rows.length === names.length + 1 && rows.every((r) => r.length === 7), 'rows: ' + JSON.stringify(rows));
    const got = rows.slice(1).map((r) => r[5]);
    const want = ["'=HYPERLINK(\"x\")", "'+1", "'-2", "'@SUM(A1)", 'a,=b', "''q", 'plain'];
    assert(JSON.stringify(got) === JSON.stringify(want), 'name cells: ' + JSON.stringify(got));
    for (const r of rows) assert(r.every((c) => !/^[=+\-@\t\r]/.test(c)), 'a cell a spreadsheet would run: ' + JSON.stringify(r));
    assert(rows.slice(1).every((r) => /^\d+$/.test(r[0]) && /^\d+$/.test(r[3]) && /^\d+$/.test(r[4])), 'numbers: ' + JSON.stringify(rows));
    await page.context().close();
});

test('screenshots of the plan page in light and dark themes', async () => {
    const page = state.page;
    await page.screenshot({ path: join(artifacts, 'plan-light.png') });
    await page.screenshot({ path: join(artifacts, 'plan-light-full.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(150);
    const ink = await inkedPixels(page, '#layout-canvas');
    assert(ink > 20000, 'layout canvas blank after switching to dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert(bg !== 'rgb(247, 248, 250)', 'dark theme did not apply: ' + bg);
    await page.screenshot({ path: join(artifacts, 'plan-dark.png') });
    await page.screenshot({ path: join(artifacts, 'plan-dark-full.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
});

test('the share link opens in a fresh browser context and sends no referrer', async () => {
    const page = state.page;
    await page.click('#copy-link');
    await page.waitForFunction(() => /copied|Copy the selected link/.test(document.querySelector('#action-status').textContent));
    const share = await page.inputValue('#share-url');
    assert(share.endsWith(new URL(state.planUrl).pathname), `share link ${share} vs ${state.planUrl}`);
    const fresh = await newPage();
    const resp = await fresh.goto(share);
    await fresh.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 20000 });
    assert((await fresh.textContent('#plan-name')) === model.name, 'shared page shows another plan');
    const policy = resp.headers()['referrer-policy'] || (await fresh.getAttribute('meta[name=referrer]', 'content'));
    assert(policy === 'no-referrer', 'referrer policy: ' + policy);
    assert((await fresh.getAttribute('meta[name=referrer]', 'content')) === 'no-referrer', 'no referrer meta');
    await fresh.context().close();
});

test('an unknown plan id shows a clear message, not a broken page', async () => {
    const page = await newPage();
    await page.goto(base + '/p/AAAAAAAAAAAAAAAAAAAAAC');
    await page.waitForSelector('#error:not(.hidden)');
    assert(/no plan at this address/.test(await page.textContent('#error-text')), 'message: ' + (await page.textContent('#error-text')));
    assert(await page.isHidden('#plan'), 'plan section shown');
    await page.context().close();
});

test('a safetensors upload sends only the header bytes, not the weights', async () => {
    const header = { __metadata__: { format: 'pt' } };
    let off = 0;
    const add = (name, dtype, shape, bytes) => {
        header[name] = { dtype, shape, data_offsets: [off, off + bytes] };
        off += bytes;
    };
    add('model.embed_tokens.weight', 'BF16', [32000, 4096], 32000 * 4096 * 2);
    add('model.layers.0.self_attn.q_proj.weight', 'BF16', [4096, 4096], 4096 * 4096 * 2);
    add('lm_head.weight', 'F32', [1000, 4096], 1000 * 4096 * 4);
    const path = join(tmp, 'model.safetensors');
    const headerLen = writeSafetensors(path, header, off); // ~300 MB, sparse
    const page = await newPage();
    const posts = [];
    page.on('requestfinished', (req) => {
        if (req.method() === 'POST' && req.url().endsWith('/api/v1/plans')) posts.push(req.allHeaders().then((h) => Number(h['content-length'])));
    });
    await page.goto(base + '/');
    await pickFile(page, path, /safetensors/);
    await page.fill('#name', 'safetensors-upload');
    await page.click('#submit');
    await waitPlanPage(page);
    assert(posts.length === 1, `${posts.length} POSTs`);
    posts[0] = await posts[0];
    assert(posts[0] > headerLen && posts[0] < headerLen + 2048, `POST body ${posts[0]} bytes for a ${headerLen}-byte header of a ${headerLen + off}-byte file`);
    const r = await page.evaluate(() => ({ ...window.__tpuplan.result, tensors: window.__tpuplan.cols.name }));
    assert(r.tensors.length === 3 && r.model.source_format === 'safetensors', 'plan of the safetensors header: ' + r.tensors.length + ' ' + r.model.source_format);
    await page.context().close();
});

test('only the creating browser can delete a plan; the link then stops working', async () => {
    const path = join(tmp, 'doomed.csv');
    writeFileSync(path, 'id,lower,upper,size\n0,0,2,1024\n1,1,3,512\n');
    const page = await newPage();
    await uploadPlan(page, path, /MiniMalloc CSV/);
    const url = page.url();
    const other = await newPage();
    await other.goto(url);
    await other.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready);
    assert(await other.isHidden('#delete'), 'a share-link viewer is offered Delete');
    assert(await page.isVisible('#delete'), 'the creator is not offered Delete');
    state.confirms = 1;
    await Promise.all([page.waitForURL(base + '/'), page.click('#delete')]);
    await other.reload();
    await other.waitForSelector('#error:not(.hidden)');
    await page.context().close();
    await other.context().close();
});

test('a MiniMalloc CSV uploads and plans without a chip', async () => {
    const path = join(tmp, 'tiny.csv');
    writeFileSync(path, 'id,lower,upper,size\n0,0,10,4096\n1,0,4,8192\n2,4,10,8192\n3,2,6,2048\n4,6,9,1024\n');
    const page = await newPage();
    await uploadPlan(page, path, /MiniMalloc CSV/);
    const r = await page.evaluate(() => ({ ...window.__tpuplan.result, tensors: window.__tpuplan.cols.name }));
    assert(r.tensors.length === 5 && r.model.source_format === 'minimalloc-csv', 'CSV plan: ' + r.model.source_format);
    assert(r.summary.lower_bound_bytes === 4096 + 8192 + 2048, 'lower bound ' + r.summary.lower_bound_bytes);
    assert((await inkedPixels(page, '#layout-canvas')) > 20000, 'CSV layout not drawn');
    assert(/none/.test(await page.textContent('#cards')), 'chip card for a CSV');
    await page.context().close();
});

// XLA's own dumps (tests/data/xla, in the exact form XLA prints them).
const xlaDump = (name) => join(here, '../data/xla', name);

test("an XLA buffer assignment (.txt) uploads and plans as it stands, with XLA's own row and layout", async () => {
    const page = await newPage();
    await uploadPlan(page, xlaDump('small.buffer-assignment.txt'), /XLA buffer assignment/);
    const r = await page.evaluate(() => window.__tpuplan.result);
    assert(r.model.source_format === 'xla-buffer-assignment', 'format ' + r.model.source_format);
    assert(r.packing.xla && r.packing.xla.peak_bytes === 4240 && r.packing.xla.lower_bound_bytes === 3200, 'xla ' + JSON.stringify(r.packing.xla && r.packing.xla.peak_bytes));
    const row = await page.$eval('#strategies .bar-row[data-strategy="xla-actual"]', (x) => ({ label: x.querySelector('.bar-label').textContent, text: x.querySelector('.bar-text').textContent, title: x.title }));
    assert(row.label === "xla-actual (XLA's own assignment)", 'row label: ' + row.label);
    assert(/6 allocations/.test(row.text) && /\+3[23]/.test(row.text), 'row text: ' + row.text);
    assert(/what XLA did/.test(row.title), 'row title: ' + row.title);
    const labels = await page.$$eval('#strategies .bar-label', (l) => l.map((x) => x.textContent));
    assert(!labels.some((x) => /xla-actual.*chosen/.test(x)), 'xla-actual chosen: ' + labels);
    const card = await page.textContent('#xla-card');
    assert(/XLA's own total/.test(card) && /6 allocations/.test(card), 'card: ' + card);
    // the layout chart switches to XLA's offsets and back
    assert(await page.isVisible('#xla-layout'), 'no XLA layout switch');
    const ours = await page.textContent('#layout-note');
    const before = await page.evaluate(() => window.__tpuplan.layout.extent.y1);
    await page.click('#xla-layout');
    const note = await page.textContent('#layout-note');
    const after = await page.evaluate(() => window.__tpuplan.layout.extent.y1);
    assert(/XLA's own layout: 7 buffers/.test(note), 'note: ' + note);
    assert(before === 3200 && after === 4240, `heights ${before} -> ${after}`);
    assert((await inkedPixels(page, '#layout-canvas')) > 20000, "XLA's layout not drawn");
    await page.screenshot({ path: join(artifacts, 'plan-xla-layout.png') });
    await page.click('#xla-layout');
    assert((await page.textContent('#layout-note')) === ours, 'switching back');
    await page.context().close();
});

test('a program before optimization shows the compiler\'s peak beside the written one, and the assumptions between them', async () => {
    const page = await newPage();
    await uploadPlan(page, join(here, '../data/hlo/jax_while_call.mlir'), /XLA program/);
    const card = await page.textContent('#compile-card');
    assert(/Program as compiled/.test(card) && /as written .*upper bound/.test(card) && /4 values fused away \(4 loop, 0 input, 0 output\)/.test(card), 'card: ' + card);
    const notes = await page.textContent('#assumptions');
    assert(/compiler reading: fusion: XLA's public fusion rules/.test(notes), 'notes: ' + notes);
    await page.context().close();
});

test('a model with its XLA buffer assignment and memory-usage report: matched by name, totals shown', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    await page.setInputFiles('#file', xlaDump('small.model.json'));
    await page.setInputFiles('#xla_assignment', xlaDump('small.buffer-assignment.txt'));
    await page.setInputFiles('#xla_report', xlaDump('small.memory-usage-report.txt'));
    await page.waitForFunction(() => /model description/.test(document.querySelector('#file-info').textContent));
    await page.click('#submit');
    await waitPlanPage(page);
    const text = await page.$eval('#strategies .bar-row[data-strategy="xla-actual"] .bar-text', (x) => x.textContent);
    assert(/3 of 7 values matched/.test(text), 'row text: ' + text);
    const card = await page.textContent('#xla-card');
    assert(/memory-usage report/.test(card) && /3 of 7 values matched/.test(card), 'card: ' + card);
    await page.click('#xla-layout');
    const note = await page.textContent('#layout-note');
    assert(/3 buffers at XLA's offsets .*; 1 matches no XLA value and is not drawn/.test(note), 'note: ' + note);
    await page.context().close();
});

test("an XLA out-of-memory report (.txt, a real paste) plans its allocations, XLA's sizes beside ours", async () => {
    const page = await newPage();
    await uploadPlan(page, xlaDump('oom/flowpm-27.txt'), /out-of-memory report/);
    const r = await page.evaluate(() => window.__tpuplan.result);
    assert(r.model.source_format === 'xla-oom', 'format ' + r.model.source_format);
    const a = r.packing.xla_report.allocations[0];
    assert(a.size.text === '32.00G' && a.ours.padded_bytes === 34359738368 && a.size_matches === true, 'allocation ' + JSON.stringify(a.ours));
    const card = await page.textContent('#xla-report-card');
    assert(/41\.74G/.test(card) && /of 16\.00G hbm/.test(card) && /1 of 1 allocations sized as XLA did/.test(card), 'card: ' + card);
    const row = await page.$eval('#strategies .bar-row[data-strategy="xla-report"]', (x) => x.querySelector('.bar-text').textContent);
    assert(/41\.74G used of 16\.00G hbm/.test(row), 'row: ' + row);
    await page.context().close();
});

test("an HLO module with XLA's CompiledMemoryStats as its report: XLA's total beside our peak", async () => {
    const page = await newPage();
    await page.goto(base + '/');
    await page.setInputFiles('#file', xlaDump('small.hlo'));
    await page.setInputFiles('#xla_report', xlaDump('oom/xla-10803.memstats.txt'));
    await page.waitForFunction(() => /XLA program/.test(document.querySelector('#file-info').textContent));
    await page.click('#submit');
    await waitPlanPage(page);
    const x = await page.evaluate(() => window.__tpuplan.result.packing.xla_report);
    assert(x.form === 'compiled-memory-stats' && x.xla_total_bytes === 137376, 'report: ' + JSON.stringify(x));
    const card = await page.textContent('#xla-report-card');
    assert(/134\.2 KiB/.test(card) && /CompiledMemoryStats/.test(card), 'card: ' + card);
    const row = await page.$eval('#strategies .bar-row[data-strategy="xla-report"]', (e) => e.querySelector('.bar-text').textContent);
    assert(/134\.2 KiB · XLA's CompiledMemoryStats/.test(row), 'row: ' + row);
    await page.context().close();
});

test('an HLO module with its XLA buffer assignment: values written in place counted apart from the unmatched', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    await page.setInputFiles('#file', xlaDump('small.hlo'));
    await page.setInputFiles('#xla_assignment', xlaDump('small.buffer-assignment.txt'));
    await page.waitForFunction(() => /XLA program/.test(document.querySelector('#file-info').textContent));
    await page.click('#submit');
    await waitPlanPage(page);
    const x = await page.evaluate(() => window.__tpuplan.result.packing.xla);
    assert(x.matched_values === 4 && x.in_place_values === 2 && x.unmatched_values === 1, 'xla: ' + JSON.stringify(x.unmatched_value_names));
    const text = await page.$eval('#strategies .bar-row[data-strategy="xla-actual"] .bar-text', (e) => e.textContent);
    assert(/4 of 7 values matched, 2 in place/.test(text), 'row text: ' + text);
    const card = await page.textContent('#xla-card');
    assert(/4 of 7 values matched, 2 in place/.test(card), 'card: ' + card);
    await page.context().close();
});

test('a model error from the API is shown next to the file field', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    await pickFile(page, fixture('bad-model.json'), /model description/);
    await page.click('#submit');
    await page.waitForFunction(() => document.querySelector('#err-file').textContent !== '' || document.querySelector('#err-general').textContent !== '', null, { timeout: 15000 });
    const err = await page.textContent('#err-file');
    await page.screenshot({ path: join(artifacts, 'upload-error.png') });
    assert(/broken/.test(err) && /-3|>= 0|negative/.test(err), 'file error: ' + JSON.stringify(err));
    assert((await page.textContent('#err-general')) === '', 'error also shown as general');
    assert(/\/$/.test(page.url()), 'navigated away on error');
    await page.context().close();
});

test('an XLA program says what it is, and its host memory is a card of its own, never in HBM', async () => {
    const page = await newPage();
    await uploadPlan(page, join(here, '../data/hlo/offload.hlo'), /XLA program/);
    const cards = await cardTexts(page);
    // tests/unit/test_hlo_program.c works these out: p0, MoveToHost's and annotate_device_placement's
    // results are host memory, 266240 B (260.0 KiB), all live at once in the compiler's order; HBM holds p1 and mtd.
    assert(cards.Program && cards.Program[0] === 'before-optimization' && /not partitioned/.test(cards.Program[1]), 'program card: ' + JSON.stringify(cards.Program));
    assert(/no schedule/.test(await page.getAttribute('#program-card', 'title')), 'program evidence');
    const host = cards['Host memory'];
    assert(host && host[0] === '260.0 KiB' && /^peak 260\.0 KiB · 3 buffers · apart from HBM/.test(host[1]), 'host card: ' + JSON.stringify(host));
    const r = await page.evaluate(() => window.__tpuplan.result);
    assert(r.summary.padded_bytes === 2 * 131072, 'HBM holds p1 and mtd only: ' + r.summary.padded_bytes);
    await page.context().close();
});

test('an XLA HLO upload plans; the tooltip shows op_name and a scope highlights its buffers', async () => {
    const page = await newPage();
    await uploadPlan(page, join(here, '../data/hlo/donate_scheduled.hlo'), /XLA program/);
    const r = await page.evaluate(() => ({ ...window.__tpuplan.result, names: window.__tpuplan.cols.name }));
    assert(r.model.source_format === 'hlo' && r.names.includes('fusion.4'), 'HLO plan: ' + r.model.source_format + ' ' + r.names);
    // jit(f)/mul and jit(f)/add share the scope jit(f); "x" is its own
    const options = await page.$$eval('#op-group option', (os) => os.map((o) => o.value));
    assert(options.includes('jit(f)') && options.includes('x'), 'op_name scopes: ' + options);
    await page.selectOption('#op-group', 'jit(f)');
    const n = await page.evaluate(() => window.__tpuplan.layout.matchCount);
    assert(n === 2, `jit(f) highlights ${n} buffers, wanted 2 (mul.3, fusion.4)`);
    assert(/2 buffers in jit\(f\)/.test(await page.textContent('#search-count')), 'count not shown');
    const pt = await page.evaluate(() => {
        const L = window.__tpuplan.layout;
        return L.screenPoint(L.cols.name.indexOf('fusion.4'));
    });
    await page.locator('#layout-canvas').scrollIntoViewIfNeeded();
    const box = await page.locator('#layout-canvas').boundingBox();
    await page.mouse.move(box.x + pt.x, box.y + pt.y);
    await page.waitForSelector('#layout-tip:not(.hidden)');
    const tip = await page.textContent('#layout-tip');
    assert(tip.includes('fusion.4') && tip.includes('op_namejit(f)/add'), 'tooltip lacks op_name: ' + tip);
    await page.context().close();
});

test('100,000-buffer plan: first paint of the charts', async () => {
    // A 100,000-tensor result (37 MB, too big to plan in a test run) stored straight into the
    // server's database with its two views, as a worker would store them; the page then loads
    // it from the real server like any plan: both views, from PostgreSQL, through the cache.
    const r = makeResult(100000);
    const id = 'AAAAAAAAAAAAAAAAAAAAAB';
    const json = JSON.stringify(r);
    const csv = (v) => '"' + String(v).replace(/"/g, '""') + '"';
    const row = [id, r.model.name, 'v5e', 'json', 'done', '\\x00', json, JSON.stringify(summaryView(r)),
        JSON.stringify(layoutView(r)), '\\x' + '00'.repeat(32), r.tensors.length].map(csv).join(',') + '\n';
    const t0 = Date.now();
    execFileSync('psql', [process.env.DATABASE_URL, '-v', 'ON_ERROR_STOP=1', '-qc',
        'COPY plans (id, name, chip, source_format, status, input, result, result_summary, result_layout, manage_token_hash, tensors) FROM STDIN (FORMAT csv)'],
    { input: row, maxBuffer: 1 << 20 });
    const stored = Date.now() - t0;
    const page = await newPage();
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 60000 });
    const t = await page.evaluate(() => {
        const views = {};
        for (const e of performance.getEntriesByType('resource')) {
            const v = e.name.includes('/api/v1/plans/') && new URL(e.name).searchParams.get('view');
            if (v) views[v] = { end: Math.round(e.responseEnd), wait: Math.round(e.responseStart - e.requestStart), bytes: e.encodedBodySize };
        }
        return { first: window.__tpuplan.firstPaintMs, views, ...window.__tpuplan.timings, drawn: window.__tpuplan.layout.drawn };
    });
    const urls = await planRequests(page);
    // The layout view's columns hold each tensor's fields (sampled across the plan).
    const sample = [0, 1, 777, 50000, 99998, 99999];
    const got = await page.evaluate((ix) => ix.map((i) => window.__tpuplan.layout.tensor(i)), sample);
    for (const [k, i] of sample.entries()) {
        const want = r.tensors[i], g = got[k];
        for (const f of ['name', 'kind', 'shape', 'offset', 'padded_bytes', 'logical_bytes', 'layout_source', 'confidence'])
            assert(g[f] === want[f], `tensor ${i} ${f}: ${g[f]} != ${want[f]}`);
        assert(g.live[0] === want.live[0] && g.live[1] === want.live[1] && g.id === want.id, `tensor ${i} live/id`);
    }
    const ink = await inkedPixels(page, '#layout-canvas');
    await page.screenshot({ path: join(artifacts, 'plan-100k.png') });
    // A frame after zooming must also be quick (the chart redraws on every wheel event).
    const redraw = await page.evaluate(() => {
        const L = window.__tpuplan.layout, t0 = performance.now();
        L.draw();
        return performance.now() - t0;
    });
    // Hover must work at this size too (the hit-test index is built on the first move), and
    // the tooltip carries the tensor's fields from the layout view.
    const pt = await page.evaluate(() => window.__tpuplan.layout.screenPoint(0));
    await page.locator('#layout-canvas').scrollIntoViewIfNeeded();
    const box = await page.locator('#layout-canvas').boundingBox();
    await page.mouse.move(box.x + pt.x, box.y + pt.y);
    await page.waitForSelector('#layout-tip:not(.hidden)');
    const tip = await page.textContent('#layout-tip');
    const sv = t.views.summary || {}, lv = t.views.layout || {};
    console.log(`# 100k buffers (${(json.length / 1e6).toFixed(1)} MB result; stored in ${stored} ms): first paint ${t.first} ms after navigation start; ` +
        `summary view ${(sv.bytes / 1e3).toFixed(0)} kB complete at ${sv.end} ms (server ${sv.wait} ms), layout view ${(lv.bytes / 1e6).toFixed(1)} MB complete at ${lv.end} ms (server ${lv.wait} ms); ` +
        `parsed ${t.fetched} ms, layout drawn ${t['layout-drawn']} ms, table ${t.table} ms; redraw ${redraw.toFixed(0)} ms; ${t.drawn} buffers drawn; load average ${loadavg()[0].toFixed(1)}`);
    writeFileSync(join(artifacts, 'first-paint-100k.json'), JSON.stringify({ ...t, stored_ms: stored, redraw_ms: redraw, loadavg: loadavg()[0] }) + '\n');
    assert(ink > 50000, 'the 100k chart is blank');
    assert(tip.includes(r.tensors[0].name) && tip.includes(r.tensors[0].shape), 'tooltip: ' + tip);
    assert(urls.every((u) => /[?&]view=(summary|layout)$/.test(u)), 'the whole result was fetched: ' + urls.join(' '));
    assert(sv.bytes < 200e3, `summary view is ${sv.bytes} bytes`);
    assert((await page.$$('#pad-table tbody tr')).length === 200, 'padding table not filled');
    // The goal is a first paint (page, both views from the database, parse, draw) under 2 s;
    // that is a benchmark figure, printed above and kept in tests/artifacts/, not a test
    // assertion: a 2 s limit failed at random on a busy runner (2.35 s during a full CI run,
    // 1.9 s alone). A return to the whole-result path (4-13 s) is caught by the views-only
    // check above; this bound, ten times the goal and scaled by load beyond the cores, only
    // catches a pathological slowdown.
    const limit = 20000 * Math.max(1, loadavg()[0] / cpus().length);
    assert(t.first < limit, `first paint ${t.first} ms after navigation start (limit ${limit.toFixed(0)} ms)`);
    await page.context().close();
});

test('a plan still running is polled until it is done: the plan page and the diff page wait, then draw it', async () => {
    // Stored as running (as a worker leaves it while it plans), then finished as the worker
    // finishes it (the new version changes the ETag the polls revalidate against): both pages
    // poll its summary view (pollPlan in util.js, Retry-After honoured) and draw the plan once
    // it is done, without a reload.
    const r = makeResult(50);
    const id = 'AAAAAAAAAAAAAAAAAAAAAC';
    const psql = (cmds, input) => execFileSync('psql', [process.env.DATABASE_URL, '-v', 'ON_ERROR_STOP=1', '-q', ...cmds.flatMap((c) => ['-c', c])], { input, maxBuffer: 1 << 20 });
    psql([`INSERT INTO plans (id, name, chip, source_format, status, input, manage_token_hash, tensors) VALUES ('${id}', 'polled', 'v5e', 'json', 'running', '\\x00', '\\x${'00'.repeat(32)}', ${r.tensors.length})`]);
    const page = await newPage();
    const diff = await newPage();
    await page.goto(`${base}/p/${id}`);
    await diff.goto(`${base}/d/${state.diffIds[0]}/${id}`);
    await page.waitForFunction(() => /^Plan is running… \(\d+ s\)$/.test(document.querySelector('#loading-text').textContent), null, { timeout: 10000 });
    await diff.waitForFunction(() => /^A plan is running… \(\d+ s\)$/.test(document.querySelector('#loading-text').textContent), null, { timeout: 10000 });
    const csv = (v) => '"' + String(v).replace(/"/g, '""') + '"';
    psql(['CREATE TEMP TABLE fin (result json, result_summary json, result_layout json)', 'COPY fin FROM STDIN (FORMAT csv)',
        `UPDATE plans SET status = 'done', version = version + 1, result = fin.result, result_summary = fin.result_summary, result_layout = fin.result_layout FROM fin WHERE plans.id = '${id}'`],
    [JSON.stringify(r), JSON.stringify(summaryView(r)), JSON.stringify(layoutView(r))].map(csv).join(',') + '\n');
    for (const p of [page, diff])
        await p.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    assert((await page.evaluate(() => window.__tpuplan.cols.name.length)) === r.tensors.length, 'the polled plan page drew another plan');
    assert((await diff.evaluate(() => window.__tpuplan.diff.summary.tensors_after)) === r.tensors.length, 'the polled diff page compared another plan');
    await page.context().close();
    await diff.context().close();
});

test('under --base-path /tpuplan the dashboard uploads, lists and shows plans with their expiry date, asking for nothing outside it', async () => {
    assert(prefixed && prefixed.endsWith('/tpuplan'), 'run.sh passes no prefixed server: ' + prefixed);
    const page = await newPage();
    const outside = [];
    page.on('request', (req) => {
        const u = new URL(req.url());
        if (!u.pathname.startsWith('/tpuplan/')) outside.push(u.pathname);
    });
    await page.goto(prefixed + '/');
    await page.waitForFunction(() => /usable HBM/.test(document.querySelector('#chip').textContent));
    const css = await page.evaluate(() => [...document.styleSheets].reduce((n, s) => n + s.cssRules.length, 0));
    assert(css > 10, `stylesheet rules ${css}`);
    await pickFile(page, fixture('model.json'), /model description/);
    await page.click('#submit');
    await waitPlanPage(page);
    assert(new URL(page.url()).pathname.startsWith('/tpuplan/p/'), 'plan page at ' + page.url());
    assert((await page.textContent('#plan-name')) === model.name, 'plan name');
    // --retain 30d: the expiry date is 30 days after creation, to the minute.
    const expires = await page.textContent('#plan-expires');
    const want = new Date(Date.now() + 30 * 86400e3).toISOString().replace('T', ' ').slice(0, 10);
    assert(expires.startsWith('expires ' + want) && / UTC$/.test(expires), `expiry shown: ${expires} (want ${want})`);
    assert(/v5e|v4|v5p|v6e/.test(await page.textContent('#cards')), 'summary cards empty');
    const id = new URL(page.url()).pathname.split('/').pop();
    await page.click('a.brand');
    await page.waitForURL(prefixed + '/');
    // The list holds the plan just made, linked under the base path.
    await page.waitForFunction(() => document.querySelector('#recent a[href]'));
    const recent = await page.$$eval('#recent a[href]', (as) => as.map((a) => a.getAttribute('href')));
    assert(recent.includes('/tpuplan/p/' + id) && recent.every((h) => h.startsWith('/tpuplan/p/')), 'recent links: ' + recent.slice(0, 3));
    assert(outside.length === 0, 'requests outside the base path: ' + outside.slice(0, 5).join(' '));
    await page.context().close();
});

test(`the Kernels (VMEM) panel: a bar per kernel against the limit and physical lines, operands, suggestions; a kernel named ${XSS} stays text`, async () => {
    assert(await state.page.$eval('#kernels-panel', (n) => n.classList.contains('hidden')), 'the panel shows for a model without kernels');
    const page = await newPage();
    await page.goto(base + '/');
    const blk = (name, block, dtype, map) => ({ name, block, array: [4096, 4096], dtype, index_map: map });
    const body = JSON.stringify({
        name: 'kernels', chip: 'v6e', tensors: [],
        kernels: [
            { name: 'fits', grid: [8, 8, 8], inputs: [blk('x', [512, 512], 'bf16', [0, 2]), blk('y', [512, 512], 'bf16', [2, 1])], outputs: [blk('o', [512, 512], 'f32', [0, 1])], scratch: [{ name: 'acc', shape: [512, 512], dtype: 'f32' }], flops: 268435456 },
            { name: XSS, grid: [2, 2, 2], inputs: [blk('x', [2048, 2048], 'f32', [0, 2]), blk('y', [2048, 2048], 'f32', [2, 1])], outputs: [blk('o', [2048, 2048], 'f32', [0, 1])], internal_scratch_bytes: 1048576 },
        ],
    });
    const id = await page.evaluate(async (b) => {
        const res = await fetch('/api/v1/plans', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=20' }, body: b });
        return (await res.json()).id;
    }, body);
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    assert(!(await page.$eval('#kernels-panel', (n) => n.classList.contains('hidden'))), 'the panel is hidden');
    const cards = await page.$$eval('#kernels .kernel', (ns) => ns.map((n) => ({
        name: n.querySelector('.kernel-name').textContent, over: n.classList.contains('over'),
        segs: n.querySelectorAll('.kbar-seg').length, lines: n.querySelectorAll('.kbar-line').length,
        rows: n.querySelectorAll('table.kernel-ops tbody tr').length,
        sugg: [...n.querySelectorAll('.kernel-suggestions li')].map((li) => li.dataset.kind + ': ' + li.textContent),
        error: n.querySelector('.kernel-error')?.textContent || '',
        limitLeft: parseFloat(n.querySelector('.kline-limit').style.left.replace(/^calc\(/, '')),
    })));
    assert(cards.length === 2, `${cards.length} kernel cards`);
    const [over, fits] = cards; // over-limit kernels are drawn first
    assert(over.name === XSS && over.over && !fits.over, 'names or order: ' + cards.map((c) => c.name).join(', '));
    // 3 operand segments + the margin; the scoped limit (32 MiB) and physical (128 MiB) lines
    assert(over.segs === 4 && over.lines === 2 && over.rows === 3, `over card: ${JSON.stringify(over)}`);
    assert(fits.segs === 4 && fits.lines === 2 && fits.rows === 4, `fits card: ${JSON.stringify(fits)}`);
    // 2 x 3 x 16 MiB + 1 MiB margin = 97 MiB on a 128 MiB scale: the limit line sits at 25 %
    assert(Math.abs(over.limitLeft - 25) < 0.01, 'limit line at ' + over.limitLeft);
    assert(over.error.includes(`kernel "${XSS}": Ran out of memory in memory space vmem. Scoped allocation with size 97.00M and limit 32.00M exceeded scoped vmem limit by 65.00M.`), 'error: ' + over.error);
    assert(over.sugg.some((x) => x.startsWith('blocks: ') && /HBM traffic/.test(x)), 'suggestions: ' + over.sugg.join(' | '));
    assert(over.sugg.some((x) => x.startsWith('raise_limit: ') && x.includes('--xla_tpu_scoped_vmem_limit_kib=99329')), 'suggestions: ' + over.sugg.join(' | '));
    assert((await page.evaluate(() => document.querySelectorAll('img, b').length)) === 0, 'markup from a kernel name became an element');
    assert(/2 kernels, 1 over the VMEM limit/.test(await page.textContent('#kernels-note')), 'note');
    await page.waitForTimeout(200);
    assert(state.dialogs === 0, `${state.dialogs} dialogs opened`);
    await page.context().close();
});

test('the what-if form plans the model again, and the new plan links back to its parent and the comparison', async () => {
    const page = await newPage();
    const parent = state.diffIds[0];
    await page.goto(`${base}/p/${parent}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    // a bad override is shown next to the form, naming it
    await page.fill('#wi-json', '{"dtype": {"logits": 7}}');
    await page.click('#wi-run');
    await page.waitForFunction(() => document.querySelector('#wi-error').textContent !== '');
    assert(/overrides\.dtype\.logits/.test(await page.textContent('#wi-error')), 'error: ' + (await page.textContent('#wi-error')));
    // activations in f32 (they are bf16): the five activations grow, the peak too
    await page.fill('#wi-json', '{"name": "browser-test-whatif"}');
    await page.selectOption('#wi-act', 'f32');
    await page.click('#wi-run');
    await page.waitForURL((u) => /\/p\/[A-Za-z0-9_-]{22}$/.test(u.pathname) && !u.pathname.endsWith(parent), { timeout: 30000 });
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const child = new URL(page.url()).pathname.split('/').pop();
    assert((await page.textContent('#plan-name')) === 'browser-test-whatif', 'name: ' + (await page.textContent('#plan-name')));
    assert((await page.getAttribute('#parent-link', 'href')) === '/p/' + parent, 'parent link');
    assert((await page.getAttribute('#compare-link', 'href')) === `/d/${parent}/${child}`, 'compare link');
    // planned on the worker pool, the plan records the overrides that made it
    const ov = await page.textContent('#whatif-overrides');
    assert(ov === '{"name":"browser-test-whatif","dtype":{"activation":"f32"}}', 'overrides: ' + ov);
    await page.click('#compare-link');
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready && window.__tpuplan.diff, null, { timeout: 30000 });
    const d = await page.evaluate(() => window.__tpuplan.diff);
    assert(d.by_kind.activation.padded_bytes_delta > 0 && d.summary.changed >= 4 && d.b.name === 'browser-test-whatif', 'diff: ' + JSON.stringify(d.summary));
    await page.screenshot({ path: join(artifacts, 'whatif-diff.png'), fullPage: false });
    await page.context().close();
});

test('the diff page works under a base path (behind a reverse proxy)', async () => {
    const ids = state.diffIds;
    assert(ids && prefixed, 'no diff from the earlier test, or no prefixed server');
    const page = await newPage();
    await page.goto(`${prefixed}/d/${ids[0]}/${ids[1]}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    assert((await page.$$('#delta-table tbody tr')).length === 6, 'delta rows under the base path');
    const href = await page.getAttribute('#link-a', 'href');
    assert(href === new URL(prefixed).pathname + '/p/' + ids[0], 'link to plan a: ' + href);
    await page.context().close();
});

test('under --require-key the upload form asks for the API key on the 401, sends it as Authorization: Bearer (submit and delete) and keeps it for the tab only', async () => {
    assert(keyed && /^tpk_/.test(apiKey || ''), 'run.sh passes no --require-key server and key');
    const page = await newPage();
    const isPost = (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v1/plans';
    await page.goto(keyed + '/');
    assert(await page.isHidden('#api_key-field'), 'the API key field is shown before the server asked for a key');
    await pickFile(page, fixture('model.json'), /model description/);
    let answered = page.waitForResponse(isPost);
    await page.click('#submit');
    let res = await answered;
    assert(res.status() === 401 && !res.request().headers().authorization, `first submission: ${res.status()}, ${res.request().headers().authorization}`);
    await page.waitForSelector('#api_key-field:not(.hidden)', { timeout: 5000 });
    const err = await page.textContent('#err-api_key');
    assert(/API key/.test(err), 'the 401 is not shown at the key field: ' + JSON.stringify(err));
    assert((await page.textContent('#err-file')) === '' && (await page.textContent('#err-general')) === '', 'the 401 shown elsewhere too');
    // A key the server does not know: 401 again, at the same field.
    await page.fill('#api_key', 'tpk_AAAAAAAA_' + 'A'.repeat(43));
    answered = page.waitForResponse(isPost);
    await page.click('#submit');
    res = await answered;
    assert(res.status() === 401 && res.request().headers().authorization === 'Bearer tpk_AAAAAAAA_' + 'A'.repeat(43), 'unknown key: ' + res.status());
    await page.waitForFunction(() => /API key/.test(document.querySelector('#err-api_key').textContent), null, { timeout: 5000 });
    // The key: the plan is accepted and its page opens.
    await page.fill('#api_key', apiKey);
    answered = page.waitForResponse(isPost);
    await page.click('#submit');
    res = await answered;
    assert(res.status() === 201 || res.status() === 202, 'with the key: ' + res.status());
    assert(res.request().headers().authorization === 'Bearer ' + apiKey, 'the key is not sent as Authorization: Bearer');
    await waitPlanPage(page);
    assert((await page.textContent('#plan-name')) === model.name, 'plan name');
    // Delete under --require-key takes the key that created the plan, not the manage token.
    const planPage = page.url();
    const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE');
    state.confirms = 1;
    await Promise.all([page.waitForURL(keyed + '/'), page.click('#delete')]);
    res = await deleted;
    assert(res.status() === 204 && res.request().headers().authorization === 'Bearer ' + apiKey, `delete: ${res.status()}`);
    const gone = await page.evaluate(async (u) => (await fetch(u.replace('/p/', '/api/v1/plans/'))).status, planPage);
    assert(gone === 404 || gone === 410, 'the deleted plan still answers ' + gone);
    // Kept for this tab (sessionStorage): the upload page shows it again, filled in; never in localStorage.
    await page.goto(keyed + '/');
    assert(await page.isVisible('#api_key-field'), 'the key field is hidden again in the same tab');
    assert((await page.inputValue('#api_key')) === apiKey, 'the key is not kept for the tab');
    assert((await page.evaluate(() => JSON.stringify(localStorage).includes('tpk_'))) === false, 'the key is in localStorage');
    await page.context().close();
    // A new context (a new tab of another session) starts without it.
    const fresh = await newPage();
    await fresh.goto(keyed + '/');
    assert(await fresh.isHidden('#api_key-field'), 'a fresh session shows the key field unasked');
    await fresh.context().close();
});

test('From a model config: a preset, a changed batch, a link that reopens the same plan, a batch what-if', async () => {
    const page = await newPage();
    const ready = () => page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    // the upload page links to the form; the form is filled from its address
    await page.goto(base + '/');
    await page.click('#recipe-link');
    await ready();
    await page.goto(base + '/recipe.html?preset=gpt2&seq=1024&chip=v5e');
    await ready();
    assert((await page.inputValue('#preset')) === 'gpt2' && (await page.inputValue('#seq')) === '1024' && (await page.inputValue('#chip')) === 'v5e', 'not filled from the address');
    assert(/GPT2LMHeadModel, 12 layers, hidden 768; config.json: https:\/\/huggingface.co\/openai-community\/gpt2/.test(await page.textContent('#preset-hint')), 'preset hint: ' + (await page.textContent('#preset-hint')));
    // a bad batch is refused next to its field, in the planner's words
    await page.fill('#batch', '0');
    await page.click('#submit');
    await page.waitForFunction(() => document.querySelector('#err-batch').textContent !== '');
    assert(/train\.batch: must be a whole number from 1/.test(await page.textContent('#err-batch')), 'batch error: ' + (await page.textContent('#err-batch')));
    // batch 16: the address follows the form
    await page.fill('#batch', '16');
    await page.waitForFunction(() => new URLSearchParams(location.search).get('batch') === '16');
    const link = await page.evaluate(() => location.href);
    assert(new URL(link).searchParams.get('batch') === '16' && new URL(link).searchParams.get('preset') === 'gpt2', 'address: ' + link);
    await page.click('#submit');
    await waitPlanPage(page);
    const first = await page.evaluate(() => window.__tpuplan.result);
    assert(first.recipe.model.parameters === 124439808 && first.recipe.train.batch === 16 && first.recipe.train.seq === 1024, 'recipe: ' + JSON.stringify(first.recipe.train));
    assert(await page.isVisible('#recipe-panel'), 'no recipe panel');
    assert(/124,439,808 parameters \(published 124,439,808\)/.test(await page.textContent('#recipe-model')), 'model line: ' + (await page.textContent('#recipe-model')));
    assert(/batch 16 · seq 1024/.test(await page.textContent('#recipe-run')), 'run line: ' + (await page.textContent('#recipe-run')));
    // full remat keeps the stacked layer inputs: 12 x 16 x 1024 x 768 bf16 = 301,989,888 B
    const x = await page.evaluate(() => { const c = window.__tpuplan.cols; const i = c.name.indexOf('layers.x'); return i < 0 ? -1 : c.logical_bytes[i]; });
    assert(x === 301989888, 'layers.x: ' + x);
    const rows = await page.$$eval('#recipe-bytes tbody tr td:first-child', (tds) => tds.map((t) => t.textContent));
    assert(rows.includes('weights') && rows.includes('optimizer_state') && rows.includes('saved_activations'), 'categories: ' + rows);
    const firstId = new URL(page.url()).pathname.split('/').pop();
    await page.context().close();

    // the link, in a fresh browser: the same form, the same plan
    const again = await newPage();
    await again.goto(link);
    await again.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    assert((await again.inputValue('#batch')) === '16' && (await again.inputValue('#preset')) === 'gpt2', 'the link did not reopen the form as it was');
    await again.click('#submit');
    await waitPlanPage(again);
    const second = await again.evaluate(() => window.__tpuplan.result);
    assert(second.summary.peak_bytes === first.summary.peak_bytes && second.summary.padded_bytes === first.summary.padded_bytes, `not the same plan: ${second.summary.peak_bytes} vs ${first.summary.peak_bytes}`);

    // the plan page's what-if takes a recipe's batch, and hides the tensor patterns
    assert(await again.isVisible('#wi-batch'), 'no batch in the what-if form');
    assert(await again.isHidden('#wi-remat'), 'a tensor pattern offered on a recipe');
    await again.fill('#wi-batch', '32');
    const parent = new URL(again.url()).pathname.split('/').pop();
    await again.click('#wi-run');
    await again.waitForURL((u) => /\/p\/[A-Za-z0-9_-]{22}$/.test(u.pathname) && !u.pathname.endsWith(parent), { timeout: 30000 });
    await again.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const child = await again.evaluate(() => window.__tpuplan.result);
    assert(child.recipe.train.batch === 32, 'what-if batch: ' + child.recipe.train.batch);
    assert((await again.getAttribute('#parent-link', 'href')) === '/p/' + parent, 'parent link');
    assert(parent !== firstId, 'the second submission reused the first plan');
    await again.screenshot({ path: join(artifacts, 'recipe-plan.png'), fullPage: false });
    await again.context().close();
});

test("From a model config: a config.json of one's own, chosen as a file, plans with its own count", async () => {
    const page = await newPage();
    await page.goto(base + '/recipe.html?batch=4&seq=2048&fsdp=4&chip=v5p');
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    await page.selectOption('#source', 'config');
    assert(await page.isVisible('#config') && await page.isHidden('#preset'), 'the config box is not shown');
    await page.setInputFiles('#config-file', join(here, '../data/recipes/configs/llama-3.1-8b.config.json'));
    await page.waitForFunction(() => document.querySelector('#config').value.includes('LlamaForCausalLM'));
    const url = await page.evaluate(() => location.href);
    assert(!new URL(url).searchParams.has('preset') && new URL(url).searchParams.get('fsdp') === '4', 'address: ' + url);
    await page.click('#submit');
    await waitPlanPage(page);
    const r = await page.evaluate(() => window.__tpuplan.result);
    assert(r.recipe.model.parameters === 8030261248 && r.recipe.model.preset === null, 'model: ' + JSON.stringify(r.recipe.model));
    assert(r.recipe.mesh.fsdp === 4 && r.recipe.devices === 4 && r.chip.name === 'v5p', 'mesh or chip: ' + JSON.stringify(r.recipe.mesh));
    await page.context().close();
});

// `tpuplan fit RECIPE --maximize batch ARGS` for the recipe the frontier test searches (or
// recipe), and its text table: {line name: [most fits, peak, next, peak, over by]},
// "(recipe)" without a sweep.
const FIT_RECIPE = join(here, '../data/recipes/llama-3.1-8b-fsdp16.json');
function fitCli(args, format = 'text', recipe = FIT_RECIPE) {
    return execFileSync(join(here, '../../bin/tpuplan'), ['fit', recipe, '--maximize', 'batch', '--format', format, ...args], { encoding: 'utf8' });
}
function fitRows(args, recipe) {
    const rows = {};
    for (const line of fitCli(args, 'text', recipe).split('\n').slice(4)) {
        const c = line.trim().split(/\s+/);
        if (c.length === 6) rows[c[0]] = c.slice(1);
    }
    return rows;
}
// The panel's sentence for a CLI row, in the CLI's words.
function fitSentence(name, r) {
    return `${name}: ${r[0] === 'none' ? 'most fits none' : `most fits ${r[0]}, peak ${r[1]}`}; next ${r[2]}, peak ${r[3]}, over by ${r[4]}.`;
}

// Runs the panel's form as it stands; resolves to the finished search's id once it is drawn.
async function runFrontier(page) {
    const before = await page.evaluate(() => window.__tpuplan.frontier?.id || null);
    await page.click('#fr-run');
    await page.waitForFunction((b) => {
        const f = window.__tpuplan.frontier;
        return f && f.id !== b && !document.querySelector('#fr-result').classList.contains('hidden');
    }, before, { timeout: 60000 });
    return page.evaluate(() => window.__tpuplan.frontier.id);
}

// The chart as drawn: per line its name, points (x, fits) and ringed largest that fits.
async function frontierChart(page) {
    return page.$$eval('#fr-chart svg .fr-series', (gs) => gs.map((g) => ({
        value: g.dataset.value,
        points: [...g.querySelectorAll('.fr-pt')].map((p) => [Number(p.dataset.x), p.classList.contains('fits')]),
        max: g.querySelector('.fr-max') ? Number(g.querySelector('.fr-max').dataset.x) : null,
    })));
}

test('the most that fits on a recipe plan: tpuplan fit\'s answer, its table, a chart line per swept value, a link that reopens it, a refusal beside its field, the largest planned as a what-if', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    const id = await page.evaluate(async (b) => {
        const res = await fetch('/api/v1/plans', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' }, body: b });
        return (await res.json()).id;
    }, readFileSync(FIT_RECIPE, 'utf8'));
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    assert(await page.isVisible('#frontier-panel'), 'no panel on a recipe plan');
    const fields = await page.$$eval('#fr-maximize option', (o) => o.map((x) => x.value));
    assert(JSON.stringify(fields) === '["batch","seq","microbatches"]', 'a training step maximizes: ' + fields);

    // Without a sweep: the CLI's figures in its words. The recipe fits a batch of 32 (the
    // example of server/planner/RESULT.md#the-frontier), in 12 plans: 1 ... 64 doubling, then
    // 33 ... 48 halving the gap.
    const cli = JSON.parse(fitCli([], 'json')).frontier;
    const row = fitRows([])['(recipe)'];
    assert(row && row[0] === '32' && cli.lines[0].max_fit === 32 && cli.lines[0].probes.length === 12, 'tpuplan fit: ' + JSON.stringify([row, cli.lines[0].probes.length]));
    await page.selectOption('#fr-maximize', 'batch');
    const first = await runFrontier(page);
    assert(new URL(page.url()).searchParams.get('frontier') === first, 'the address does not carry the search: ' + page.url());
    const said = await page.$$eval('#fr-answer .fr-sentence', (s) => s.map((x) => x.textContent));
    assert(said.length === 1 && said[0] === fitSentence('train.batch', row), 'answer: ' + JSON.stringify(said) + ' vs ' + fitSentence('train.batch', row));
    const cells = await page.$$eval('#fr-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].slice(0, 6).map((c) => c.textContent)));
    assert(JSON.stringify(cells) === JSON.stringify([['(recipe)', ...row]]), 'table: ' + JSON.stringify(cells));
    let chart = await frontierChart(page);
    const want = cli.lines[0].probes.map((p) => [p.x, p.fits]);
    assert(chart.length === 1 && JSON.stringify(chart[0].points) === JSON.stringify(want) && chart[0].max === 32, 'chart: ' + JSON.stringify(chart));
    assert((await page.textContent('#fr-chart .fr-capacity text')) === 'capacity 15.75G', 'capacity line: ' + (await page.textContent('#fr-chart .fr-capacity text')));
    assert(/log2/.test(await page.textContent('#fr-chart .fr-axes')), 'probes from 1 to 64 are not on a log2 scale');
    assert(/^Peak against train\.batch/.test(await page.getAttribute('#fr-chart svg', 'aria-label')), 'no accessible name');

    // With a two-value remat sweep: a row, a sentence and a line each.
    const sweep = ['nothing_saveable', 'dots_saveable'];
    const rows = fitRows(['--sweep', 'train.remat=' + sweep.join(',')]);
    const cliSweep = JSON.parse(fitCli(['--sweep', 'train.remat=' + sweep.join(',')], 'json')).frontier;
    await page.selectOption('#fr-sweep', 'train.remat');
    for (const v of sweep) await page.check(`#fr-values input[value="${v}"]`);
    const second = await runFrontier(page);
    assert(second !== first && new URL(page.url()).searchParams.get('frontier') === second, 'address: ' + page.url());
    const said2 = await page.$$eval('#fr-answer .fr-sentence', (s) => s.map((x) => x.textContent));
    assert(JSON.stringify(said2) === JSON.stringify(sweep.map((v) => fitSentence('train.remat ' + v, rows[v]))), 'sweep answer: ' + JSON.stringify(said2));
    const cells2 = await page.$$eval('#fr-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].slice(0, 6).map((c) => c.textContent)));
    assert(JSON.stringify(cells2) === JSON.stringify(sweep.map((v) => [v, ...rows[v]])), 'sweep table: ' + JSON.stringify(cells2) + ' vs ' + JSON.stringify(rows));
    chart = await frontierChart(page);
    assert(JSON.stringify(chart.map((c) => c.value)) === JSON.stringify(sweep), 'lines: ' + JSON.stringify(chart.map((c) => c.value)));
    for (const [k, ln] of cliSweep.lines.entries())
        assert(JSON.stringify(chart[k].points) === JSON.stringify(ln.probes.map((p) => [p.x, p.fits])) && chart[k].max === ln.max_fit, `line ${sweep[k]}: ${JSON.stringify(chart[k])}`);
    const legend = await page.$$eval('#fr-legend li', (li) => li.map((x) => x.textContent));
    assert(legend.includes(sweep[0]) && legend.includes(sweep[1]) && legend.some((t) => /capacity/.test(t)), 'legend: ' + legend);
    await page.locator('#frontier-panel').screenshot({ path: join(artifacts, 'frontier.png') });


    // The link reopens the same search, form and all.
    await page.reload();
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready && window.__tpuplan.frontier, null, { timeout: 30000 });
    assert((await page.evaluate(() => window.__tpuplan.frontier.id)) === second, 'reloaded another search');
    assert(JSON.stringify(await page.$$eval('#fr-answer .fr-sentence', (s) => s.map((x) => x.textContent))) === JSON.stringify(said2), 'reloaded answer differs');
    assert((await page.inputValue('#fr-sweep')) === 'train.remat' && (await page.isChecked('#fr-values input[value="dots_saveable"]')), 'the form is not the search\'s');
    // The plan's searches, newest first; the older one opens from the list.
    await page.waitForSelector('#fr-history li:nth-child(2)');
    const listed = await page.$$eval('#fr-history a', (a) => a.map((x) => [x.dataset.id, x.getAttribute('aria-current')]));
    assert(JSON.stringify(listed) === JSON.stringify([[second, 'true'], [first, null]]), 'earlier searches: ' + JSON.stringify(listed));
    await page.click(`#fr-history a[data-id="${first}"]`);
    await page.waitForFunction((f) => window.__tpuplan.frontier.id === f && new URLSearchParams(location.search).get('frontier') === f, first);
    assert(JSON.stringify(await page.$$eval('#fr-answer .fr-sentence', (s) => s.map((x) => x.textContent))) === JSON.stringify(said), 'the older search');
    assert((await page.inputValue('#fr-sweep')) === '', 'the older search had no sweep');

    // A search the recipe refuses on the worker (its 16 sequences do not split into 32
    // microbatches) fails: the panel shows the job's error, and no result.
    await page.selectOption('#fr-maximize', 'microbatches');
    await page.click('#fr-run');
    await page.waitForFunction(() => document.querySelector('#fr-error').textContent !== '', null, { timeout: 30000 });
    const failed = new URL(page.url()).searchParams.get('frontier');
    const job = await page.evaluate(async (u) => (await fetch(u)).json(), `/api/v1/frontiers/${failed}`);
    assert(job.status === 'failed' && (await page.textContent('#fr-error')) === `The search failed: ${job.error.detail} (at ${job.error.where})` && (await page.isHidden('#fr-result')),
        'failed search: ' + (await page.textContent('#fr-error')) + ' for ' + JSON.stringify(job.error));

    // A swept value the recipe refuses: its row says why (tpuplan fit's words), and it has no line.
    const withBad = JSON.parse(fitCli(['--sweep', 'train.remat=full,bogus'], 'json')).frontier;
    const bad = withBad.lines[1].error;
    const third = await page.evaluate(async (u) => (await (await fetch(u, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ maximize: 'batch', sweep: { field: 'train.remat', values: ['full', 'bogus'] } }) })).json()).id, `/api/v1/plans/${id}/frontiers`);
    await page.goto(`${base}/p/${id}?frontier=${third}`);
    await page.waitForFunction((f) => window.__tpuplan && window.__tpuplan.frontier?.id === f, third, { timeout: 30000 });
    const badRow = await page.$$eval('#fr-table tbody tr[data-value="bogus"] td', (td) => td.map((x) => x.textContent));
    assert(/unknown policy "bogus"/.test(bad) && JSON.stringify(badRow) === JSON.stringify(['bogus', bad]), 'refused value: ' + JSON.stringify(badRow));
    assert(JSON.stringify((await frontierChart(page)).map((c) => c.value)) === '["full"]', 'a refused value has a line');
    assert(await page.isChecked('#fr-values input[value="bogus"]'), 'the form does not show the value asked');

    // A bad range: the API's refusal, beside the field it names.
    const problem = await page.evaluate(async (u) => (await fetch(u, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ maximize: 'batch', min: 50, max: 10 }) })).json(), `/api/v1/plans/${id}/frontiers`);
    await page.fill('#fr-min', '50');
    await page.fill('#fr-max', '10');
    await page.click('#fr-run');
    await page.waitForFunction(() => ['min', 'max'].some((f) => document.querySelector('#fr-err-' + f).textContent !== ''));
    const named = /^(query\.)?(min|lo)\b/.test(problem.field || problem.where || '') ? 'min' : 'max';
    assert((await page.textContent('#fr-err-' + named)) === problem.detail && (await page.textContent('#fr-error')) === '', `refusal: ${JSON.stringify(problem)} shown as "${await page.textContent('#fr-err-' + named)}"`);
    assert(await page.locator('#fr-' + named).evaluate((n) => n.classList.contains('invalid')), 'the field is not marked');
    // A line's largest that fits, planned as a what-if: its peak is the search's.
    assert((await page.getAttribute('#fr-table tr[data-value="full"] a.fr-plan', 'data-overrides')) === '{"recipe":{"train":{"remat":"full","batch":32}}}', 'plan it overrides');
    await page.click('#fr-table tr[data-value="full"] a.fr-plan');
    await page.waitForURL((u) => /\/p\/[A-Za-z0-9_-]{22}$/.test(u.pathname) && !u.pathname.endsWith(id), { timeout: 30000 });
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    const planned = await page.evaluate(() => window.__tpuplan.result);
    assert(planned.recipe.train.batch === 32 && planned.summary.peak_bytes === withBad.lines[0].max_fit_peak_bytes, 'the planned largest: ' + JSON.stringify([planned.recipe.train.batch, planned.summary.peak_bytes]));
    await page.context().close();

    // A serving step maximizes its own fields; its context starts at one prefill chunk (512),
    // which a shorter context cannot hold.
    const serveRecipe = join(here, '../data/recipes/gemma-2-9b-serve-int8.json');
    const serve = await planPage(readFileSync(serveRecipe, 'utf8'), '', 'application/json');
    assert(JSON.stringify(await serve.$$eval('#fr-maximize option', (o) => o.map((x) => x.value))) === '["context","sequences"]', 'a serving step');
    assert((await serve.inputValue('#fr-min')) === '512', 'context from: ' + (await serve.inputValue('#fr-min')));
    await runFrontier(serve);
    const ctx = fitRows(['--maximize', 'context', '--min', '512'], serveRecipe)['(recipe)'];
    const ctxSaid = await serve.textContent('#fr-answer .fr-sentence');
    assert(ctxSaid === fitSentence('serve.context', ctx), 'context answer: ' + ctxSaid + ' vs ' + fitSentence('serve.context', ctx));
    // Another plan's search, by a link edited by hand: not drawn here, linked to its plan.
    await serve.goto(serve.url().replace(/\?.*$/, '') + '?frontier=' + first);
    await serve.waitForFunction(() => document.querySelector('#fr-error a'), null, { timeout: 30000 });
    assert((await serve.getAttribute('#fr-error a', 'href')) === `/p/${id}?frontier=${first}` && (await serve.isHidden('#fr-result')), 'another plan\'s search: ' + (await serve.textContent('#fr-error')));
    await serve.context().close();
    // A pipelined batch splits into 8 pipeline microbatches: its search steps by 8 (and only
    // while the batch is the field searched).
    const ppRecipe = join(here, '../data/recipes/llama-3.1-70b-pipeline.json');
    const pp = await planPage(readFileSync(ppRecipe, 'utf8'), '', 'application/json');
    const bounds = () => Promise.all(['#fr-min', '#fr-step'].map((b) => pp.inputValue(b)));
    assert(JSON.stringify(await bounds()) === '["8","8"]', 'pipelined batch bounds: ' + (await bounds()));
    await pp.selectOption('#fr-maximize', 'seq');
    assert(JSON.stringify(await bounds()) === '["",""]', 'seq keeps the batch bounds: ' + (await bounds()));
    await pp.selectOption('#fr-maximize', 'batch');
    await runFrontier(pp);
    const ppRow = fitRows(['--min', '8', '--step', '8'], ppRecipe)['(recipe)'];
    assert((await pp.textContent('#fr-answer .fr-sentence')) === fitSentence('train.batch', ppRow), 'pipelined answer: ' + (await pp.textContent('#fr-answer .fr-sentence')));
    await pp.context().close();
    const json = await planPage(JSON.stringify(model), '', 'application/json');
    assert(await json.isHidden('#frontier-panel'), 'a JSON model plan shows the panel');
    await json.context().close();
});

test('a chip sweep on the most that fits: each line against its own chip, a capacity line and a capacity column each, as tpuplan fit says', async () => {
    const chipRows = {};
    for (const line of fitCli(['--sweep', 'chip=v5e,v6e']).split('\n').slice(4)) {
        const c = line.trim().split(/\s+/);
        if (c.length === 8 && c[6] === 'capacity') chipRows[c[0]] = [...c.slice(1, 6), c[7]];
    }
    assert(chipRows.v5e?.[5] === '15.75G' && chipRows.v6e?.[5] === '31.25G', 'tpuplan fit --sweep chip: ' + JSON.stringify(chipRows));
    const page = await newPage();
    await page.goto(base + '/');
    const id = await page.evaluate(async (b) => {
        const res = await fetch('/api/v1/plans', { method: 'POST', headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' }, body: b });
        return (await res.json()).id;
    }, readFileSync(FIT_RECIPE, 'utf8'));
    await page.goto(`${base}/p/${id}`);
    await page.waitForFunction(() => window.__tpuplan && window.__tpuplan.ready, null, { timeout: 30000 });
    await page.selectOption('#fr-maximize', 'batch');
    await page.selectOption('#fr-sweep', 'chip');
    for (const v of ['v5e', 'v6e']) await page.check(`#fr-values input[value="${v}"]`);
    await runFrontier(page);
    const cells = await page.$$eval('#fr-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].slice(0, 7).map((c) => c.textContent)));
    assert(JSON.stringify(cells) === JSON.stringify(['v5e', 'v6e'].map((v) => [v, ...chipRows[v]])), 'chip table: ' + JSON.stringify(cells) + ' vs ' + JSON.stringify(chipRows));
    const caps = await page.$$eval('#fr-chart .fr-capacity text', (t) => t.map((x) => x.textContent));
    assert(JSON.stringify(caps) === '["capacity v5e 15.75G","capacity v6e 31.25G"]', 'capacity lines: ' + JSON.stringify(caps));
    assert(/capacity v5e 15\.75G, v6e 31\.25G/.test(await page.textContent('#fr-answer .fr-head')), 'head: ' + (await page.textContent('#fr-answer .fr-head')));
    await page.close();
});

test('no page errors, console errors or CSP violations on any page', async () => {
    assert(state.problems.length === 0, state.problems.slice(0, 5).join(' | '));
});

// ---------------------------------------------------------------------------------------
// TPUPLAN_BROWSER_ONLY=regex runs a subset (for working on one test; later tests may need
// the plan the upload test makes).
const only = process.env.TPUPLAN_BROWSER_ONLY ? new RegExp(process.env.TPUPLAN_BROWSER_ONLY) : null;
if (only) tests.splice(0, tests.length, ...tests.filter((t) => only.test(t.name)));
console.log(`1..${tests.length}`);
let failed = 0;
for (const [i, t] of tests.entries()) {
    const t0 = Date.now();
    try {
        await t.fn();
        console.log(`ok ${i + 1} - ${t.name} (${Date.now() - t0} ms)`);
    } catch (err) {
        failed++;
        console.log(`not ok ${i + 1} - ${t.name}`);
        for (const line of String(err && err.stack ? err.stack : err).split('\n').slice(0, 6)) console.log('#   ' + line);
    }
}
await browser.close();
process.exit(failed ? 1 : 0);

// devserver.mjs - serves static/ like bin/tpuplan-server does (/, /p/{id}, static files) with
// synthetic plans from fixtures.mjs, for working on the dashboard without PostgreSQL:
//   node tests/browser/devserver.mjs [port]   then open http://127.0.0.1:port/p/demo
// Plan ids: "demo" (2,000 buffers), "big" (100,000), "xss" (hostile names). Not used by run.sh.

import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, extname, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeResult, summaryView, layoutView } from './fixtures.mjs';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../../static');
const port = Number(process.argv[2] || 8765);
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };
const plans = new Map();

function plan(id) {
    if (!plans.has(id)) {
        const n = id === 'big' ? 100000 : 2000;
        const r = makeResult(n, n > 10000 ? {} : { steps: 300, bands: 40 });
        if (id === 'xss') r.tensors[0].name = '<img src=x onerror=alert(1)>';
        plans.set(id, { id, name: r.model.name, chip: 'v5e', source_format: 'json', status: 'done', result: r, links: { self: '/api/v1/plans/' + id, share: '/p/' + id } });
    }
    return plans.get(id);
}

createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:";
    let m;
    if ((m = url.pathname.match(/^\/api\/v1\/plans\/([\w-]+)$/))) {
        const { result, ...p } = plan(m[1]);
        const view = url.searchParams.get('view');
        const doc = view === 'summary' ? { ...p, result: summaryView(result) } : view === 'layout' ? { ...p, layout: layoutView(result) } : { ...p, result };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify(doc));
    }
    if (url.pathname === '/api/v1/plans') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ items: [...plans.values()].map(({ result, ...p }) => ({ ...p, summary: result.summary })), next_cursor: null }));
    }
    let path = url.pathname === '/' ? 'index.html' : url.pathname.startsWith('/p/') ? 'plan.html' : normalize(url.pathname).replace(/^\/+/, '');
    if (path.includes('..')) path = 'missing';
    try {
        const body = await readFile(join(root, path));
        res.writeHead(200, { 'Content-Type': types[extname(path)] || 'application/octet-stream', 'Content-Security-Policy': csp, 'Referrer-Policy': 'no-referrer' });
        res.end(body);
    } catch {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('not found');
    }
}).listen(port, '127.0.0.1', () => console.log(`http://127.0.0.1:${port}/`));

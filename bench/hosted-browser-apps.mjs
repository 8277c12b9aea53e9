// The corpus apps and tasks of bench/hosted-browser.bench.mjs: each app's npm package served as it
// ships under /<package>/ on one loopback origin; per app, the ops a recording holds, the handwritten
// playwright-core script of the same task (the body of an async function of `page` and `URL`), and the
// output both must give.
import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { parse } from 'yaml';

export async function startApps(repo) {
  // The apps' packages, each served under /<package>/ on one loopback origin, as they ship.
  const PACKAGES = ['todomvc', 'jsonlint', 'jsonform'];
  const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png' };
  const site = createServer(async (req, res) => {
    const [, pkg, ...rest] = decodeURIComponent(new URL(req.url, 'http://x').pathname).split('/');
    if (!PACKAGES.includes(pkg)) return res.writeHead(404).end();
    const root = join(repo, 'node_modules', pkg);
    let path = normalize(join(root, ...rest));
    if (!path.startsWith(root + sep)) return res.writeHead(404).end();
    try {
      if ((await stat(path)).isDirectory()) path = join(path, 'index.html');
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(await readFile(path));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => site.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${site.address().port}`;

  // The tasks: the ops a recording holds (the hosted automations get them as captured ops, flowctl a
  // Recording made from them with `flowctl record`), the script's Playwright calls, and the output.
  const todoOps = parse(
    (await readFile(join(repo, 'test/fixtures/todomvc/ops.yaml'), 'utf8')).replaceAll('{{APP}}', `${origin}/todomvc/examples/vanillajs/index.html`),
  );
  const LINT_DOC = '{"name": "flowctl", "tags": ["a", "b"]}';
  const APPS = [
    {
      id: 'todomvc',
      app: 'TodoMVC (vanilla JS), `todomvc`',
      ops: todoOps.map(({ slot, ...op }) => op),
      output: { items: ['Buy oat milk', 'Write report'], done: ['Write report'], left: '1 item left' },
      script: `await page.goto(URL + '/todomvc/examples/vanillajs/index.html', { waitUntil: 'load' });
  const input = page.locator('#new-todo');
  for (const title of ['Buy milk', 'Write report', 'Call Bob']) { await input.fill(title); await input.press('Enter'); }
  await page.locator('#todo-list > li:nth-child(2) .toggle').check();
  await page.locator('#todo-list > li:nth-child(3)').hover();
  await page.locator('#todo-list > li:nth-child(3) .destroy').click();
  await page.locator('#todo-list > li:nth-child(1) label').dblclick();
  await page.locator('#todo-list > li.editing .edit').fill('Buy oat milk');
  await page.locator('#todo-list > li.editing .edit').press('Enter');
  await page.locator('#todo-list > li.editing').waitFor({ state: 'detached' });
  const text = (els) => els.map((el) => el.textContent.replace(/\\s+/g, ' ').trim());
  return {
    items: await page.locator('#todo-list > li label').evaluateAll(text),
    done: await page.locator('#todo-list > li.completed label').evaluateAll(text),
    left: (await page.locator('#todo-count').textContent()).replace(/\\s+/g, ' ').trim(),
  };`,
    },
    {
      id: 'jsonlint',
      app: 'JSON Lint, `jsonlint`',
      ops: [
        { kind: 'navigate', url: `${origin}/jsonlint/web/jsonlint.html` },
        { kind: 'fill', target: '#source', value: LINT_DOC },
        { kind: 'check', target: '#reformat' },
        { kind: 'click', target: '#button' },
        { kind: 'extract', target: '#result', name: 'verdict' },
        { kind: 'extract', target: '#result', attribute: 'class', name: 'verdict_class' },
      ],
      output: { verdict: 'JSON is valid!', verdict_class: 'pass' },
      script: `await page.goto(URL + '/jsonlint/web/jsonlint.html', { waitUntil: 'load' });
  await page.locator('#source').fill(${JSON.stringify(LINT_DOC)});
  await page.locator('#reformat').check();
  await page.locator('#button').click();
  await page.locator('#result', { hasText: /\\S/ }).waitFor();
  return { verdict: (await page.locator('#result').textContent()).trim(), verdict_class: await page.locator('#result').getAttribute('class') };`,
    },
    {
      id: 'jsonform',
      app: 'JSON Form (getting started example), `jsonform`',
      ops: [
        { kind: 'navigate', url: `${origin}/jsonform/example.html` },
        { kind: 'fill', target: 'input[name="name"]', value: 'Ada Lovelace' },
        { kind: 'fill', target: 'input[name="age"]', value: '36' },
        { kind: 'click', target: 'form [type="submit"]' },
        { kind: 'extract', target: '#res', name: 'greeting' },
      ],
      output: { greeting: 'Hello Ada Lovelace.You are 36.' },
      script: `await page.goto(URL + '/jsonform/example.html', { waitUntil: 'load' });
  await page.locator('input[name="name"]').fill('Ada Lovelace');
  await page.locator('input[name="age"]').fill('36');
  await page.locator('form [type="submit"]').click();
  await page.locator('#res', { hasText: /\\S/ }).waitFor();
  return { greeting: (await page.locator('#res').textContent()).replace(/\\s+/g, ' ').trim() };`,
    },
  ];
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const check = (app, how, output) => {
    // The extract of a textarea's value: the page's text as shown (normalised alike on both sides).
    const norm = (o) =>
      JSON.parse(JSON.stringify(o ?? {}), (_k, v) =>
        typeof v === 'string'
          ? v.replace(/\s+/g, ' ').trim()
          : v && typeof v === 'object' && !Array.isArray(v)
            ? Object.fromEntries(Object.entries(v).sort())
            : v,
      );
    if (!same(norm(output), norm(app.output))) throw new Error(`${app.id} ${how}: output ${JSON.stringify(output)}, expected ${JSON.stringify(app.output)}`);
  };

  return { origin, APPS, check, close: () => site.close() };
}

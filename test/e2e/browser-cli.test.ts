import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../helpers/cli.js';
import { SITE_DIR, startSite, type SiteServer } from '../helpers/site-server.js';

/** The spawned `flowctl` binary: record (and its refusals), compile, emit, lint, run and replay of a Recording. */

const CANARY = 'CANARY-cli-pw-93ab';
let site: SiteServer;
let project: string;
const seen: string[] = [];

async function cli(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(args, { cwd: project, env: { FLOWCTL_SECRET_PASSWORD: CANARY, ...env }, timeoutMs: 120_000 });
  seen.push(r.stdout, r.stderr);
  return r;
}

async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(join(e.parentPath, e.name));
  return out.sort();
}

beforeAll(async () => {
  site = await startSite({ password: CANARY });
  project = await tempProject('flowctl-browser-cli-');
  await mkdir(join(project, 'ops/files'), { recursive: true });
  await copyFile(join(SITE_DIR, 'ops/files/report.csv'), join(project, 'ops/files/report.csv'));
  const template = await readFile(join(SITE_DIR, 'ops/full.yaml'), 'utf8');
  await writeFile(join(project, 'ops/full.yaml'), template.replaceAll('{{SITE}}', site.url).replaceAll('{{PASSWORD}}', CANARY));
  await writeFile(join(project, 'outside.txt'), 'not yours');
});

afterAll(async () => {
  await site?.close();
});

describe('flowctl record refuses bad ops and writes nothing', () => {
  const cases: [string, string, string[], string][] = [
    ['an unknown kind', '[{"kind": "scroll", "target": "#a"}]', [], 'unknown kind "scroll"'],
    ['a missing target', '- kind: click\n', [], 'ops[0].target is required'],
    [
      'a slot named by both --input and --secret',
      `- {kind: fill, target: "#p", value: "${CANARY}", slot: pw}\n`,
      ['--input', 'pw', '--secret', 'pw'],
      'both --input and --secret',
    ],
    [
      'a --secret slot no op uses',
      `- {kind: fill, target: "#p", value: "${CANARY}", slot: pw}\n`,
      ['--secret', 'pw', '--secret', 'pin'],
      '--secret pin: no op uses',
    ],
    ['a file outside the ops folder', '- {kind: upload, target: "#f", files: ../outside.txt}\n', [], "outside the ops file's folder"],
    ['a YAML syntax error', `- {kind: fill, value: "${CANARY}" target: x}\n`, [], 'syntax error at line 1'],
  ];
  it.each(cases)('%s', async (_what, ops, flags, message) => {
    await writeFile(join(project, 'ops/bad.yaml'), ops);
    const before = await listTree(project);
    const r = await cli(['record', '--name', 'bad', '--task', 'bad ops', '--ops', 'ops/bad.yaml', ...flags, '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: expect.any(String), message: expect.stringContaining(message) });
    expect(await listTree(project)).toEqual(before);
    expect(r.stdout + r.stderr).not.toContain(CANARY);
  });

  it('needs --name, --task and --ops (live capture is unavailable)', async () => {
    const r = await cli(['record', '--name', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--task, --ops are required \(live capture is unavailable/);
  });
});

describe('a Recording through the CLI', () => {
  let digest: string;
  let runId: string;

  it('records, printing name, source_digest and path with --json', async () => {
    const r = await cli([
      'record',
      '--name',
      'shop',
      '--task',
      'Find books',
      '--ops',
      'ops/full.yaml',
      '--input',
      'user',
      '--input',
      'query',
      '--secret',
      'password',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { name: string; source_digest: string; path: string };
    expect(Object.keys(out).sort()).toEqual(['name', 'path', 'source_digest']);
    expect(out).toMatchObject({ name: 'shop', path: 'recordings/shop.json' });
    digest = out.source_digest;
    const stored = JSON.parse(await readFile(join(project, 'recordings/shop.json'), 'utf8'));
    expect(stored.source_digest).toBe(digest);
    expect(stored.inputs.password).toEqual({ type: 'string', secret: true });
    // Recording again from the same ops gives the same bytes.
    const again = await cli([
      'record',
      '--name',
      'shop',
      '--task',
      'Find books',
      '--ops',
      'ops/full.yaml',
      '--input',
      'user',
      '--input',
      'query',
      '--secret',
      'password',
      '--json',
    ]);
    expect(JSON.parse(again.stdout).source_digest).toBe(digest);
  });

  it('compiles, emits and lints by name', async () => {
    const compiled = await cli(['compile', 'shop', '--json']);
    expect(compiled.code, compiled.stderr).toBe(0);
    const spec = JSON.parse(compiled.stdout);
    expect(spec.steps).toHaveLength(15);
    expect(await readFile(join(project, 'out/shop.flowspec.json'), 'utf8')).not.toContain(CANARY);
    const emitted = await cli(['emit', 'shop', '--to', 'yaml']);
    expect(emitted.code).toBe(0);
    expect(emitted.stdout).toMatch(/tool: browser\/upload@1/);
    expect(emitted.stdout).toContain('value: ${inputs.password}');
    // The emitted YAML is an editable Flow that compiles to the very same FlowSpec.
    await mkdir(join(project, 'flows'), { recursive: true });
    await writeFile(join(project, 'flows/shop-edit.yaml'), emitted.stdout);
    const digestOf = (stderr: string) => /sha256:[0-9a-f]{64}/.exec(stderr)?.[0];
    const [fromRecording, fromYaml] = await Promise.all([cli(['compile', 'shop', '--check']), cli(['compile', 'flows/shop-edit.yaml', '--check'])]);
    expect(fromYaml.code, fromYaml.stderr).toBe(0);
    expect(digestOf(fromYaml.stderr)).toBe(digestOf(fromRecording.stderr));
    const linted = await cli(['lint', 'shop']);
    expect(linted.code).toBe(0);
    expect(linted.stderr).not.toContain('brittle-locator');
  });

  it('reports brittle locators of a Recording as style findings pointing into the file', async () => {
    await writeFile(
      join(project, 'ops/brittle.yaml'),
      [
        '- {kind: navigate, url: "http://127.0.0.1:1/"}',
        '- {kind: click, target: "#ember123"}',
        '- {kind: click, target: {xpath: "/html/body/div[2]/button"}}',
        '- {kind: extract, name: x, target: "body > div:nth-child(2) > ul > li:nth-child(3)"}',
        '',
      ].join('\n'),
    );
    expect((await cli(['record', '--name', 'brittle', '--task', 'fragile', '--ops', 'ops/brittle.yaml'])).code).toBe(0);
    const r = await cli(['lint', 'brittle']);
    expect(r.code).toBe(0);
    const findings = r.stderr.split('\n').filter((l) => l.includes('brittle-locator'));
    expect(findings).toHaveLength(3);
    expect(findings[0]).toMatch(
      /^recordings\/brittle\.json:\d+:\d+ warning brittle-locator: css=#ember123 uses the generated id "ember123".*\(ops\[1\]\.target\)$/,
    );
    expect(findings.join('\n')).toContain('absolute XPath');
    expect(findings.join('\n')).toContain('positional pseudo-classes');
    // Each finding points at its own line of the recording.
    expect(new Set(findings.map((f) => f.split(':')[1])).size).toBe(3);
  });

  it('runs in Chromium with the secret from the environment', async () => {
    const r = await cli(['run', 'shop', '--yes', '--json', '--input', 'user=carol']);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.status).toBe('succeeded');
    expect(run.output).toMatchObject({ welcome: 'Signed in as carol', results: ['Rust in Action', 'Learning Go'], uploaded: 'report.csv: 3 lines' });
    expect(site.logins.at(-1)).toEqual({ user: 'carol', ok: true });
    runId = run.id;
  });

  it('prints locator drift in the live output, with a hint to re-record', async () => {
    const renamed = await startSite({ password: CANARY, variant: 'drift-renamed' });
    try {
      const template = await readFile(join(SITE_DIR, 'ops/full.yaml'), 'utf8');
      await writeFile(join(project, 'ops/renamed.yaml'), template.replaceAll('{{SITE}}', renamed.url).replaceAll('{{PASSWORD}}', CANARY));
      const rec = await cli([
        'record',
        '--name',
        'shop-renamed',
        '--task',
        'Find books',
        '--ops',
        'ops/renamed.yaml',
        '--input',
        'user',
        '--input',
        'query',
        '--secret',
        'password',
      ]);
      expect(rec.code, rec.stderr).toBe(0);
      const r = await cli(['run', 'shop-renamed', '--yes', '--json', '--input', 'user=dave']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', output: { welcome: 'Signed in as dave' } });
      expect(r.stderr).toContain('click_4 drift: click: primary css=#login matched 0; fallback role=button[name="Sign in"] matched\n');
      expect(r.stderr.match(/hint: the page changed since shop-renamed was recorded; re-record it \(flowctl record --name shop-renamed /g)).toHaveLength(1);
    } finally {
      await renamed.close();
    }
  });

  it('replays with --verify without a browser', async () => {
    // A launch would fail: CHROMIUM_PATH points nowhere.
    const r = await cli(['replay', runId, '--verify', '--json'], { CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', output: { welcome: 'Signed in as carol' } });
  });

  it('leaks the secret nowhere on disk or on any stream', async () => {
    for (const file of await listTree(project)) {
      if (file.includes(`${join('ops', '')}`)) continue; // the ops files hold the typed password by design
      const bytes = await readFile(file);
      expect(bytes.includes(CANARY), file).toBe(false);
    }
    for (const text of seen) expect(text).not.toContain(CANARY);
  });
});

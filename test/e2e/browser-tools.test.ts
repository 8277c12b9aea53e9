import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { digestBytes, type Digest } from '../../src/canonical.js';
import { FlowError } from '../../src/errors.js';
import { createTestToolContext, type TestToolContext } from '../../src/tools/testing-context.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { startSite, type SiteServer, stepFailure } from '../helpers/site-server.js';

/** The browser tools one by one in real Chromium against the fixture site, with a hand-made run context. */

const PASSWORD = 'tools-canary-51c0';
let exec: PlaywrightExecutor;
let base: SiteServer;
let renamed: SiteServer;
let removed: SiteServer;
let project: string;
const tool = (name: string): Tool => exec.tools.find((t) => t.contract.ref === `browser/${name}`)!;

let runs = 0;
function newRun(over: Partial<ToolContext> = {}): TestToolContext & { artifactsPut: { digest: Digest; mediaType: string; bytes: Uint8Array }[] } {
  const artifactsPut: { digest: Digest; mediaType: string; bytes: Uint8Array }[] = [];
  const ctx = createTestToolContext({
    runId: `run-${++runs}`,
    cwd: project,
    timeoutMs: 60_000,
    artifacts: {
      async put(bytes, mediaType) {
        const digest = digestBytes(bytes);
        artifactsPut.push({ digest, mediaType, bytes });
        return digest;
      },
    },
    ...over,
  });
  return Object.assign(ctx, { artifactsPut });
}

async function login(ctx: ToolContext, site: SiteServer, user = 'alice'): Promise<void> {
  await tool('navigate').run({ url: `${site.url}/index.html` }, ctx);
  await tool('fill').run({ target: { css: '#username', fallbacks: [{ label: 'User name' }] }, value: user }, ctx);
  await tool('fill').run({ target: { css: '#password', fallbacks: [{ label: 'Password' }] }, value: PASSWORD, mask: true }, ctx);
  await tool('click').run({ target: { css: '#login', fallbacks: [{ role: 'button', name: 'Sign in' }] } }, ctx);
}

beforeAll(async () => {
  exec = createPlaywrightExecutor();
  [base, renamed, removed] = await Promise.all([
    startSite({ password: PASSWORD }),
    startSite({ password: PASSWORD, variant: 'drift-renamed' }),
    startSite({ password: PASSWORD, variant: 'drift-removed' }),
  ]);
  project = await mkdtemp(join(tmpdir(), 'flowctl-browser-'));
  await mkdir(join(project, 'docs'));
  await writeFile(join(project, 'docs/report.csv'), 'name,qty\nbolts,12\nnuts,30\n');
});

afterAll(async () => {
  await exec?.dispose();
  await Promise.all([base, renamed, removed].map((s) => s?.close()));
});

describe('browser tools on the fixture site', () => {
  it('declares the contracts of the issue', () => {
    // The first seven, unchanged (later versions and tools follow them: test/e2e/browser-interactions).
    expect(exec.tools.slice(0, 7).map((t) => `${t.contract.ref}@${t.contract.version} ${t.contract.capabilities.join('+')}`)).toEqual([
      'browser/navigate@1.0.0 browser',
      'browser/click@1.0.0 browser',
      'browser/fill@1.0.0 browser+secrets',
      'browser/select@1.0.0 browser+secrets',
      'browser/drag@1.0.0 browser',
      'browser/upload@1.0.0 browser+fs',
      'browser/extract@1.0.0 browser',
    ]);
  });

  it('runs every op kind, reports the page origin as the effect, and warns of nothing', async () => {
    const ctx = newRun();
    try {
      await login(ctx, base);
      expect(base.logins.at(-1)).toEqual({ user: 'alice', ok: true });
      await tool('fill').run({ target: '#search', value: 'o' }, ctx);
      expect(await tool('select').run({ target: { label: 'Category' }, value: 'Books' }, ctx)).toEqual({ matched: 'label="Category"', selected: ['books'] });
      expect(await tool('drag').run({ source: '#task-report', target: { testid: 'done' } }, ctx)).toEqual({
        source: 'css=#task-report',
        target: 'testid=done',
      });
      const up = (await tool('upload').run(
        { target: '#attachment', files: [{ path: 'docs/report.csv', digest: digestBytes('name,qty\nbolts,12\nnuts,30\n') }] },
        ctx,
      )) as {
        files: { name: string }[];
      };
      expect(up.files).toEqual([{ name: 'report.csv', digest: digestBytes('name,qty\nbolts,12\nnuts,30\n'), size: 26 }]);
      const extract = (args: object) => tool('extract').run(args, ctx);
      expect(await extract({ target: '#welcome' })).toEqual({ matched: 'css=#welcome', value: 'Signed in as alice' });
      expect(await extract({ target: '#results td.name', all: true })).toEqual({ matched: 'css=#results td.name', value: ['Rust in Action', 'Learning Go'] });
      expect(await extract({ target: '#done li', all: true })).toMatchObject({ value: ['Write report'] });
      expect(await extract({ target: '#upload-result' })).toMatchObject({ value: 'report.csv: 3 lines' });
      expect(await extract({ target: '#category', attribute: 'value' })).toMatchObject({ value: 'books' });
      expect(await extract({ target: { role: 'list', name: 'Done' }, attribute: 'id' })).toMatchObject({ value: 'done' });
      expect(await extract({ target: { xpath: '//h1' } })).toMatchObject({ value: 'Shelf' });
      expect(ctx.warnings).toEqual([]);
      expect(ctx.effects.length).toBe(15);
      expect(new Set(ctx.effects.map((e) => `${e.kind} ${e.target}`))).toEqual(new Set([`browser ${base.url}`]));
    } finally {
      await ctx.close();
    }
    expect(exec.stats().openContexts).toBe(0);
  });

  it('succeeds through fallbacks on the renamed copy, with a drift warning naming the locator that matched', async () => {
    const ctx = newRun();
    try {
      await login(ctx, renamed);
      const out = await tool('fill').run({ target: { css: '#search', fallbacks: [{ css: '#nope' }, { label: 'Search' }] }, value: 'Go' }, ctx);
      expect(out).toEqual({ matched: 'label="Search"' });
      const drift = ctx.warnings.filter((w) => w.code === 'drift');
      // username, password, login button, search box: every primary id was renamed.
      expect(drift).toHaveLength(4);
      expect(drift[3]).toMatchObject({
        code: 'drift',
        data: {
          matched: 'label="Search"',
          tried: [
            { locator: 'css=#search', count: 0 },
            { locator: 'css=#nope', count: 0 },
            { locator: 'label="Search"', count: 1 },
          ],
        },
      });
      expect(drift[2]!.data).toMatchObject({ matched: 'role=button[name="Sign in"]' });
      expect(await tool('extract').run({ target: { css: '#results td.name', fallbacks: [{ css: '[data-testid=results] td.name' }] }, all: true }, ctx)).toEqual(
        {
          matched: 'css=[data-testid=results] td.name',
          value: ['Learning Go', 'Go board'],
        },
      );
    } finally {
      await ctx.close();
    }
  });

  it('fails with locator_drift and the counts when the element was removed', async () => {
    const ctx = newRun();
    try {
      await login(ctx, removed);
      const err = await stepFailure(
        tool('fill').run({ target: { css: '#search', fallbacks: [{ label: 'Search' }, { testid: 'search' }] }, value: PASSWORD }, ctx),
      );
      expect(err.code).toBe('locator_drift');
      expect(err.data).toMatchObject({
        retryable: false,
        need: 'one',
        page: `${removed.url}/app.html`,
        tried: [
          { locator: 'css=#search', count: 0 },
          { locator: 'label="Search"', count: 0 },
          { locator: 'testid=search', count: 0 },
        ],
      });
      expect(err.message).toMatch(/tried css=#search: 0, label="Search": 0, testid=search: 0/);
      expect(JSON.stringify({ message: err.message, data: err.data })).not.toContain(PASSWORD);
    } finally {
      await ctx.close();
    }
  });

  it('treats several matches where one is needed as drift, and takes a unique fallback', async () => {
    const ctx = newRun();
    try {
      await login(ctx, base);
      const err = await stepFailure(tool('click').run({ target: 'li' }, ctx));
      expect(err.code).toBe('locator_drift');
      expect(err.data).toMatchObject({ tried: [{ locator: 'css=li', count: 2 }] });
      expect(await tool('click').run({ target: { css: 'li', fallbacks: [{ text: 'Review code' }] } }, ctx)).toEqual({ matched: 'text="Review code"' });
      expect(ctx.warnings.at(-1)).toMatchObject({
        code: 'drift',
        data: {
          tried: [
            { locator: 'css=li', count: 2 },
            { locator: 'text="Review code"', count: 1 },
          ],
        },
      });
    } finally {
      await ctx.close();
    }
  });

  it('refuses uploads outside the project folder and files that changed since recording', async () => {
    const ctx = newRun();
    try {
      await login(ctx, base);
      expect((await stepFailure(tool('upload').run({ target: '#attachment', files: ['../etc/passwd'] }, ctx))).code).toBe('upload_path_outside_root');
      expect((await stepFailure(tool('upload').run({ target: '#attachment', files: ['/etc/passwd'] }, ctx))).code).toBe('upload_path_outside_root');
      const changed = await stepFailure(tool('upload').run({ target: '#attachment', files: [{ path: 'docs/report.csv', digest: digestBytes('other') }] }, ctx));
      expect(changed.code).toBe('upload_digest_mismatch');
      expect((await stepFailure(tool('upload').run({ target: '#attachment', files: ['docs/missing.csv'] }, ctx))).code).toBe('upload_file_missing');
    } finally {
      await ctx.close();
    }
  });

  it('validates input against the contract', async () => {
    const ctx = newRun();
    try {
      expect((await stepFailure(tool('click').run({}, ctx))).code).toBe('invalid_tool_input');
      expect((await stepFailure(tool('click').run({ target: { name: 'b' } }, ctx))).code).toBe('invalid_tool_input');
      expect((await stepFailure(tool('navigate').run({ url: 'file:///etc/passwd' }, ctx))).code).toBe('invalid_tool_input');
      expect(ctx.effects).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  it('isolates concurrent runs: no cookies or storage cross', async () => {
    const a = newRun();
    const b = newRun();
    try {
      await Promise.all([login(a, base, 'ann'), login(b, base, 'bob')]);
      // A run's steps are sequential: each read settles the page first (the redirect's document and
      // its script), so the reads of one run go one after another; the two runs stay concurrent.
      const read = async (ctx: ToolContext) => {
        const values: string[] = [];
        for (const target of ['#welcome', '#visits', '#cookies']) values.push(((await tool('extract').run({ target }, ctx)) as { value: string }).value);
        return values;
      };
      const [ra, rb] = await Promise.all([read(a), read(b)]);
      expect(ra).toEqual(['Signed in as ann', '1', '1']);
      expect(rb).toEqual(['Signed in as bob', '1', '1']);
      expect(exec.stats().openContexts).toBe(2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    expect(exec.stats().openContexts).toBe(0);
  });

  it('closes the run context when a step times out and the run ends', async () => {
    const controller = new AbortController();
    const ctx = newRun({ signal: controller.signal, timeoutMs: 60_000 });
    try {
      await tool('navigate').run({ url: `${base.url}/index.html` }, ctx);
      const pending = tool('click').run({ target: '#never-there' }, ctx);
      expect(exec.stats().openContexts).toBe(1);
      controller.abort(new FlowError('step_timeout', 'the step timed out'));
      expect((await stepFailure(pending)).code).toBe('step_timeout');
    } finally {
      await ctx.close();
    }
    expect(exec.stats().openContexts).toBe(0);
  });
});

describe('screenshots', () => {
  it('are off by default and stored as artifacts (JPEG, by digest) when on', async () => {
    const off = newRun();
    try {
      await tool('navigate').run({ url: `${base.url}/index.html` }, off);
    } finally {
      await off.close();
    }
    expect(off.artifactsPut).toEqual([]);

    const on = newRun({ options: { screenshots: true } });
    try {
      await login(on, base);
    } finally {
      await on.close();
    }
    expect(on.artifactsPut).toHaveLength(4);
    for (const a of on.artifactsPut) {
      expect(a.mediaType).toBe('image/jpeg');
      expect([...a.bytes.slice(0, 3)]).toEqual([0xff, 0xd8, 0xff]); // a JPEG's start of image
      expect(a.digest).toBe(digestBytes(a.bytes));
    }
  });

  it('black out a masked field: two different secrets give identical screenshots', async () => {
    const shoot = async (value: string, mask: boolean) => {
      const ctx = newRun({ options: { screenshots: true } });
      try {
        await tool('navigate').run({ url: `${base.url}/index.html` }, ctx);
        // The user-name field is a plain text input: only the mask hides what was typed.
        await tool('fill').run({ target: '#username', value, mask }, ctx);
        return ctx.artifactsPut.at(-1)!.digest;
      } finally {
        await ctx.close();
      }
    };
    expect(await shoot('first-secret', true)).toBe(await shoot('other-secret', true));
    expect(await shoot('first-secret', false)).not.toBe(await shoot('other-secret', false));
  });

  it('black out a field filled with a value the host says is a secret, with no mask argument', async () => {
    const shoot = async (value: string) => {
      // The engine passes isSecret: true for text holding a secret resolved in this run.
      const ctx = newRun({ options: { screenshots: true }, isSecret: (text: string) => text === value });
      try {
        await tool('navigate').run({ url: `${base.url}/index.html` }, ctx);
        await tool('fill').run({ target: '#username', value }, ctx);
        return ctx.artifactsPut.at(-1)!.digest;
      } finally {
        await ctx.close();
      }
    };
    expect(await shoot('first-secret')).toBe(await shoot('other-secret'));
  });

  it('on a page with no password field: a plain fill is pictured as typed (the quick capture), a masked one blacked out', async () => {
    const shoot = async (value: string, mask: boolean) => {
      const ctx = newRun({ options: { screenshots: true } });
      try {
        await tool('navigate').run({ url: `${base.url}/forms.html` }, ctx);
        await tool('fill').run({ target: '#name', value, mask }, ctx);
        const shot = ctx.artifactsPut.at(-1)!;
        expect(shot.mediaType).toBe('image/jpeg');
        expect([...shot.bytes.slice(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
        return shot.digest;
      } finally {
        await ctx.close();
      }
    };
    expect(await shoot('first-secret', true)).toBe(await shoot('other-secret', true));
    expect(await shoot('first-secret', false)).not.toBe(await shoot('other-secret', false));
  });

  it('a read that changed nothing shows the picture of the step before it', async () => {
    const ctx = newRun({ options: { screenshots: true } });
    try {
      await tool('navigate').run({ url: `${base.url}/forms.html` }, ctx);
      await tool('fill').run({ target: '#name', value: 'Ada' }, ctx);
      const typed = ctx.artifactsPut.at(-1)!.digest;
      expect(await tool('extract').run({ target: '#name', attribute: 'value' }, ctx)).toMatchObject({ value: 'Ada' });
      expect(await tool('extract').run({ target: '#name', attribute: 'value' }, ctx)).toMatchObject({ value: 'Ada' });
      expect(ctx.artifactsPut.slice(-2).map((a) => a.digest)).toEqual([typed, typed]);
    } finally {
      await ctx.close();
    }
  });
});

describe('screencast', () => {
  it('captures frames only while someone subscribes to that run', async () => {
    const ctx = newRun();
    const frames: { runId: string; data: string }[] = [];
    try {
      await tool('navigate').run({ url: `${base.url}/index.html` }, ctx);
      expect(exec.screencast.active()).toEqual([]);
      const other = exec.screencast.subscribe('some-other-run', () => frames.push({ runId: 'wrong', data: '' }));
      expect(exec.screencast.active()).toEqual([]);
      const stop = exec.screencast.subscribe(ctx.runId, (f) => frames.push(f));
      expect(exec.screencast.active()).toEqual([ctx.runId]);
      // Typing repaints the page; wait (bounded) for the first frame.
      for (let i = 0; i < 50 && frames.length === 0; i++) {
        await tool('fill').run({ target: '#username', value: `user-${i}` }, ctx);
      }
      expect(frames.length).toBeGreaterThan(0);
      expect(frames.every((f) => f.runId === ctx.runId)).toBe(true);
      expect(Buffer.from(frames[0]!.data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8])); // JPEG
      stop();
      other();
      expect(exec.screencast.active()).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  it('starts when the run opens its page if the subscriber came first, and stops when the run ends', async () => {
    const ctx = newRun();
    const stop = exec.screencast.subscribe(ctx.runId, () => {});
    try {
      expect(exec.screencast.active()).toEqual([]);
      await tool('navigate').run({ url: `${base.url}/index.html` }, ctx);
      expect(exec.screencast.active()).toEqual([ctx.runId]);
    } finally {
      await ctx.close();
    }
    expect(exec.screencast.active()).toEqual([]);
    stop();
  });
});

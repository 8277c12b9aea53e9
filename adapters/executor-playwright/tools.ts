import { readFile, realpath } from 'node:fs/promises';
import { extname, isAbsolute, posix, relative, resolve, sep } from 'node:path';
import type { Locator as PwLocator, Page, Response } from 'playwright-core';
import { digestBytes } from '../../src/canonical.js';
import { defineTool, toolError } from '../../src/tools/contract.js';
import type { StepWarning, Tool, ToolContext, ToolContract } from '../../src/tools/types.js';
import { keyProblem } from '../../src/record/keys.js';
import {
  describeStrategy,
  frameSchema,
  normalizeFrame,
  normalizeTarget,
  strategiesOf,
  targetSchema,
  type FrameInput,
  type Locator,
  type TargetInput,
} from '../../src/record/locator.js';
import { refusedForPage, type BrowserPool, type RunSession } from './browser-pool.js';
import { BROWSER_CONTRACTS, BROWSER_CONTRACTS_1_1, BROWSER_CONTRACTS_1_2, BROWSER_CONTRACTS_NEW } from './contracts.js';
import { containerWithoutAll, readList } from './extract-list.js';
import { checkEditable, checkSelect } from './page-checks.js';
import { DENIED_HEADER } from './egress-proxy.js';
import { settleAfterAction, TIMER_WAIT_MAX_MS } from './settle.js';
import {
  actionDone,
  actOnTarget,
  APPEAR_WINDOW_MS,
  OPTIONAL_WINDOW_MS,
  browserError,
  guard,
  resolveFrame,
  stepBudgetMs,
  toPlaywright,
  type ActOptions,
} from './locate.js';

/** The browser tools over one BrowserPool (see docs/browser.md). */

export interface BrowserToolsConfig {
  pool: BrowserPool;
  /** Scope key of this executor's run session (unique per executor instance). */
  scopeKey: string;
  /** Screenshots after each successful step unless `ctx.options.screenshots` says otherwise. */
  screenshots: boolean;
  /** Used when a step carries no positive timeout. */
  defaultTimeoutMs: number;
  /** The appear window of locator drift (default APPEAR_WINDOW_MS). */
  appearTimeoutMs?: number;
  /** The appear window of an optional step, after which it is skipped (default OPTIONAL_WINDOW_MS). */
  optionalWindowMs?: number;
}

const COMPONENT = 'executor-playwright';

function session(ctx: ToolContext, cfg: BrowserToolsConfig): Promise<RunSession> {
  return ctx.scope.get(
    cfg.scopeKey,
    () => cfg.pool.openSession(ctx.runId, ctx.egress),
    async (s) => {
      // The run's last action succeeded: let what it started (a form post, its follow-up requests) finish.
      if (s.pending && !s.page.isClosed()) await settleAfterAction(s.page, s.net, s.pending.startedBefore, CLOSE_SETTLE_MS).catch(() => {});
      await cfg.pool.closeSession(s);
    },
  );
}

function parseFrame(value: unknown): Locator[] {
  const parsed = frameSchema.safeParse(value);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${['frame', ...i.path].join('.')} ${i.message}`).join('; ');
    throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] ${msg}`, { retryable: false });
  }
  return normalizeFrame(parsed.data as FrameInput);
}

function parseTarget(value: unknown, field: string): Locator {
  const parsed = targetSchema.safeParse(value);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${[field, ...i.path].join('.')} ${i.message}`).join('; ');
    throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] ${msg}`, { retryable: false });
  }
  return normalizeTarget(parsed.data as TargetInput);
}

/** `http://host:port` of the page, or `about:blank` before any navigation. */
export function pageOrigin(page: Page): string {
  const url = new URL(page.url());
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : `${url.protocol}${url.pathname}`;
}

/** What a step's body needs to locate targets: its deadline, the appear window, and how to settle the page. */
type Step = Pick<ActOptions<unknown>, 'deadline' | 'appearMs' | 'settle' | 'root'> & {
  /** Milliseconds left of the step's budget (at least 1). */
  remaining(): number;
};

function stepOf(ctx: ToolContext, cfg: BrowserToolsConfig, s: RunSession): Step {
  const timeout = Number.isFinite(ctx.timeoutMs) && ctx.timeoutMs > 0 ? ctx.timeoutMs : cfg.defaultTimeoutMs;
  const deadline = Date.now() + stepBudgetMs(timeout);
  const remaining = () => Math.max(1, deadline - Date.now());
  return {
    deadline,
    remaining,
    appearMs: ctx.optional ? (cfg.optionalWindowMs ?? OPTIONAL_WINDOW_MS) : (cfg.appearTimeoutMs ?? APPEAR_WINDOW_MS),
    // The work of earlier actions finishes before a drift decision. With none pending, the page is as
    // the last settle (navigate, a read, a decision) left it, and only a change of its own is settled.
    settle: async (afterChange) => (s.pending || afterChange ? settlePending(s, ctx, remaining()) : false),
  };
}

/**
 * Settle the page (settle.ts): the work of the pending action, if any, and whatever is under way.
 * Resolves false when there was nothing to wait for. A bound that ran out is logged against the
 * action whose work it was, and the step goes on.
 */
async function settlePending(s: RunSession, ctx: ToolContext, boundMs: number): Promise<boolean> {
  const pending = s.pending;
  s.pending = undefined;
  const settled = await settleAfterAction(s.page, s.net, pending?.startedBefore ?? s.net.started, boundMs);
  if (settled.settled) return !settled.quiet;
  if (pending) {
    const what = settled.waitingFor === 'requests' ? `requests still in flight after ${boundMs} ms` : `timers still pending after ${TIMER_WAIT_MAX_MS} ms`;
    ctx.logger.debug(`[flowctl] [browser] ${pending.action}: ${what}; going on`);
  }
  return true;
}

/** Bound on settling the last action's work when a run's page closes. */
const CLOSE_SETTLE_MS = 5000;

function screenshotsOn(ctx: ToolContext, cfg: BrowserToolsConfig): boolean {
  const enabled = typeof ctx.options?.screenshots === 'boolean' ? ctx.options.screenshots : cfg.screenshots;
  return enabled && ctx.artifacts !== undefined;
}

async function screenshot(s: RunSession, ctx: ToolContext, cfg: BrowserToolsConfig): Promise<void> {
  if (!screenshotsOn(ctx, cfg)) return;
  // Password inputs are always blacked out; so is every field a masked (secret) value went into.
  const mask = [s.page.locator('input[type=password]'), ...s.masks.filter((m) => m.page() === s.page)];
  let png: Buffer;
  try {
    png = await guard(s.page.screenshot({ type: 'png', mask, maskColor: '#000000', animations: 'disabled', caret: 'hide' }), ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.logger.warn(`[${COMPONENT}] screenshot failed: ${(err as Error).message.split('\n')[0]}`);
    return;
  }
  await ctx.artifacts!.put(new Uint8Array(png), 'image/png');
}

/**
 * Paint a field black before a secret value goes into it, for as long as the page keeps the element:
 * screenshots mask such fields when they are taken (`s.masks`), but the run's live screencast shows
 * the page as Chromium renders it, so the field itself must never render the value (docs/browser.md,
 * "Screencast"). Inline `!important` declarations win over the page's
 * style sheets.
 */
const MASK_STYLE: readonly (readonly [string, string])[] = [
  ['color', 'transparent'],
  ['-webkit-text-fill-color', 'transparent'],
  ['text-shadow', 'none'],
  ['caret-color', 'transparent'],
  ['background-color', '#000'],
  ['background-image', 'none'],
];

async function paintOver(loc: PwLocator, timeoutMs: number): Promise<void> {
  await loc.evaluate(
    (el, style) => {
      const css = (el as HTMLElement).style;
      if (css) for (const [name, value] of style) css.setProperty(name, value, 'important');
    },
    MASK_STYLE,
    { timeout: timeoutMs },
  );
}

/**
 * How a step relates to settling (docs/browser.md, "Waiting"): an `action` leaves work to settle later;
 * a `read` settles the work of the actions before it first; a `wait` waits for its own condition and
 * settles nothing (it is for what settling cannot know).
 */
type StepMode = 'action' | 'read' | 'wait' | 'switch';

/** A browser step: open the run's page, report the browser effect, act, then screenshot if enabled. */
function browserTool<I, O>(
  contract: ToolContract,
  cfg: BrowserToolsConfig,
  body: (input: I, s: RunSession, ctx: ToolContext, step: Step) => Promise<O>,
  mode: StepMode = 'action',
): Tool {
  const name = contract.ref.slice('browser/'.length);
  return defineTool<I, O>(contract, async (input, ctx) => {
    const s = await session(ctx, cfg);
    const step = stepOf(ctx, cfg, s);
    if (mode !== 'switch' && s.page.isClosed()) {
      const index = s.pages.findIndex((p) => p.page === s.page);
      throw toolError(
        'page_closed',
        `[flowctl] [${COMPONENT}] ${name}: the run's current page (page ${index}) has closed (a popup that closed itself?); a switch step goes on in another page`,
        {
          retryable: false,
          data: { page: index },
        },
      );
    }
    // `opens_page`: the action opens a new tab or popup; listen before acting, so none is missed.
    const popup = (input as { opens_page?: unknown }).opens_page === true ? s.context.waitForEvent('page', { timeout: step.remaining() }) : undefined;
    popup?.catch(() => {});
    // `frame`: every target of the step is located in that iframe's content (nested: outermost first).
    const frame = (input as { frame?: unknown }).frame;
    if (frame !== undefined) step.root = await resolveFrame(s.page, parseFrame(frame), ctx, { ...step, what: name });
    // Where a careful script waits (docs/browser.md, "Waiting"): a read first lets the work of the
    // actions before it settle, so it sees what they caused; an action acts on its target as soon as
    // that is unambiguous, and its own work is settled later: before the next read, drift decision,
    // screenshot or the run's end. A navigation settles at once (the page it opens must be ready).
    if (mode === 'read' && s.pending) await settlePending(s, ctx, step.remaining());
    const startedBefore = s.pending?.startedBefore ?? s.net.started;
    const refusedBefore = new Set(s.egress?.proxy.refusals);
    if (s.egress) s.egress.deniedNavigation = undefined;
    let out: O;
    try {
      out = await body(input, s, ctx, step);
    } catch (err) {
      // A failed step ends or retries the run: nothing is left to settle at the close.
      s.pending = undefined;
      // The step failed because the egress guard refused its navigation: say so.
      throw s.egress?.deniedNavigation?.error ?? err;
    }
    if (mode === 'action') s.pending = { action: s.pending?.action ?? name, startedBefore };
    if (popup) {
      out = { ...out, opened: await followOpenedPage(s, ctx, cfg, step, popup, name) };
    } else if (s.page.isClosed()) {
      // The action closed its own page (a popup's "Done"): nothing is left to settle or to picture.
      s.pending = undefined;
      return out;
    }
    if (name === 'navigate' || screenshotsOn(ctx, cfg)) await settlePending(s, ctx, step.remaining());
    if (s.egress) checkRefusals(s, ctx, refusedBefore);
    await screenshot(s, ctx, cfg);
    return out;
  });
}

/**
 * After an action with `opens_page`: the page it opened (a new tab or popup of the run's context)
 * becomes the current page, the next in opening order. The work the action left on the page it came
 * from is settled first (bounded), then the new page is awaited to its load event and settled, as
 * after navigate. No page within the step's budget: `no_page_opened` (the action itself happened).
 */
async function followOpenedPage(
  s: RunSession,
  ctx: ToolContext,
  cfg: BrowserToolsConfig,
  step: Step,
  popup: Promise<Page>,
  name: string,
): Promise<{ page: number; url: string }> {
  let page: Page;
  try {
    page = await guard(popup, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    s.pending = undefined;
    throw toolError('no_page_opened', `[flowctl] [${COMPONENT}] ${name}: the action opened no new page within the step's budget (opens_page: true)`, {
      retryable: false,
    });
  }
  if (!s.page.isClosed() && s.pending) await settlePending(s, ctx, Math.min(CLOSE_SETTLE_MS, step.remaining()));
  s.pending = undefined;
  const index = cfg.pool.followPage(s, page);
  await cfg.pool.setCurrentPage(s, index);
  try {
    await guard(page.waitForLoadState('load', { timeout: step.remaining() }), ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    throw browserError(err, `${name}: the page it opened`);
  }
  if (pageOrigin(page) !== 'about:blank') ctx.effect({ kind: 'browser', target: pageOrigin(page) });
  s.pending = { action: name, startedBefore: 0 };
  await settlePending(s, ctx, step.remaining());
  return { page: index, url: page.url() };
}

/** The same body under several contracts (the versions of one tool). */
function browserTools<I, O>(
  contracts: ToolContract[],
  cfg: BrowserToolsConfig,
  body: (input: I, s: RunSession, ctx: ToolContext, step: Step) => Promise<O>,
  mode: StepMode = 'action',
): Tool[] {
  return contracts.map((c) => browserTool(c, cfg, body, mode));
}

/**
 * After a step under an egress guard: a main-frame navigation the guard refused during the step (a
 * click on a link, a script, a redirect) fails it with `egress_denied`; refused subresources, fetches
 * and WebSockets leave the step a warning `egress_denied` naming them (the page got a network error).
 */
function checkRefusals(s: RunSession, ctx: ToolContext, before: Set<unknown>): void {
  const denied = s.egress!.deniedNavigation;
  if (denied) {
    s.pending = undefined;
    throw denied.error;
  }
  // Only the page's refused requests are the step's: the browser's own traffic (a default favicon, an
  // update check) is no request of the page's, whatever the guard refused of it.
  const fresh = s.egress!.proxy.refusals.filter((r) => !before.has(r) && refusedForPage(s.egress!, r));
  if (fresh.length === 0) return;
  const targets = [...new Set(fresh.map((r) => r.target))];
  ctx.warn({
    code: 'egress_denied',
    message: `[flowctl] [${COMPONENT}] the egress guard refused ${fresh.length} request${fresh.length === 1 ? '' : 's'} of the page: ${targets.slice(0, 5).join(', ')}${targets.length > 5 ? ', ...' : ''}`,
    data: { targets: targets.slice(0, 20) },
  });
}

/**
 * Text (whitespace collapsed, trimmed; or as rendered: innerText) or an attribute of every element a
 * locator matches, in one round trip.
 */
function readValues(loc: PwLocator, attribute: string | undefined, rendered = false): Promise<(string | null)[]> {
  return loc.evaluateAll(
    (els, [attr, asRendered]) =>
      els.map((el) => {
        // innerText keeps the line breaks of <br>, blocks and preformatted text, and leaves hidden text out.
        if (attr === undefined && asRendered) return 'innerText' in el ? (el as HTMLElement).innerText : (el.textContent ?? '');
        if (attr === undefined) return (el.textContent ?? '').replace(/\s+/g, ' ').trim();
        // `value` reads the live value of form fields, not the attribute the page was served with.
        if (attr === 'value' && 'value' in el) return String((el as HTMLInputElement).value);
        return el.getAttribute(attr);
      }),
    [attribute, rendered] as const,
  );
}

const MEDIA_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.zip': 'application/zip',
};

type FileArg = string | { path: string; digest?: string; name?: string };

async function loadUpload(file: FileArg, ctx: ToolContext): Promise<{ name: string; mimeType: string; buffer: Buffer; digest: string }> {
  const spec = typeof file === 'string' ? { path: file } : file;
  if (ctx.files) return checkUpload(spec, await readFromSource(spec, ctx));
  const root = resolve(ctx.cwd);
  const full = resolve(root, spec.path);
  const outside = (p: string, base: string) => {
    const rel = relative(base, p);
    return rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
  };
  if (isAbsolute(spec.path) || outside(full, root)) {
    throw toolError('upload_path_outside_root', `[flowctl] [${COMPONENT}] upload: "${spec.path}" is not inside the project folder`, {
      retryable: false,
      data: { path: spec.path },
    });
  }
  let buffer: Buffer;
  try {
    const real = await realpath(full);
    if (outside(real, await realpath(root))) {
      throw toolError('upload_path_outside_root', `[flowctl] [${COMPONENT}] upload: "${spec.path}" resolves outside the project folder`, {
        retryable: false,
        data: { path: spec.path },
      });
    }
    buffer = await readFile(real);
  } catch (err) {
    if ((err as { code?: string }).code === 'upload_path_outside_root') throw err;
    throw toolError('upload_file_missing', `[flowctl] [${COMPONENT}] upload: cannot read "${spec.path}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      retryable: false,
      data: { path: spec.path },
    });
  }
  return checkUpload(spec, buffer);
}

/**
 * Upload reads the run's file source when it has one (`ctx.files`), the project folder otherwise: its
 * contract's `fs` is only needed for the folder (ToolFlags.filesFromSource, docs/tools.md "Policy").
 */
const readsFilesFromSource = (tool: Tool): Tool => ({ ...tool, flags: { ...tool.flags, filesFromSource: true } });

/** The host's files (RunOptions.files): no disk read at all. */
async function readFromSource(spec: { path: string; digest?: string }, ctx: ToolContext): Promise<Buffer> {
  let bytes: Uint8Array | undefined;
  try {
    bytes = await ctx.files!.read(spec.digest === undefined ? { path: spec.path } : { path: spec.path, digest: spec.digest });
  } catch {
    // The host's store failed (not "no such file"): worth another attempt. Its error stays out of the journal.
    throw toolError('upload_file_unavailable', `[flowctl] [${COMPONENT}] upload: "${spec.path}" could not be read from the host's file store`, {
      retryable: true,
      data: { path: spec.path },
    });
  }
  if (bytes === undefined) {
    throw toolError('upload_file_missing', `[flowctl] [${COMPONENT}] upload: no file "${spec.path}" here`, { retryable: false, data: { path: spec.path } });
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function checkUpload(
  spec: { path: string; digest?: string; name?: string },
  buffer: Buffer,
): { name: string; mimeType: string; buffer: Buffer; digest: string } {
  const digest = digestBytes(buffer);
  if (spec.digest !== undefined && spec.digest !== digest) {
    throw toolError('upload_digest_mismatch', `[flowctl] [${COMPONENT}] upload: "${spec.path}" changed since it was recorded`, {
      retryable: false,
      data: { path: spec.path, expected: spec.digest, actual: digest },
    });
  }
  const name = spec.name ?? posix.basename(spec.path.replaceAll('\\', '/'));
  return { name, mimeType: MEDIA_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream', buffer, digest };
}

export function createBrowserTools(cfg: BrowserToolsConfig): Tool[] {
  const navigate = browserTool<{ url: string }, { url: string; status: number | null }>(BROWSER_CONTRACTS.navigate, cfg, async (input, s, ctx, step) => {
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      url = new URL('invalid:');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] navigate: url must be an absolute http(s) URL`, { retryable: false });
    }
    // Under an egress guard, a literal address or a metadata name is refused before the browser is asked.
    ctx.egress?.precheck(url.hostname, Number(url.port) || (url.protocol === 'https:' ? 443 : 80));
    ctx.effect({ kind: 'browser', target: url.origin });
    const refusedBefore = new Set(s.egress?.proxy.refusals);
    let response: Response | null;
    try {
      response = await guard(s.page.goto(url.href, { waitUntil: 'load', timeout: step.remaining() }), ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      // A refused tunnel (https) fails the navigation with a network error: the guard's refusal is the reason.
      const refused = s.egress?.proxy.refusals.filter((r) => !refusedBefore.has(r)).at(-1);
      throw refused?.error ?? browserError(err, `navigate ${url.origin}${url.pathname}`);
    }
    // A refused plain request (the URL or a hop of its redirects) is the proxy's 403.
    if (s.egress && response?.headers()[DENIED_HEADER] === 'denied') {
      const refused = s.egress.proxy.refusalOf(response.url());
      if (refused) throw refused.error;
    }
    return { url: s.page.url(), status: response?.status() ?? null };
  });

  type ClickInput = { target: unknown; count?: number; button?: 'left' | 'right' | 'middle' };
  const clickBody = async (input: ClickInput, s: RunSession, ctx: ToolContext, step: Step) => {
    const target = parseTarget(input.target, 'target');
    ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
    const options = { clickCount: input.count ?? 1, button: input.button ?? 'left' } as const;
    const what = options.clickCount === 2 ? 'double-click' : options.button === 'left' ? 'click' : `${options.button} click`;
    const r = await actOnTarget(s.page, target, ctx, { ...step, need: 'one', what, act: (loc, t) => clickOnce(loc, t, options) });
    return { matched: r.matched };
  };
  const click = browserTool<ClickInput, { matched: string }>(BROWSER_CONTRACTS.click, cfg, clickBody);
  const click11 = browserTool<ClickInput, { matched: string }>(BROWSER_CONTRACTS_1_1.click, cfg, clickBody);

  /** hover, check and uncheck: one element, one Playwright call. */
  const simple = (contract: ToolContract, what: string, act: (loc: PwLocator, timeout: number) => Promise<void>) =>
    browserTool<{ target: unknown }, { matched: string }>(contract, cfg, async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      const r = await actOnTarget(s.page, target, ctx, { ...step, need: 'one', what, act });
      return { matched: r.matched };
    });
  const hover = simple(BROWSER_CONTRACTS_NEW.hover, 'hover', (loc, t) => loc.hover({ timeout: t }));
  // setChecked is idempotent: a box already in the wanted state is left alone, without an error.
  const check = simple(BROWSER_CONTRACTS_NEW.check, 'check', (loc, t) => loc.setChecked(true, { timeout: t }));
  const uncheck = simple(BROWSER_CONTRACTS_NEW.uncheck, 'uncheck', (loc, t) => loc.setChecked(false, { timeout: t }));

  const press = browserTool<{ key: string; target?: unknown }, { matched: string | null }>(BROWSER_CONTRACTS_NEW.press, cfg, async (input, s, ctx, step) => {
    const problem = keyProblem(input.key);
    if (problem) throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] press: key ${problem}`, { retryable: false });
    const target = input.target === undefined ? undefined : parseTarget(input.target, 'target');
    ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
    if (!target) {
      if (step.root) throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] press: frame needs a target`, { retryable: false });
      // The focused element, wherever it is (a field a previous step filled, a frame's element).
      try {
        await guard(s.page.keyboard.press(input.key), ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        throw browserError(err, `press ${input.key}`);
      }
      return { matched: null };
    }
    const r = await actOnTarget(s.page, target, ctx, {
      ...step,
      need: 'one',
      what: `press ${input.key}`,
      act: async (loc, t) => {
        try {
          await loc.press(input.key, { timeout: t });
        } catch (err) {
          // Like a click, a key (Enter on a form) may start a navigation Playwright waits for, or close its page: the key was pressed.
          if (!actionDone(err) && !loc.page().isClosed()) throw err;
        }
      },
    });
    return { matched: r.matched };
  });

  const wait = browserTool<
    { target: unknown; state?: 'visible' | 'hidden'; text?: string; timeout_ms?: number },
    { state: 'visible' | 'hidden'; matched?: string }
  >(
    BROWSER_CONTRACTS_NEW.wait,
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      const state = input.state ?? 'visible';
      const bound = Math.min(input.timeout_ms ?? Number.POSITIVE_INFINITY, step.remaining());
      const candidates = strategiesOf(target).map((st) => {
        // Only visible elements count, and with a text only those that contain it (case-sensitive).
        let loc = toPlaywright(step.root ?? s.page, st);
        if (input.text !== undefined) loc = loc.filter({ hasText: new RegExp(escapeRegExp(input.text)) });
        return { text: describeStrategy(st), loc: loc.filter({ visible: true }) };
      });
      const any = candidates
        .slice(1)
        .reduce((acc, c) => acc.or(c.loc), candidates[0]!.loc)
        .first();
      const what = `wait ${candidates[0]!.text}`;
      try {
        // Event-driven: Playwright re-checks on every DOM change, no polling interval of ours.
        await guard(any.waitFor({ state: state === 'visible' ? 'attached' : 'detached', timeout: bound }), ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        if ((err as Error)?.name !== 'TimeoutError') throw browserError(err, what);
        const ms = Math.round(bound);
        const cond =
          state === 'hidden'
            ? input.text === undefined
              ? 'to be hidden'
              : 'to stop showing its text'
            : input.text === undefined
              ? 'to be visible'
              : 'to show its text';
        throw toolError('wait_timeout', `[flowctl] [${COMPONENT}] ${what}: waited ${ms} ms for the target ${cond}`, {
          retryable: true,
          data: { state, text: input.text !== undefined, timeout_ms: ms, page: pageOrigin(s.page) },
        });
      }
      if (state === 'hidden') return { state };
      // Which locator showed it: the first in order, as for any target; a fallback is drift.
      const counts = await guard(Promise.all(candidates.map((c) => c.loc.count())), ctx.signal).catch(() => candidates.map(() => 0));
      const chosen = Math.max(
        0,
        counts.findIndex((n) => n > 0),
      );
      if (chosen > 0) {
        ctx.warn({
          code: 'drift',
          message: `wait: primary ${candidates[0]!.text} matched ${counts[0]}; fallback ${candidates[chosen]!.text} matched`,
          data: { matched: candidates[chosen]!.text, tried: candidates.map((c, i) => ({ locator: c.text, count: counts[i]! })) },
        });
      }
      return { state, matched: candidates[chosen]!.text };
    },
    'wait',
  );

  const [fill, fill11] = browserTools<{ target: unknown; value: string; mask?: boolean }, { matched: string }>(
    [BROWSER_CONTRACTS.fill, BROWSER_CONTRACTS_1_1.fill],
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      // A value that came from a secret is blacked out even when the flow did not say mask.
      const secret = input.mask === true || ctx.isSecret?.(input.value) === true;
      const r = await actOnTarget(s.page, target, ctx, {
        ...step,
        need: 'one',
        what: 'fill',
        act: async (loc, t) => {
          await checkEditable(loc, t);
          if (secret) await paintOver(loc, t);
          await loc.fill(input.value, { timeout: t });
          return loc;
        },
      });
      if (secret) s.masks.push(r.value);
      return { matched: r.matched };
    },
  );

  const [select, select11] = browserTools<{ target: unknown; value: string | string[]; mask?: boolean }, { matched: string; selected?: string[] }>(
    [BROWSER_CONTRACTS.select, BROWSER_CONTRACTS_1_1.select],
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      const secret = input.mask === true || [input.value].flat().some((v) => ctx.isSecret?.(v) === true);
      const r = await actOnTarget(s.page, target, ctx, {
        ...step,
        need: 'one',
        what: 'select',
        act: async (loc, t) => {
          await checkSelect(loc, [input.value].flat(), t, secret, () => step.settle());
          if (secret) await paintOver(loc, t);
          return { loc, selected: await loc.selectOption(input.value, { timeout: t }) };
        },
      });
      if (secret) {
        s.masks.push(r.value.loc);
        return { matched: r.matched };
      }
      return { matched: r.matched, selected: r.value.selected };
    },
  );

  const [drag, drag11] = browserTools<{ source: unknown; target: unknown }, { source: string; target: string }>(
    [BROWSER_CONTRACTS.drag, BROWSER_CONTRACTS_1_1.drag],
    cfg,
    async (input, s, ctx, step) => {
      const source = parseTarget(input.source, 'source');
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      // Both ends are located at once (each by the drift rules); their warnings are journaled source first.
      const visible = async (loc: PwLocator, t: number) => {
        await loc.waitFor({ state: 'visible', timeout: t });
        return loc;
      };
      const warnings: StepWarning[][] = [[], []];
      const ends = [source, target].map((t, i) =>
        actOnTarget(
          s.page,
          t,
          { ...ctx, warn: (w) => warnings[i]!.push(w) },
          { ...step, need: 'one', what: i === 0 ? 'drag source' : 'drag target', act: visible },
        ),
      );
      // Settle both before reporting, so the error (the source's first) and the warnings never depend on timing.
      const settled = await Promise.allSettled(ends);
      for (const w of warnings.flat()) ctx.warn(w);
      for (const r of settled) if (r.status === 'rejected') throw r.reason;
      const [from, to] = settled.map((r) => (r as PromiseFulfilledResult<Awaited<(typeof ends)[number]>>).value);
      try {
        await guard(from!.value.dragTo(to!.value, { timeout: step.remaining() }), ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        throw browserError(err, `drag ${from!.matched} to ${to!.matched}`);
      }
      return { source: from!.matched, target: to!.matched };
    },
  );

  const [upload, upload11] = browserTools<{ target: unknown; files: FileArg[] }, { matched: string; files: { name: string; digest: string; size: number }[] }>(
    [BROWSER_CONTRACTS.upload, BROWSER_CONTRACTS_1_1.upload],
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      const files = [];
      for (const f of input.files) files.push(await loadUpload(f, ctx));
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      const payload = files.map(({ name, mimeType, buffer }) => ({ name, mimeType, buffer }));
      const r = await actOnTarget(s.page, target, ctx, {
        ...step,
        need: 'one',
        what: 'upload',
        act: (loc, t) => loc.setInputFiles(payload, { timeout: t }),
      });
      return { matched: r.matched, files: files.map((f) => ({ name: f.name, digest: f.digest, size: f.buffer.length })) };
    },
  ).map(readsFilesFromSource);

  const [extract, extract11, extract12] = browserTools<
    { target: unknown; attribute?: string; all?: boolean; text?: 'content' | 'rendered'; container?: unknown },
    { matched: string; value: unknown }
  >(
    [BROWSER_CONTRACTS.extract, BROWSER_CONTRACTS_1_1.extract, BROWSER_CONTRACTS_1_2.extract],
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      if (input.attribute !== undefined && input.text !== undefined) {
        throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] extract: text goes without attribute (it says how to read the text)`, {
          retryable: false,
        });
      }
      if (input.container !== undefined && input.all !== true) throw containerWithoutAll();
      const container = input.container === undefined ? undefined : parseTarget(input.container, 'container');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      // A list with its container: empty is [] while the container is there (extract-list.ts).
      if (container) return readList(s.page, target, container, ctx, step, (loc) => readValues(loc, input.attribute, input.text === 'rendered'));
      const r = await actOnTarget(s.page, target, ctx, {
        ...step,
        need: input.all ? 'some' : 'one',
        what: 'extract',
        act: async (loc, t) => {
          // Single: waitFor is strict, so it also proves there is exactly one match.
          await (input.all ? loc.first() : loc).waitFor({ state: 'attached', timeout: t });
          const values = await readValues(loc, input.attribute, input.text === 'rendered');
          return input.all ? values : (values[0] ?? null);
        },
        // The settled page read as it is, in one round trip, when the primary matches as needed.
        read: async (loc) => {
          const values = await readValues(loc, input.attribute, input.text === 'rendered');
          return { count: values.length, value: input.all ? values : (values[0] ?? null) };
        },
      });
      return { matched: r.matched, value: r.value };
    },
    'read',
  );

  const switchPage = browserTool<{ page: number }, { page: number; url: string }>(
    BROWSER_CONTRACTS_NEW.switch,
    cfg,
    async (input, s, ctx, step) => {
      const target = s.pages[input.page];
      if (!target) {
        throw toolError(
          'page_not_found',
          `[flowctl] [${COMPONENT}] switch: page ${input.page} was never opened (the run has pages 0 to ${s.pages.length - 1})`,
          {
            retryable: false,
            data: { page: input.page, pages: s.pages.length },
          },
        );
      }
      if (target.page.isClosed()) {
        throw toolError('page_closed', `[flowctl] [${COMPONENT}] switch: page ${input.page} has closed`, { retryable: false, data: { page: input.page } });
      }
      // The work the last action left on the page being left is settled first (bounded): it is not followed later.
      if (!s.page.isClosed() && s.pending) await settlePending(s, ctx, Math.min(CLOSE_SETTLE_MS, step.remaining()));
      s.pending = undefined;
      await cfg.pool.setCurrentPage(s, input.page);
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      return { page: input.page, url: s.page.url() };
    },
    'switch',
  );

  return [
    navigate,
    click,
    fill,
    select,
    drag,
    upload,
    extract,
    click11,
    fill11,
    select11,
    drag11,
    upload11,
    extract11,
    press,
    hover,
    check,
    uncheck,
    wait,
    switchPage,
    extract12,
  ] as Tool[];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Click, bounded by `timeoutMs`. Playwright's click also waits for a navigation the click started;
 * when only that wait runs out (its call log says "click action done"), the click happened and
 * counts as done: the navigation is then awaited by settleAfterAction, and the click is never
 * repeated through a fallback on the next page.
 */
async function clickOnce(loc: PwLocator, timeoutMs: number, options: { clickCount: number; button: 'left' | 'right' | 'middle' }): Promise<void> {
  try {
    await loc.click({ timeout: timeoutMs, ...options });
  } catch (err) {
    // The click closed its own page (a popup's "Done" button): it was performed.
    if (loc.page().isClosed()) return;
    if (!actionDone(err)) throw err;
  }
}

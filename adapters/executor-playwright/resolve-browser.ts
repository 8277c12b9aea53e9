import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { FlowError } from '../../src/errors.js';

/**
 * Which Chromium to launch, in order:
 * 1. an explicit `executablePath` option, else the `CHROMIUM_PATH` environment variable (when set, it
 *    must point at an executable file: a wrong explicit path is an error, not a silent fallback);
 * 2. a system Chromium: `/usr/bin/chromium`, then `/usr/bin/chromium-browser`;
 * 3. the optional peer `@sparticuz/chromium` (`await chromium.executablePath()` unpacks it).
 * None found: FlowError `browser_not_found` naming all three.
 */

export type BrowserSource = 'option' | 'env' | 'system' | 'sparticuz';

export interface ResolvedBrowser {
  executablePath: string;
  source: BrowserSource;
}

export interface ResolveBrowserOptions {
  executablePath?: string;
  /** Default `process.env` (read for `CHROMIUM_PATH`). */
  env?: Record<string, string | undefined>;
  /** Default `['/usr/bin/chromium', '/usr/bin/chromium-browser']`. */
  systemPaths?: readonly string[];
  /** Default: `import('@sparticuz/chromium')`; resolve undefined when it is not installed. */
  loadSparticuz?: () => Promise<{ executablePath(): Promise<string> } | undefined>;
}

export const SYSTEM_CHROMIUM_PATHS: readonly string[] = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function defaultLoadSparticuz(): Promise<{ executablePath(): Promise<string> } | undefined> {
  const name = '@sparticuz/chromium';
  try {
    // A variable specifier keeps bundlers from inlining an optional peer.
    const mod = (await import(name)) as { default?: { executablePath(): Promise<string> } };
    return mod.default;
  } catch {
    return undefined;
  }
}

function notFound(detail: string, tried: string[]): FlowError {
  return new FlowError(
    'browser_not_found',
    `[flowctl] [executor-playwright] no Chromium found (${detail}). Set the executablePath option or CHROMIUM_PATH, ` +
      `install a system Chromium (${SYSTEM_CHROMIUM_PATHS.join(' or ')}, e.g. apt-get install chromium), ` +
      `or install the optional peer @sparticuz/chromium (npm install @sparticuz/chromium)`,
    { data: { tried } },
  );
}

export async function resolveBrowser(options: ResolveBrowserOptions = {}): Promise<ResolvedBrowser> {
  const env = options.env ?? process.env;
  const explicit = options.executablePath ?? env.CHROMIUM_PATH;
  if (explicit !== undefined && explicit !== '') {
    const source: BrowserSource = options.executablePath !== undefined ? 'option' : 'env';
    if (await isExecutableFile(explicit)) return { executablePath: explicit, source };
    const label = source === 'option' ? 'executablePath option' : 'CHROMIUM_PATH';
    throw notFound(`${label} "${explicit}" is not an executable file`, [explicit]);
  }
  const tried: string[] = [];
  for (const path of options.systemPaths ?? SYSTEM_CHROMIUM_PATHS) {
    tried.push(path);
    if (await isExecutableFile(path)) return { executablePath: path, source: 'system' };
  }
  tried.push('@sparticuz/chromium');
  const sparticuz = await (options.loadSparticuz ?? defaultLoadSparticuz)();
  if (sparticuz) {
    let path: string | undefined;
    try {
      path = await sparticuz.executablePath();
    } catch (err) {
      throw notFound(`@sparticuz/chromium failed to unpack: ${(err as Error).message}`, tried);
    }
    if (path && (await isExecutableFile(path))) return { executablePath: path, source: 'sparticuz' };
  }
  throw notFound('CHROMIUM_PATH is not set, no system Chromium, @sparticuz/chromium is not installed', tried);
}

import type { Tool, ToolRegistry } from './types.js';

const SEMVER = /^(\d+)\.(\d+)\.(\d+)$/;
const RANGE = /^\d+(\.\d+){0,2}$/;

function parseSemver(v: string): [number, number, number] | undefined {
  const m = SEMVER.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** `1` matches 1.x.y, `1.2` matches 1.2.y, `1.2.3` matches exactly. */
export function versionMatches(version: string, range: string): boolean {
  if (!RANGE.test(range)) return false;
  const v = parseSemver(version);
  if (!v) return false;
  return range.split('.').every((part, i) => Number(part) === v[i]);
}

function compareSemver(a: string, b: string): number {
  const pa = parseSemver(a)!;
  const pb = parseSemver(b)!;
  return pa[0] - pb[0] || pa[1] - pb[1] || pa[2] - pb[2];
}

/** A registry over a fixed list of tools; later lists (e.g. installed packs) add to earlier ones. */
export function createToolRegistry(...lists: Tool[][]): ToolRegistry {
  const byKey = new Map<string, Tool>();
  for (const tool of lists.flat()) {
    if (!parseSemver(tool.contract.version)) {
      throw new TypeError(`[flowctl] tool ${tool.contract.ref} has version "${tool.contract.version}", not MAJOR.MINOR.PATCH`);
    }
    byKey.set(`${tool.contract.ref}@${tool.contract.version}`, tool);
  }
  const all = [...byKey.values()];
  return {
    resolve(ref, range) {
      return all
        .filter((t) => t.contract.ref === ref && versionMatches(t.contract.version, range))
        .sort((a, b) => compareSemver(b.contract.version, a.contract.version))[0];
    },
    get(ref, version) {
      return byKey.get(`${ref}@${version}`);
    },
    list() {
      return [...all];
    },
  };
}

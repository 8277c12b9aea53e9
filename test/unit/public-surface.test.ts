import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The public surface (docs/architecture.md, "Entry points"): each entry names its exports, the main
// entry's API report stays small, and internals stay out of it. The reports themselves are checked
// against dist/ by `npm run api:check`; these read the source and the committed reports only.
const ROOT = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

const adapterEntries = readdirSync(join(ROOT, 'adapters'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(ROOT, 'adapters', d.name, 'index.ts')))
  .map((d) => `adapters/${d.name}/index.ts`);
const ENTRIES = ['src/index.ts', 'src/engine-entry.ts', 'src/ports-entry.ts', 'src/packs-entry.ts', 'testing/index.ts', ...adapterEntries];

const declarations = (report: string) =>
  report
    .split('\n')
    .filter((line) => line.startsWith('export '))
    .map((line) => /^export (?:declare )?(?:abstract )?(?:const|function|interface|type|class|enum|namespace) ([A-Za-z0-9_]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);

describe('public entries', () => {
  it.each(ENTRIES)('%s exports by name only', (file) => {
    expect(read(file)).not.toMatch(/^export (type )?\*/m);
  });

  it('package.json exports every entry for import and require, with types', () => {
    const { exports } = JSON.parse(read('package.json')) as { exports: Record<string, { import?: { types?: string }; require?: { types?: string } }> };
    for (const entry of ['.', './engine', './ports', './packs', './testing', './adapters/*']) {
      expect(exports[entry]?.import?.types, entry).toBeDefined();
      expect(exports[entry]?.require?.types, entry).toBeDefined();
    }
  });
});

describe('the main entry API report', () => {
  const names = declarations(read('flowctl.api.md'));

  it('lists at most 200 declarations', () => {
    expect(names.length).toBeGreaterThan(100);
    expect(names.length).toBeLessThanOrEqual(200);
  });

  it('leaves HTTP schemas, auth primitives, JSON helpers, packs and service ports out', () => {
    const internal = ['inputsBodySchema', 'RUN_ID_SCHEMA', 'HTTP_STATUS_BY_CODE', 'mintApiKey', 'hashPassword', 'sortKeysDeep', 'validateAgainstSchema'];
    const elsewhere = ['publishPack', 'ServiceStorage', 'StudioBrowser', 'Queue', 'createEgressGuard'];
    for (const name of [...internal, ...elsewhere]) expect(names, name).not.toContain(name);
    for (const name of ['createEngine', 'compileFlow', 'defineTool', 'createLauncher', 'createHostedService']) expect(names).toContain(name);
  });

  it('exports everything flowctl/engine does (the engine entry is a subset)', () => {
    const missing = declarations(read('api/engine.api.md')).filter((name) => !names.includes(name));
    expect(missing).toEqual([]);
  });

  it('has ports and packs on their own entries', () => {
    expect(declarations(read('api/ports.api.md'))).toEqual(
      expect.arrayContaining(['ServiceStorage', 'StudioBrowser', 'Queue', 'createEgressGuard', 'createRunScope']),
    );
    expect(declarations(read('api/packs.api.md'))).toEqual(expect.arrayContaining(['publishPack', 'buildPack', 'verifyRegistry', 'installPacks']));
  });
});

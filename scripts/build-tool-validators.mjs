// Ajv's validators for the contract schemas of the built-in tools (src/tools/builtins) and the browser
// tools (adapters/executor-playwright/contracts.ts, every version), generated once as standalone code
// (src/tools/tool-validators.generated.ts, committed like schema-meta.generated.ts) so that a process
// does not compile them: ~10 ms a schema, 80-120 ms of main-thread work at the start of each browser
// `flowctl run` (src/tools/contract.ts looks a schema up here before it compiles one). Same Ajv options
// as contract.ts, so the same code and the same errors. Keyed by the schema's canonical JSON, the key
// contract.ts already computes for its cache.
// `node scripts/build-tool-validators.mjs --check` fails when it is stale (test/unit/tools/tool-validators.test.ts
// runs the check); `npm run build` regenerates it.
import { createRequire, isBuiltin } from 'node:module';
import { fileURLToPath } from 'node:url';
import { writeGenerated } from './generated-file.mjs';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}src/tools/tool-validators.generated.ts`;
const require = createRequire(`${root}package.json`);

// The contracts are TypeScript: esbuild bundles this entry in memory and the script imports the bundle.
// `BROWSER_CONTRACTS*` are the browser tools' contracts by version, so a new version is picked up.
const ENTRY = `
import { builtinTools } from './src/tools/builtins/list.ts';
import * as browser from './adapters/executor-playwright/contracts.ts';
export { canonicalJson } from './src/canonical.ts';
export const contracts = [
  ...builtinTools().map((tool) => tool.contract),
  ...Object.entries(browser).filter(([name]) => name.startsWith('BROWSER_CONTRACTS')).flatMap(([, byName]) => Object.values(byName)),
];
`;

/**
 * contract.ts imports the generated file this script writes: the bundle gets an empty table instead,
 * so a stale or broken committed file never feeds its own regeneration. Packages stay outside the
 * bundle, imported from node_modules by absolute URL (a data: module cannot resolve bare names).
 */
const loadPlugin = {
  name: 'tool-contracts',
  setup(b) {
    b.onResolve({ filter: /tool-validators\.generated\.js$/ }, () => ({ path: 'tool-validators', namespace: 'stub' }));
    b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export const TOOL_VALIDATORS = new Map();', loader: 'js' }));
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (isBuiltin(args.path)) return { path: args.path, external: true };
      return { path: import.meta.resolve(args.path), external: true };
    });
  },
};

/** The built-in and browser tools' contracts, and canonicalJson, from the TypeScript sources. */
async function loadContracts() {
  const result = await build({
    stdin: { contents: ENTRY, resolveDir: root, loader: 'ts', sourcefile: 'tool-contracts-entry.ts' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    write: false,
    logLevel: 'silent',
    plugins: [loadPlugin],
  });
  const code = result.outputFiles[0].text;
  return import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
}

/** Every distinct input and output schema of those contracts, by canonical JSON, in key order. */
export async function toolSchemas() {
  const { contracts, canonicalJson } = await loadContracts();
  const byKey = new Map();
  for (const c of contracts) for (const schema of [c.input_schema, c.output_schema]) byKey.set(canonicalJson(schema), schema);
  if (byKey.size === 0) throw new Error('[build-tool-validators] no tool contract found');
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, schema]) => ({ key, schema }));
}

// Ajv's runtime helpers the standalone code requires; each becomes an import (the function is the
// module's `default`, or its `default.default` when a bundler wraps the CommonJS module).
const RUNTIME = /const (func\d+) = require\("ajv\/dist\/runtime\/(equal|ucs2length|uri)"\)\.default;/g;

export async function toolValidatorsSource() {
  const { Ajv2020 } = require('ajv/dist/2020.js');
  const standaloneCode = require('ajv/dist/standalone/index.js').default;
  const schemas = await toolSchemas();
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false, code: { source: true, esm: true } });
  const names = {};
  schemas.forEach(({ schema }, i) => {
    ajv.addSchema(schema, `tool-schema-${i}`);
    names[`v${i}`] = `tool-schema-${i}`;
  });
  let code = standaloneCode(ajv, names);
  if (!code.startsWith('"use strict";')) throw new Error('[build-tool-validators] Ajv\'s standalone code changed shape: no "use strict" first');
  code = code.slice('"use strict";'.length);
  const exported = [...code.matchAll(/export const (v\d+) = (validate\d+);/g)];
  if (exported.length !== schemas.length) {
    throw new Error(`[build-tool-validators] Ajv's standalone code changed shape: ${exported.length} exports for ${schemas.length} schemas`);
  }
  code = code.replace(/export const (v\d+) = (validate\d+);/g, 'const $1 = $2;');
  const imports = [];
  code = code.replace(RUNTIME, (_, name, module) => {
    imports.push(`import * as ${module}Module from 'ajv/dist/runtime/${module}.js';`);
    return `const ${name} = runtime(${module}Module);`;
  });
  if (/\brequire\(/.test(code)) throw new Error('[build-tool-validators] the standalone code requires an Ajv runtime module this script does not import');
  const table = schemas.map(({ key }, i) => `  [${JSON.stringify(key)}, v${i}],`).join('\n');
  return `// Generated by scripts/build-tool-validators.mjs from the built-in and browser tools' contract schemas: do not edit.
// @ts-nocheck
import type { ErrorObject } from 'ajv/dist/2020.js';
${[...new Set(imports)].join('\n')}

const runtime = (m) => (typeof m.default === 'function' ? m.default : m.default.default);
${code}
/** A generated validator: sets \`.errors\` as an Ajv validate function does. */
export type GeneratedValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The validator of each built-in and browser tool contract schema, by the schema's canonical JSON. */
export const TOOL_VALIDATORS: ReadonlyMap<string, GeneratedValidator> = new Map([
${table}
]);
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await writeGenerated(out, await toolValidatorsSource(), { script: 'scripts/build-tool-validators.mjs', label: 'tool-validators' });
}

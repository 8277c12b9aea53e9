#!/usr/bin/env node
// The structure check (docs/architecture.md, "Structure rules"): no runtime import cycle, no source
// file over 450 lines, imports one way. Prints what breaks each rule and counts; exits 1 when any
// rule is broken. `node scripts/check-structure.mjs`
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
process.chdir(ROOT);

const MAX_LINES = 450;
/** The folders whose modules import each other at run time. */
const GRAPH_ROOTS = ['src', 'adapters', 'cli', 'testing', 'web/src'];
/** Where source files are counted (Biome's set): tests, scripts, benches and examples too. */
const LINE_ROOTS = ['src', 'adapters', 'cli', 'testing', 'test', 'web/src', 'scripts', 'bench', 'examples', 'bin'];
const SOURCE = /\.(ts|tsx|mjs|js)$/;
/** Generated files, and the test fixture sites (pages served to the browser tests, not our code). */
const NOT_COUNTED = /(\.generated\.ts$|^test\/fixtures\/|(^|\/)(node_modules|dist)\/)/;

/**
 * Imports point one way (docs/architecture.md). Each rule: the importing files, the imported files it
 * must not reach, and what to do instead. Type-only imports count here (a type is a dependency too).
 */
const LAYER_RULES = [
  {
    name: 'src imports no adapter, CLI or testing module',
    from: /^src\//,
    to: /^(adapters|cli|testing)\//,
    why: 'src/ is the library of ports; adapters, the CLI and the suites sit on top of it',
  },
  {
    name: 'service domain imports no route',
    from: /^src\/service\/domain\//,
    to: /^src\/service\/routes\//,
    why: 'the service runs one way: routes -> domain -> ports',
  },
  {
    name: 'ports import no service module',
    from: /^src\/ports\//,
    to: /^src\/service\//,
    why: 'ports sit below the service',
  },
  {
    name: 'adapters reach the hosted service only through its entries',
    from: /^adapters\//,
    to: /^src\/service\//,
    // The service's entries: createHostedService and its settings. Only the assembly wires the service.
    allow: (from, to) => from.startsWith('adapters/hosted/') && /^src\/service\/(hosted-service|settings)\.ts$/.test(to),
    why: 'adapters implement ports; only adapters/hosted assembles the service, through src/service/hosted-service.ts and settings.ts',
  },
];

async function* walk(dir) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') yield* walk(path);
    } else yield path;
  }
}

async function longFiles() {
  const files = [];
  for (const root of LINE_ROOTS) for await (const path of walk(root)) files.push(path);
  for (const entry of await readdir('.', { withFileTypes: true })) if (entry.isFile()) files.push(entry.name);
  const long = [];
  let counted = 0;
  for (const file of files.map((f) => relative('.', f).split('\\').join('/')).sort()) {
    if (!SOURCE.test(file) || NOT_COUNTED.test(file)) continue;
    counted++;
    const text = await readFile(file, 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_LINES) long.push({ file, lines });
  }
  return { counted, long: long.sort((a, b) => b.lines - a.lines) };
}

/** The local import graph; `runtime` leaves out imports only types use (they vanish when compiled). */
async function importGraph(runtime) {
  const result = await cruise(
    GRAPH_ROOTS,
    {
      tsPreCompilationDeps: !runtime,
      doNotFollow: { path: 'node_modules' },
      exclude: { path: '(^|/)(node_modules|dist)/' },
      moduleSystems: ['es6', 'cjs'],
    },
    { extensions: ['.ts', '.tsx', '.js', '.mjs'], extensionAlias: { '.js': ['.ts', '.tsx', '.js'] } },
    { tsConfig: { fileName: 'tsconfig.json' } },
  );
  const graph = new Map();
  for (const module of result.output.modules) {
    if (module.coreModule || module.couldNotResolve || module.source.includes('node_modules/')) continue;
    const deps = module.dependencies.filter((d) => !d.coreModule && !d.couldNotResolve && !d.resolved.includes('node_modules/'));
    graph.set(module.source, [...new Set(deps.map((d) => d.resolved))]);
  }
  return graph;
}

/** Strongly connected components of more than one module (or a module importing itself): Tarjan's, iterative. */
function cycles(graph) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const found = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node] = frame;
      const deps = graph.get(node) ?? [];
      if (frame[1] < deps.length) {
        const dep = deps[frame[1]++];
        if (!index.has(dep)) {
          index.set(dep, next);
          low.set(dep, next++);
          stack.push(dep);
          onStack.add(dep);
          work.push([dep, 0]);
        } else if (onStack.has(dep)) low.set(node, Math.min(low.get(node), index.get(dep)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
      }
    }
  }
  return found;
}

/** One path around a cycle, to show how it closes: from the first module back to it. */
function cyclePath(graph, component) {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const dep of graph.get(node) ?? []) {
      if (!members.has(dep)) continue;
      if (dep === start) {
        const path = [start];
        for (let at = node; at !== null && at !== start; at = previous.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(dep)) {
        previous.set(dep, node);
        queue.push(dep);
      }
    }
  }
  return component;
}

const [lines, runtimeGraph, fullGraph] = await Promise.all([longFiles(), importGraph(true), importGraph(false)]);
let broken = 0;

const found = cycles(runtimeGraph);
console.log(`runtime import cycles: ${found.length} (${runtimeGraph.size} modules in ${GRAPH_ROOTS.join(', ')})`);
for (const component of found) console.log(`  ${component.length} modules: ${cyclePath(runtimeGraph, component).join(' -> ')}`);
broken += found.length;

console.log(`source files over ${MAX_LINES} lines: ${lines.long.length} (of ${lines.counted} counted)`);
for (const { file, lines: n } of lines.long) console.log(`  ${file}: ${n} lines`);
broken += lines.long.length;

let layerViolations = 0;
for (const rule of LAYER_RULES) {
  const hits = [];
  for (const [from, deps] of fullGraph) {
    if (!rule.from.test(from)) continue;
    for (const to of deps) if (rule.to.test(to) && !rule.allow?.(from, to)) hits.push(`${from} -> ${to}`);
  }
  console.log(`${rule.name}: ${hits.length} import${hits.length === 1 ? '' : 's'} against it${hits.length ? ` (${rule.why})` : ''}`);
  for (const hit of hits) console.log(`  ${hit}`);
  layerViolations += hits.length;
}
broken += layerViolations;

if (broken > 0) {
  console.error(
    `\ncheck-structure: ${found.length} cycle(s), ${lines.long.length} long file(s), ${layerViolations} import(s) against the layers: see above and docs/architecture.md, "Structure rules"`,
  );
  process.exit(1);
}
console.log('\ncheck-structure: ok');

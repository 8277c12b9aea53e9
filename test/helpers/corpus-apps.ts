import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { JSON_EDITOR, MORE_APPS, selectPersonName } from './corpus-apps-more.js';
import type { StudioCanvas } from './studio-canvas.js';

/**
 * The corpus of real apps (issue 26, point 10): web applications we did not write, installed from npm
 * as devDependencies and served as they ship on 127.0.0.1 (test/helpers/static-server.ts). Each has a
 * task a person records through the studio canvas (`record`), the input slots it marks, and two input
 * sets with the outputs a gateway run must give. test/e2e/corpus-apps.test.ts runs them;
 * scripts/corpus-table.mjs turns its results into docs/corpus.md.
 */

export interface CorpusApp {
  /** Short name: the automation's name is `corpus-<id>`. */
  id: string;
  app: string;
  /** The npm package (a devDependency) and the folder of it that is served. */
  package: string;
  root: string;
  /** The page the automation starts on, under the served folder. */
  path: string;
  task: string;
  /** Drives the canvas; `site` is the app's start URL. Ends with every step captured. */
  record(studio: StudioCanvas, site: string): Promise<void>;
  /** Steps (1-based, as the studio numbers them) that become input slots, with their slot names. */
  slots: Record<number, string>;
  /** The captured op kinds, in order (the recording is checked against it). */
  kinds: string[];
  /**
   * Steps (1-based) the test marks optional with the step list's toggle (docs/recordings.md "Optional
   * steps"): skipped when their element does not turn up on a run.
   */
  optional?: number[];
  /** `skipped`: the optional steps a run must skip (journal `step_skipped`, `optional: target_absent`); none if left out. */
  runs: { inputs: Record<string, string>; output: Record<string, unknown>; skipped?: number[] }[];
  /** Interactions this app needs that the studio does not capture yet (for issue 28), if any. */
  needs?: string;
}

const modules = resolve(import.meta.dirname, '../../node_modules');
const require = createRequire(import.meta.url);

function lintVerdict(text: string): string {
  try {
    require('jsonlint').parse(text);
    return 'JSON is valid!';
  } catch (e) {
    return String(e).replace(/\s+/g, ' ').trim();
  }
}

const JSV_SCHEMA = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 18 }, email: { type: 'string' } } };

export const CORPUS: CorpusApp[] = [
  {
    id: 'todomvc',
    app: 'TodoMVC (vanilla JS)',
    package: 'todomvc',
    root: `${modules}/todomvc`,
    path: '/examples/vanillajs/index.html',
    task: 'Add two todos, tick the first done, read the active list and the completed list',
    async record(s) {
      const input = (t: import('playwright-core').Page) => t.locator('#new-todo');
      const heading = (t: import('playwright-core').Page) => t.getByRole('heading', { name: 'todos' });
      // The new todo is added on `change`: a click outside the field commits it (no Enter needed).
      await s.click(input);
      await s.type('Buy milk');
      await s.click(heading);
      await s.steps(3);
      await s.click(input);
      await s.type('Write report');
      await s.click(heading);
      await s.steps(5);
      await s.click((t) => t.locator('#todo-list li').first().locator('.toggle'));
      await s.steps(6);
      await s.click((t) => t.getByRole('link', { name: 'Active' }));
      await s.steps(7);
      await s.extract('active', (t) => t.locator('#todo-list'));
      await s.click((t) => t.getByRole('link', { name: 'Completed' }));
      await s.steps(9);
      await s.extract('done', (t) => t.locator('#todo-list'));
    },
    slots: { 2: 'first', 4: 'second' },
    kinds: ['navigate', 'fill', 'click', 'fill', 'click', 'click', 'click', 'extract', 'click', 'extract'],
    runs: [
      { inputs: { first: 'Feed the cat', second: 'Pay rent' }, output: { active: 'Pay rent', done: 'Feed the cat' } },
      { inputs: { first: 'Call mum', second: 'Water plants' }, output: { active: 'Water plants', done: 'Call mum' } },
    ],
  },
  {
    id: 'jsonlint',
    app: 'JSON Lint',
    package: 'jsonlint',
    root: `${modules}/jsonlint`,
    path: '/web/jsonlint.html',
    task: 'Paste a JSON document, ask for it reformatted, validate it and read the verdict',
    async record(s) {
      await s.click((t) => t.locator('#source'));
      await s.press('Control+A');
      await s.type('{"name": "flowctl", "tags": ["a", "b"]}');
      await s.click((t) => t.getByLabel('reformat JSON'));
      await s.steps(3);
      await s.click((t) => t.getByRole('button', { name: 'Validate' }));
      await s.steps(4);
      await s.extract('verdict', (t) => t.locator('#result'));
    },
    slots: { 2: 'document' },
    kinds: ['navigate', 'fill', 'click', 'click', 'extract'],
    runs: [
      { inputs: { document: '{"order": 42, "items": ["tea", "milk"]}' }, output: { verdict: lintVerdict('{"order": 42, "items": ["tea", "milk"]}') } },
      {
        inputs: { document: '{"order": 42,, "items": []}' },
        // The verdict JSON Lint's own parser gives (the package's Node entry), as the page shows it.
        output: { verdict: lintVerdict('{"order": 42,, "items": []}') },
      },
    ],
  },
  {
    id: 'jsoneditor',
    app: 'JSONEditor (switch mode example)',
    package: 'jsoneditor',
    root: `${modules}/jsoneditor`,
    path: '/examples/03_switch_mode.html',
    task: 'Switch to text mode, paste a document, preview it formatted, compact it, read both and the size',
    async record(s) {
      await s.click((t) => t.getByRole('button', { name: 'Tree ▾' }));
      await s.click((t) => t.getByRole('button', { name: 'Text', exact: true }));
      await s.steps(3);
      await s.click((t) => t.locator('textarea'));
      await s.press('Control+A');
      await s.type('{"name": "Ada", "langs": ["en", "fr"]}');
      // The mode button takes the focus: the text area's change is the fill.
      await s.click((t) => t.getByRole('button', { name: 'Text ▾' }));
      await s.steps(5);
      await s.click((t) => t.getByRole('button', { name: 'Preview', exact: true }));
      await s.steps(6);
      await s.extract('formatted', (t) => t.locator('.jsoneditor-preview'));
      await s.click((t) => t.getByRole('button', { name: /^Compact JSON data/ }));
      await s.steps(8);
      await s.extract('compact', (t) => t.locator('.jsoneditor-preview'));
      await s.extract('size', (t) => t.getByText(/^Size: /));
    },
    slots: { 4: 'document' },
    kinds: ['navigate', 'click', 'click', 'fill', 'click', 'click', 'extract', 'click', 'extract', 'extract'],
    runs: [jsonPreview({ order: 42, items: ['tea', 'milk'] }), jsonPreview({ city: 'Oslo', zip: 150, open: true, tags: [] })],
  },
  {
    id: 'json-editor',
    app: 'JSON Editor (advanced example)',
    ...JSON_EDITOR,
    task: "Collapse a person's location and pets, set the name and age, pick the gender, read the list of people, the person's heading and whether the form is valid",
    async record(s) {
      await selectPersonName(s);
      await s.type('Ada Lovelace');
      await s.click((t) => t.locator('input[name="root[0][age]"]'));
      await s.steps(4);
      await s.press('Control+A');
      await s.type('36');
      // Tab to the gender select; a letter picks the option (the select's change is the step).
      await s.press('Tab');
      await s.press('o');
      await s.steps(6);
      // The list of people (a tab per person) and the open person's heading.
      await s.extract('people', (t) => t.locator('.je-tabholder'));
      await s.extract('person', (t) => t.locator('#editor_holder b.required').first());
      await s.extract('validity', (t) => t.locator('#valid_indicator'));
    },
    slots: { 4: 'name', 5: 'age' },
    kinds: ['navigate', 'click', 'click', 'fill', 'fill', 'select', 'extract', 'extract', 'extract'],
    runs: [
      { inputs: { name: 'Grace Hopper', age: '45' }, output: { people: '0 - Grace Hopper', person: '0 - Grace Hopper', validity: 'valid' } },
      // Under the schema's minimum length (4) and age (18): the app says so.
      { inputs: { name: 'Al', age: '12' }, output: { people: '0 - Al', person: '0 - Al', validity: 'not valid' } },
    ],
  },
  {
    id: 'jsv',
    app: 'JSV: JSON Schema Validator',
    package: 'JSV',
    root: `${modules}/JSV`,
    path: '/examples/index.html',
    task: 'Pick the schema draft, enter an instance and a schema, validate, scroll down and read the report',
    async record(s) {
      // The label focuses the select; a letter picks the next option (its change is the step).
      await s.click((t) => t.getByText('Environment', { exact: true }));
      await s.press('j');
      await s.steps(2);
      await s.click((t) => t.locator('#json'));
      await s.type('{"name": "Ada", "age": 36, "email": "ada@example.test"}');
      await s.click((t) => t.locator('#schema'));
      await s.steps(3);
      await s.type(JSON.stringify(JSV_SCHEMA));
      await s.click((t) => t.getByRole('button', { name: 'Validate' }));
      await s.steps(5);
      await s.scroll(400);
      await s.extract('report', (t) => t.locator('#report'));
    },
    slots: { 3: 'instance' },
    kinds: ['navigate', 'select', 'fill', 'fill', 'click', 'extract'],
    runs: [jsvReport({ name: 'Grace', age: 45, email: 'grace@example.test' }), jsvReport({ name: 'Al', age: 12 })],
  },
];

/** A JSON document for the JSONEditor task, and what the app shows for it (formatted, compact, size of the compact text). */
function jsonPreview(value: unknown): { inputs: Record<string, string>; output: Record<string, unknown> } {
  const compact = JSON.stringify(value);
  return {
    inputs: { document: JSON.stringify(value, null, 1) },
    output: { formatted: JSON.stringify(value, null, 2).replace(/\s+/g, ' '), compact, size: `Size: ${Buffer.byteLength(compact)} B` },
  };
}

/** An instance for the JSV task, and the report the page writes for it (JSV's own validator, the page's own markup, as text). */
function jsvReport(instance: unknown): { inputs: Record<string, string>; output: Record<string, unknown> } {
  const { JSV } = require('JSV');
  // The task picks the option after Draft-03 with the keyboard: Draft-02.
  const env = JSV.createEnvironment('json-schema-draft-02');
  const report = env.validate(env.createInstance(instance, 'json'), env.createSchema(JSV_SCHEMA, null, 'schema'));
  const html = report.errors.length
    ? report.errors
        .map(
          (e: any) =>
            `<span>Problem with <code>${e.uri}</code> : </span><span>${e.message}</span><br/><span>Reported by <code>${e.schemaUri}</code></span><br/><span>Attribute "<code>${e.attribute}</code>"</span><span> (<code>${JSON.stringify(e.details)}</code>)</span>`,
        )
        .join('')
    : 'Input is valid!';
  // JSV in Node resolves the page's relative URIs ("json", "schema") under its urn: scheme; the page shows them without it.
  const text = html
    .replace(/<[^>]+>/g, '')
    .replaceAll('urn:', '')
    .replace(/\s+/g, ' ')
    .trim();
  return { inputs: { instance: JSON.stringify(instance) }, output: { report: text } };
}

// Apps added after the first five (test/helpers/corpus-apps-more.ts).
CORPUS.push(...MORE_APPS);

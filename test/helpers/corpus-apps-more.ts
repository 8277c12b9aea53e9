import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { CorpusApp } from './corpus-apps.js';
import type { StudioCanvas } from './studio-canvas.js';

/**
 * More apps of the corpus (test/helpers/corpus-apps.ts has the first five and the shape): TodoMVC's
 * Backbone.js example (typing committed by Enter alone), a form generator and a math expression tree,
 * all from their npm packages as they ship.
 */

const modules = resolve(import.meta.dirname, '../../node_modules');
const require = createRequire(import.meta.url);

/** JSON Editor's advanced example, as its package ships it (two tasks of the corpus record on it). */
export const JSON_EDITOR = {
  package: '@json-editor/json-editor',
  root: `${modules}/@json-editor/json-editor`,
  path: '/tests/pages/advanced.html',
} satisfies Partial<CorpusApp>;

/**
 * JSON Editor's opening steps: collapse the first person's location, then pets (its own fields come
 * up into view), then click the name field and select its text, ready for the name to be typed.
 */
export async function selectPersonName(s: StudioCanvas): Promise<void> {
  const collapse = (n: number) => (t: import('playwright-core').Page) => t.getByRole('button', { name: 'Collapse' }).nth(n);
  await s.click(collapse(2));
  await s.steps(2);
  await s.click(collapse(2));
  await s.steps(3);
  await s.click((t) => t.locator('input[name="root[0][name]"]'));
  await s.press('Control+A');
}

export const MORE_APPS: CorpusApp[] = [
  {
    id: 'todomvc-enter',
    app: 'TodoMVC (Backbone.js)',
    package: 'todomvc',
    root: `${modules}/todomvc`,
    path: '/examples/backbone/index.html',
    task: 'Add two todos with Enter and read both titles',
    async record(s) {
      // The field commits on Enter only (keypress; it clears itself: no blur, no change event).
      await s.click((t) => t.locator('#new-todo'));
      await s.type('Buy milk');
      await s.press('Enter');
      await s.steps(3);
      await s.type('Write report');
      await s.press('Enter');
      await s.steps(5);
      await s.extract('first', (t) => t.locator('#todo-list li').nth(0).locator('label'));
      await s.extract('second', (t) => t.locator('#todo-list li').nth(1).locator('label'));
    },
    slots: { 2: 'first', 4: 'second' },
    kinds: ['navigate', 'fill', 'press', 'fill', 'press', 'extract', 'extract'],
    runs: [
      { inputs: { first: 'Feed the cat', second: 'Pay rent' }, output: { first: 'Feed the cat', second: 'Pay rent' } },
      { inputs: { first: 'Call mum', second: 'Water plants' }, output: { first: 'Call mum', second: 'Water plants' } },
    ],
  },
  {
    id: 'jsonform',
    app: 'JSON Form (getting started example)',
    package: 'jsonform',
    root: `${modules}/jsonform`,
    path: '/example.html',
    task: 'Fill in the name and the age of the generated form, submit it and read the greeting',
    async record(s) {
      await s.click((t) => t.getByLabel('Name'));
      await s.type('Ada Lovelace');
      // The next field takes the focus: the name's change is the fill.
      await s.click((t) => t.getByLabel('Age'));
      await s.steps(2);
      await s.type('36');
      await s.click((t) => t.getByRole('button', { name: 'Submit' }));
      await s.steps(4);
      await s.extract('greeting', (t) => t.locator('#res'));
    },
    slots: { 2: 'name', 3: 'age' },
    kinds: ['navigate', 'fill', 'fill', 'click', 'extract'],
    runs: [jsonFormGreeting('Grace Hopper', '45'), jsonFormGreeting('Alan Turing', '41.5')],
  },
  {
    id: 'nerdamer',
    app: 'Nerdamer tree visualizer',
    package: 'nerdamer',
    root: `${modules}/nerdamer`,
    path: '/index.html',
    task: 'Enter a math expression, generate its expression tree and read the tree',
    async record(s) {
      await s.click((t) => t.locator('#input'));
      await s.type('x^2+2*x+1');
      // The button takes the focus: the field's change is the fill, then the click.
      await s.click((t) => t.getByRole('button', { name: 'Generate' }));
      await s.steps(3);
      // The whole tree: a point in its top padding picks the tree's outer list, not one node.
      await s.extract('tree', (t) => t.locator('#output .tree > ul'), { x: 4, y: 4 });
    },
    slots: { 2: 'expression' },
    kinds: ['navigate', 'fill', 'click', 'extract'],
    runs: [nerdamerTree('(a+b)*c'), nerdamerTree('sqrt(x)/2-y^3')],
  },
  {
    id: 'json-editor-optional',
    app: 'JSON Editor (advanced example), a validation message',
    ...JSON_EDITOR,
    task: "Set a person's name, click the name's validation message if the form shows one, read the person's heading and whether the form is valid",
    async record(s) {
      // A name under the schema's minimum length (4): once the field is committed (a click on the
      // page's heading), the app shows a message under it. Names of 4 or more never show it.
      await selectPersonName(s);
      await s.type('Al');
      await s.click((t) => t.getByRole('heading', { name: 'Advanced JSON Editor Example' }));
      await s.steps(5);
      await s.click((t) => t.getByText('Value must be at least 4 characters long.'));
      await s.steps(6);
      await s.extract('person', (t) => t.locator('#editor_holder b.required').first());
      await s.extract('validity', (t) => t.locator('#valid_indicator'));
    },
    slots: { 4: 'name' },
    kinds: ['navigate', 'click', 'click', 'fill', 'click', 'click', 'extract', 'extract'],
    // The click on the message: marked optional in the studio's step list.
    optional: [6],
    runs: [
      // Too short: the message shows and the step clicks it.
      { inputs: { name: 'Ada' }, output: { person: '0 - Ada', validity: 'not valid' } },
      // Long enough: no message, the step is skipped and the run goes on.
      { inputs: { name: 'Grace Hopper' }, output: { person: '0 - Grace Hopper', validity: 'valid' }, skipped: [6] },
    ],
  },
];

/** A name and an age for the JSON Form task, and the greeting the page's onSubmit writes for them (its markup, as text). */
function jsonFormGreeting(name: string, age: string): { inputs: Record<string, string>; output: Record<string, unknown> } {
  // The page: `'Hello ' + values.name + '.' + (values.age ? '<br/>You are ' + values.age + '.' : '')`, age a number.
  return { inputs: { name, age }, output: { greeting: `Hello ${name}.You are ${Number(age)}.` } };
}

/** An expression for the Nerdamer task, and the tree the page shows for it (nerdamer's own htmlTree, as text). */
function nerdamerTree(expression: string): { inputs: Record<string, string>; output: Record<string, unknown> } {
  const html: string = require('nerdamer').htmlTree(expression);
  return {
    inputs: { expression },
    output: {
      tree: html
        .replace(/<[^>]+>/g, '')
        .replace(/\s+/g, ' ')
        .trim(),
    },
  };
}

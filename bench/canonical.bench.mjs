// canonicalJson's own key-sorting serialiser against fast-json-stable-stringify, which it replaced
// (docs/architecture.md, "Written by hand, and why"): the deepest value each serialises on Node's
// default stack, and the time per call on values off the fast path (unsorted keys). Run once:
// `node bench/canonical.bench.mjs` (Node >= 23.6 loads src/canonical.ts with its types stripped).
import stringify from 'fast-json-stable-stringify';
import { canonicalJson } from '../src/canonical.ts';

function nested(depth) {
  let v = 'leaf';
  for (let i = 0; i < depth; i++) v = { b: i % 7, a: v };
  return v;
}

function deepest(fn) {
  let lo = 1;
  let hi = 200_000;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    try {
      fn(nested(mid));
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return lo;
}

// A step output's shape: 200 records of 12 fields each, keys not in sorted order.
const wide = Array.from({ length: 200 }, (_, i) =>
  Object.fromEntries(Array.from({ length: 12 }, (_, k) => [`f${(k * 7) % 12}_${String.fromCharCode(122 - k)}`, k % 3 ? `value ${i}-${k}` : i * k])),
);
const deep = nested(500);

function perCall(fn, value, rounds) {
  for (let i = 0; i < rounds / 10; i++) fn(value);
  const start = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) fn(value);
  return Number(process.hrtime.bigint() - start) / rounds / 1000;
}

if (canonicalJson(wide) !== stringify(wide) || canonicalJson(deep) !== stringify(deep)) throw new Error('not the same bytes');
const rows = [
  ['deepest value serialised (levels)', deepest(stringify), deepest(canonicalJson)],
  ['200 x 12 unsorted fields (us per call)', perCall(stringify, wide, 2000).toFixed(1), perCall(canonicalJson, wide, 2000).toFixed(1)],
  ['500 levels deep (us per call)', perCall(stringify, deep, 5000).toFixed(1), perCall(canonicalJson, deep, 5000).toFixed(1)],
];
console.log(`node ${process.version}`);
console.log('| measure | fast-json-stable-stringify | canonicalJson |');
console.log('|---|---|---|');
for (const [what, a, b] of rows) console.log(`| ${what} | ${a} | ${b} |`);

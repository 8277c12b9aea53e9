import { parseDocument, LineCounter } from 'yaml';
import { readFileSync } from 'node:fs';
import { parseFlowSource } from './.h1prof-lib.tmp.mjs';
const src = readFileSync('/tmp/bench-flow.yaml','utf8');
const fns = {
  plain: ()=>parseDocument(src),
  opts: ()=>parseDocument(src,{lineCounter:new LineCounter(), prettyErrors:false, uniqueKeys:true, merge:false, schema:'core', strict:true}),
  noUnique: ()=>parseDocument(src,{lineCounter:new LineCounter(), prettyErrors:false, uniqueKeys:false, merge:false, schema:'core', strict:true}),
  keepSource: ()=>parseDocument(src,{keepSourceTokens:false, prettyErrors:false}),
  full: ()=>parseFlowSource(src, 'f'),
};
const res = Object.fromEntries(Object.keys(fns).map(k=>[k,[]]));
for (let round=0; round<8; round++) for (const [k,fn] of Object.entries(fns)) { const t0=performance.now(); fn(); res[k].push(performance.now()-t0); }
for (const [k,s] of Object.entries(res)) { s.sort((a,b)=>a-b); console.log(k, s.map(x=>x.toFixed(0)).join(' ')); }

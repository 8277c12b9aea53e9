import { parseDocument, LineCounter } from 'yaml';
import { readFileSync } from 'node:fs';
import { parseFlowSource, compile, compileFlow, createToolRegistry, builtinTools, digestOf } from './.h1prof-lib.tmp.mjs';
const src = readFileSync('/tmp/bench-flow.yaml','utf8');
const tools = createToolRegistry(builtinTools());
const flow = compile(src, {file:'f', tools}).flow;
const fns = {
  plain: ()=>parseDocument(src),
  full: ()=>parseFlowSource(src, 'f'),
  compile: ()=>{ const r = compile(src, {file:'f', tools}); digestOf(r.spec); },
  compileFlow: ()=>compileFlow(flow, {file:'f', tools}),
};
const res = Object.fromEntries(Object.keys(fns).map(k=>[k,[]]));
for (let round=0; round<10; round++) for (const [k,fn] of Object.entries(fns)) { const c0=process.cpuUsage(); fn(); const c=process.cpuUsage(c0); res[k].push((c.user+c.system)/1000); }
for (const [k,s] of Object.entries(res)) { s.sort((a,b)=>a-b); console.log(k, 'cpu ms', s.map(x=>x.toFixed(0)).join(' ')); }

import { readFileSync } from 'node:fs';
import { compile, compileFlow, builtinTools, createToolRegistry, digestOf, parseFlowSource } from './.h1prof-lib.tmp.mjs';
const src = readFileSync('/tmp/bench-flow.yaml', 'utf8');
const tools = createToolRegistry(builtinTools());
function t(name, fn){ for(let i=0;i<3;i++) fn(); const s=[]; for(let i=0;i<10;i++){const t0=performance.now(); fn(); s.push(performance.now()-t0);} s.sort((a,b)=>a-b); console.log(name, s[5].toFixed(1)); }
let r;
t('parseFlowSource', () => parseFlowSource(src, 'f'));
t('compile', () => { r = compile(src, { file: 'f', tools }); if (!r.ok) throw new Error('x'); digestOf(r.spec); });
t('compileFlow', () => compileFlow(r.flow, { file: 'f', tools }));

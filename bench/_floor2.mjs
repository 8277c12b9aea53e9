import { Hono } from 'hono';
import { getRequestListener } from '@hono/node-server';
import { createServer } from 'node:http';
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
const payload = readFileSync('/tmp/prof2/run.json', 'utf8');
const run = JSON.parse(payload);
const app = new Hono();
app.post('/flows/:name/runs', async (c) => {
  const b = await c.req.json();
  let prev = null; const journal = [];
  for (const e of run.journal) { const { at, digest, ...rest } = e; const body = { ...rest, prev }; const d = 'sha256:' + hash('sha256', JSON.stringify(body), 'hex'); prev = d; journal.push({ ...body, at, digest: d }); }
  return c.json({ ...run, journal });
});
const server = process.env.BARE ? createServer((req,res)=>{ let s=0; req.on('data',c=>s+=c.length); req.on('end',()=>{JSON.parse('{"who":"Ada","times":2}'); res.writeHead(200,{'content-type':'application/json; charset=utf-8'}); res.end(payload);}); }) : createServer(getRequestListener(app.fetch));
server.listen(8124, '127.0.0.1');
setTimeout(() => process.exit(0), 7000);

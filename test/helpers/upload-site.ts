import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { Client } from './hosted.js';

/**
 * A page with a file input, served on 127.0.0.1, for upload automations in hosted runs. Choose a file
 * (Receipt), type a note (Note), press Check: the page reads the file in the browser and shows
 * `<note>: <name> <size> bytes: <first line>` (testid `out`). `version` 2 renames the button (Verify,
 * testid `verify`, lower on the page): the capture's click drifts.
 */

export const RECEIPT = Buffer.from('item,total\npears,3\nchips,1\n');
export const RECEIPT_DIGEST = `sha256:${createHash('sha256').update(RECEIPT).digest('hex')}`;
/** What the page shows for the receipt and a note. */
export const outcome = (note: string) => `${note}: receipt.csv ${RECEIPT.length} bytes: item,total`;

const box = (top: number) => `style="position:absolute;left:40px;top:${top}px;width:300px;height:32px;margin:0;box-sizing:border-box"`;
const label = (top: number) => `style="position:absolute;left:360px;top:${top}px"`;
/** The centre of a box at `top` (a click on it in a 800 x 600 studio). */
export const boxAt = (top: number) => ({ x: 190, y: top + 16 });
/** Where the version 2 button is. */
export const VERIFY_TOP = 220;

export interface UploadSite {
  url: string;
  version: number;
  /** What the page showed, each time Check (or Verify) was pressed, in order. */
  seen: string[];
  server: Server;
  close(): Promise<void>;
}

export async function startUploadSite(): Promise<UploadSite> {
  const site = { url: '', version: 1, seen: [] } as unknown as UploadSite;
  site.server = createServer((req, res) => {
    if (req.url === '/seen' && req.method === 'POST') {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => {
        site.seen.push(body);
        res.writeHead(204).end();
      });
      return;
    }
    if (req.url !== '/form') return void res.writeHead(404).end();
    const button =
      site.version === 1 ? `<button data-testid="check" ${box(160)}>Check</button>` : `<button data-testid="verify" ${box(VERIFY_TOP)}>Verify</button>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Receipts</title></head><body style="margin:0;font:16px sans-serif">` +
        `<label for="f" ${label(40)}>Receipt</label><input id="f" type="file" ${box(40)}>` +
        `<label for="n" ${label(100)}>Note</label><input id="n" ${box(100)}>${button}` +
        `<script>document.querySelector('button').onclick = async () => {
          const f = document.getElementById('f').files[0];
          const p = document.createElement('p');
          p.dataset.testid = 'out';
          p.style.cssText = 'position:absolute;left:40px;top:300px';
          p.textContent = document.getElementById('n').value + ': ' + (f ? f.name + ' ' + f.size + ' bytes: ' + (await f.text()).split('\\n')[0] : 'no file');
          document.body.append(p);
          await fetch('/seen', { method: 'POST', body: p.textContent });
        };</script></body></html>`,
    );
  });
  await new Promise<void>((r) => site.server.listen(0, '127.0.0.1', r));
  site.url = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
  site.close = () => new Promise<void>((r) => site.server.close(() => r()));
  return site;
}

/** The capture: open the form, attach receipt.csv, type the note (input slot `note`), Check, read the outcome. */
export const uploadOps = (site: UploadSite) => [
  { kind: 'navigate', url: `${site.url}/form` },
  { kind: 'upload', target: { label: 'Receipt' }, files: 'receipt.csv' },
  { kind: 'fill', target: { label: 'Note' }, value: 'first', slot: 'note' },
  { kind: 'click', target: { testid: 'check' } },
  { kind: 'extract', target: { testid: 'out' }, name: 'outcome' },
];

/**
 * An automation `name` with the upload capture, published by the owner. The file is attached to the
 * capture through `PUT /api/authoring/{id}/files/{name}` (the studio's own file transfer is tested in
 * hosted-studio.test.ts); its bytes go to the org's files by digest.
 */
export async function publishUploadAutomation(owner: Client, site: UploadSite, name: string): Promise<string> {
  const a = (await owner.call('POST', '/api/automations', { name, site: `${site.url}/form`, task: 'Attach the receipt and check it' })).body.automation;
  expect((await owner.call('PUT', `/api/authoring/${a.id}/files/receipt.csv`, { content_base64: RECEIPT.toString('base64') })).status).toBe(200);
  expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: uploadOps(site), input_slots: ['note'] })).status).toBe(200);
  const published = await owner.call('POST', `/api/authoring/${a.id}/publish`);
  expect([published.status, published.body.error]).toEqual([200, undefined]);
  return a.id as string;
}

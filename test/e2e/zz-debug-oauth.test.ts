import { it } from 'vitest';
import { startHosted } from '../helpers/hosted.js';
it('debug', async () => {
  const h = await startHosted({}, { logger: { info: () => {}, warn: console.warn, error: console.error, debug: () => {} } as never });
  for (const p of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    const r = await fetch(h.url + p);
    console.log(p, r.status, [...r.headers], (await r.text()).slice(0, 1500));
  }
  await h.close();
});

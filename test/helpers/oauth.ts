import { join, resolve } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';

const SHOTS = join(resolve(import.meta.dirname, '../..'), 'test-artifacts', 'screens');

/**
 * A chat client's side of the MCP OAuth flow for the hosted e2e tests: the official SDK's own flow
 * (discovery, dynamic registration, PKCE) through an in-memory `OAuthClientProvider`, and the user's
 * consent given in Chromium by a signed-in user on the web app's consent page.
 */

/** The client's redirect URI: never listened on; the browser's navigation to it is caught. */
export const REDIRECT = 'http://127.0.0.1:9/oauth-callback';

export class MemoryAuthProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(readonly name: string) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

export function mcpTransport(base: string, provider: MemoryAuthProvider) {
  return new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
}

/** Connect; with no tokens yet the SDK registers the client and hands over the authorization URL. */
export async function startAuthorization(base: string, provider: MemoryAuthProvider): Promise<{ url: URL; transport: StreamableHTTPClientTransport }> {
  const transport = mcpTransport(base, provider);
  const client = new McpClient({ name: provider.name, version: '1.0.0' });
  const err = await client.connect(transport).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof UnauthorizedError) || !provider.authorizationUrl) throw new Error(`expected the OAuth flow to start, got ${String(err)}`);
  return { url: provider.authorizationUrl, transport };
}

export interface ConsentChoice {
  org?: string;
  mode?: 'live' | 'test';
  automations?: string[];
  deny?: boolean;
}

/**
 * In a fresh Chromium context signed in with `sessionCookie`: open the authorization URL, make the
 * choices on the consent page, click "Allow access" (or "Deny"), and return the URL the browser was
 * sent to at the client's redirect URI.
 */
export async function consentInBrowser(browser: Browser, base: string, sessionCookie: string, url: URL, choice: ConsentChoice): Promise<URL> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  try {
    await context.addCookies([{ name: 'svc_session', value: sessionCookie, url: base }]);
    const page = await context.newPage();
    let resolveRedirect!: (u: URL) => void;
    const redirected = new Promise<URL>((r) => {
      resolveRedirect = r;
    });
    await page.route(`${REDIRECT}**`, async (route) => {
      resolveRedirect(new URL(route.request().url()));
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' });
    });
    await page.goto(url.toString());
    await page
      .getByRole('button', { name: 'Allow access' })
      .waitFor({ timeout: 60_000 })
      .catch(async (err: unknown) => {
        throw new Error(`no consent page at ${page.url()}: ${(await page.evaluate(() => document.body.innerText)).slice(0, 500)} (${String(err)})`);
      });
    if (choice.deny) {
      await page.getByRole('button', { name: 'Deny' }).click();
      return await redirected;
    }
    if (choice.org) await page.getByLabel('Organization').selectOption(choice.org);
    if (choice.mode) await page.getByLabel('Mode').selectOption(choice.mode);
    if (choice.automations) {
      await page.getByLabel('Automations').selectOption('some');
      for (const name of choice.automations) await page.getByRole('checkbox', { name }).check();
    }
    // The page as the user sees it, at phone and desktop width (test-artifacts/screens, gitignored: to be looked at).
    await page.screenshot({ path: join(SHOTS, 'consent-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: join(SHOTS, 'consent-1280.png'), fullPage: true });
    await page.getByRole('button', { name: 'Allow access' }).click();
    return await redirected;
  } finally {
    await context.close();
  }
}

/** The whole flow: start, consent in the browser, exchange the code; a connected SDK client. */
export async function connectWithOAuth(browser: Browser, base: string, sessionCookie: string, provider: MemoryAuthProvider, choice: ConsentChoice) {
  const { url, transport } = await startAuthorization(base, provider);
  const back = await consentInBrowser(browser, base, sessionCookie, url, choice);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code at the redirect URI: ${back.toString()}`);
  await transport.finishAuth(code);
  const client = new McpClient({ name: provider.name, version: '1.0.0' });
  await client.connect(mcpTransport(base, provider));
  return client;
}

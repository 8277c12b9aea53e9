import { resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * A headless MCP Apps host for tests: a page that shows an app's HTML in a sandboxed iframe (opaque
 * origin, scripts only, a CSP that allows no network) and talks to it with the ext-apps SDK's own
 * host side (`AppBridge` over `PostMessageTransport`, bundled for the browser here), the way a chat
 * client does: initialize, then the tool's input and result.
 */

const ROOT = resolve(import.meta.dirname, '../..');

/** The CSP a host applies to an app that declares no domain (ext-apps spec: no network at all). */
export const NO_NETWORK_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'";

export async function appHostPage(): Promise<string> {
  const out = await build({
    stdin: {
      contents:
        "import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'; globalThis.McpApps = { AppBridge, PostMessageTransport };",
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    logLevel: 'silent',
  });
  const bridge = out.outputFiles[0]!.text.replaceAll('</script', '<\\/script');
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<style>body{margin:0;padding:8px;background:#eef0f3;font-family:sans-serif}#host{background:#fff;border-radius:12px;overflow:hidden}</style>
<script>${bridge}</script></head><body><div id="host"></div><script>
window.hostEvents = [];
window.showApp = async (o) => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.setAttribute('title', 'MCP App');
  frame.style.cssText = 'width:100%;border:0;display:block;height:120px';
  document.getElementById('host').replaceChildren(frame);
  const bridge = new McpApps.AppBridge(null, { name: 'flowctl-test-host', version: '1.0.0' }, { openLinks: {} }, {
    hostContext: { theme: o.theme, displayMode: 'inline', platform: 'web' },
  });
  bridge.onsizechange = (p) => { if (p.height) frame.style.height = p.height + 'px'; window.hostEvents.push('size-changed'); };
  const initialized = new Promise((r) => { bridge.oninitialized = r; });
  await bridge.connect(new McpApps.PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = o.html;
  await initialized;
  window.hostEvents.push('initialized');
  await bridge.sendToolInput({ arguments: o.args });
  await bridge.sendToolResult(o.result);
  window.hostEvents.push('result-sent');
};
</script></body></html>`;
}

/** The app's HTML with the host's CSP in its head (as a host serving it in a sandbox would apply it). */
export function withCsp(html: string, csp: string = NO_NETWORK_CSP): string {
  return html.replace('<head>', `<head><meta http-equiv="Content-Security-Policy" content="${csp}">`);
}

import WebSocket from 'ws';

/**
 * A client of the hosted service's live sockets (the studio's `/api/authoring/{id}/live`, the run
 * live view's `/api/automations/{id}/live`): every message kept, waits that end on a matching
 * message (never on time), and the studio's input messages.
 */
export class Viewer {
  readonly messages: any[] = [];
  /** The close code and reason, once the socket has closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: { pred: (m: any) => boolean; resolve: (m: any) => void }[] = [];

  constructor(readonly ws: WebSocket) {
    this.closed = new Promise((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      this.messages.push(m);
      this.waiters = this.waiters.filter((w) => (w.pred(m) ? (w.resolve(m), false) : true));
    });
  }

  /** Open `url`; rejects with `{status}` when the upgrade is refused. `options`: ws client options (`autoPong`). */
  static open(url: string, headers: Record<string, string>, options: WebSocket.ClientOptions = {}): Promise<Viewer> {
    const ws = new WebSocket(url, { ...options, headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Viewer(ws)));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  /** The first message matching `pred`: one already received (unless `already` is false), or the next. */
  next(pred: (m: any) => boolean, already = true): Promise<any> {
    const found = already ? this.messages.find(pred) : undefined;
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  send(m: unknown): void {
    this.ws.send(JSON.stringify(m));
  }

  /** A left click at a page point: move, down, up. */
  click(p: { x: number; y: number }): void {
    this.send({ type: 'mouse', action: 'move', x: p.x, y: p.y });
    this.send({ type: 'mouse', action: 'down', x: p.x, y: p.y, button: 'left', clickCount: 1 });
    this.send({ type: 'mouse', action: 'up', x: p.x, y: p.y, button: 'left', clickCount: 1 });
  }

  /** The page at `path` has its DOM (the capture script listens), or with `complete`, its frames too. */
  loaded(path: string, complete = false): Promise<any> {
    return this.next((m) => m.type === 'loaded' && new URL(m.url).pathname === path && (!complete || m.complete === true));
  }

  /** The ops captured so far. */
  ops(): any[] {
    return this.messages.filter((m) => m.type === 'op').map((m) => m.op);
  }

  /** Wait until at least `n` ops are captured; they are returned. */
  async opCount(n: number): Promise<any[]> {
    // Re-checked on every message until the count is reached; each wait ends on a message.
    while (this.ops().length < n) await this.next(() => true, false);
    return this.ops();
  }

  frames(): any[] {
    return this.messages.filter((m) => m.type === 'frame');
  }

  /** A round trip: every message sent before it has been read by the server. */
  roundTrip(): Promise<void> {
    return new Promise((r) => {
      this.ws.once('pong', () => r());
      this.ws.ping();
    });
  }

  /** Resolves once `n` pings of the service have arrived from now on. */
  pings(n: number): Promise<void> {
    return new Promise((resolve) => {
      let seen = 0;
      const on = () => {
        if (++seen >= n) {
          this.ws.off('ping', on);
          resolve();
        }
      };
      this.ws.on('ping', on);
    });
  }

  /** What the viewer was told, frames left out. */
  text(): string {
    return JSON.stringify(this.messages.filter((m) => m.type !== 'frame'));
  }

  close(): void {
    this.ws.close();
  }
}

/** The upgrade's HTTP answer when it is refused (no upgrade happens). */
export function refused(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.once('error', reject);
  });
}

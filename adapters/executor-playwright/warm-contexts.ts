import type { BrowserContext, Page } from 'playwright-core';
import type { EgressProxy } from './egress-proxy.js';

/**
 * The warm pool (docs/browser.md, "Warm pool"): browser contexts made ready before a run asks for
 * one, each with its blank page, its init scripts and (for runs under an egress guard) its own proxy
 * not yet bound to any guard. A run takes one that no run ever used: the pool hands each context out
 * once and never takes one back (a run's context is closed when the run ends). At most `size` wait;
 * they are refilled in the background when a run's context closes, and all closed by `drain`.
 */

/** A context made ready for a run: nothing has been loaded in it yet. */
export interface PreparedContext {
  context: BrowserContext;
  page: Page;
  /** For runs under an egress guard: the context's proxy, refusing everything until bound. */
  proxy?: EgressProxy;
}

export class WarmContexts {
  private ready: PreparedContext[] = [];
  private readonly filling = new Set<Promise<void>>();
  /** Whether the contexts to keep ready are egress-guarded: the kind of the last run that asked. */
  private guarded: boolean | undefined;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly prepare: (guarded: boolean) => Promise<PreparedContext>,
    private readonly discard: (prepared: Pick<PreparedContext, 'context' | 'proxy'>) => Promise<void>,
  ) {}

  /** Contexts waiting now. */
  get waiting(): number {
    return this.ready.length;
  }

  /** Start filling the pool with contexts of this kind (the service calls it at start-up). */
  warm(guarded: boolean): void {
    this.switchKind(guarded);
    this.refill();
  }

  /**
   * A ready context of this kind, never handed out before (undefined when none is ready). The pool is
   * refilled when a run's context closes (`refill`), not here: making a context while the run that
   * just took one loads its first page slowed that page down (measured on 2 loaded cores).
   */
  take(guarded: boolean): PreparedContext | undefined {
    if (this.size <= 0 || this.closed) return undefined;
    this.switchKind(guarded);
    let taken: PreparedContext | undefined;
    while (!taken && this.ready.length > 0) {
      const next = this.ready.shift()!;
      if (usable(next)) taken = next;
      else void this.discard(next);
    }
    return taken;
  }

  /** Drop every waiting context (the browser went away). */
  forget(): void {
    const old = this.ready;
    this.ready = [];
    for (const p of old) void this.discard(p);
  }

  /** Close every waiting context and those being made; no more are made. */
  async drain(): Promise<void> {
    this.closed = true;
    while (this.filling.size > 0) await Promise.allSettled([...this.filling]);
    const old = this.ready;
    this.ready = [];
    await Promise.all(old.map((p) => this.discard(p)));
  }

  private switchKind(guarded: boolean): void {
    if (this.guarded === guarded) return;
    this.guarded = guarded;
    this.forget();
  }

  /** Make contexts until `size` wait (or are being made), in the background: after a run's context closed. */
  refill(): void {
    const kind = this.guarded;
    if (kind === undefined) return;
    // Bounded: at most `size` waiting or being made. A failure stops the refill until the next close.
    while (!this.closed && this.ready.length + this.filling.size < this.size) {
      const job: Promise<void> = this.prepare(kind).then(
        (prepared) => {
          this.filling.delete(job);
          if (this.closed || this.guarded !== kind || !usable(prepared)) return this.discard(prepared);
          this.ready.push(prepared);
        },
        () => {
          this.filling.delete(job);
        },
      );
      this.filling.add(job);
    }
  }
}

function usable(p: PreparedContext): boolean {
  return !p.page.isClosed() && p.context.browser()?.isConnected() !== false;
}

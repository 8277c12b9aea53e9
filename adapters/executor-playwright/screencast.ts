import type { CDPSession } from 'playwright-core';
import type { BrowserPool, RunSession } from './browser-pool.js';

/**
 * Live frames of a run's page from CDP `Page.startScreencast`, for a live view. Capture runs only while
 * at least one subscriber listens to that run: it starts on the first subscribe (or when the run's page
 * opens, if someone is already waiting) and stops on the last unsubscribe or when the run ends.
 */

export interface ScreencastFrame {
  runId: string;
  /** JPEG bytes, base64 (as CDP sends them; ready for a WebSocket or a data: URL). */
  data: string;
  format: 'jpeg';
  /** CDP frame metadata: deviceWidth, deviceHeight, timestamp, offsetTop, pageScaleFactor, scroll offsets. */
  metadata: Record<string, unknown>;
}

export interface Screencast {
  /** Receive frames of `runId` until the returned function is called. Subscribing before the run starts is fine. */
  subscribe(runId: string, onFrame: (frame: ScreencastFrame) => void): () => void;
  /** Runs being captured right now (a run is captured only while someone subscribes and its page is open). */
  active(): string[];
}

export interface ScreencastOptions {
  /** JPEG quality 0-100. Default 60. */
  quality?: number;
  /** Deliver every Nth frame. Default 1. */
  everyNthFrame?: number;
}

export function createScreencast(pool: BrowserPool, options: ScreencastOptions = {}): Screencast & { attach(): void } {
  const listeners = new Map<string, Set<(frame: ScreencastFrame) => void>>();
  const capturing = new Map<RunSession, Promise<CDPSession | undefined>>();

  function emit(runId: string, frame: ScreencastFrame): void {
    for (const fn of listeners.get(runId) ?? []) {
      try {
        fn(frame);
      } catch {
        // A subscriber's bug must not stop the capture for the others.
      }
    }
  }

  function start(session: RunSession): void {
    if (capturing.has(session)) return;
    const started = (async () => {
      const cdp = await session.context.newCDPSession(session.page);
      cdp.on('Page.screencastFrame', (f) => {
        emit(session.runId, { runId: session.runId, data: f.data, format: 'jpeg', metadata: { ...f.metadata } });
        cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {});
      });
      await cdp.send('Page.startScreencast', { format: 'jpeg', quality: options.quality ?? 60, everyNthFrame: options.everyNthFrame ?? 1 });
      return cdp;
    })().catch(() => undefined);
    capturing.set(session, started);
  }

  async function stop(session: RunSession): Promise<void> {
    const started = capturing.get(session);
    if (!started) return;
    capturing.delete(session);
    const cdp = await started;
    await cdp?.send('Page.stopScreencast').catch(() => {});
    await cdp?.detach().catch(() => {});
  }

  return {
    attach() {
      pool.onOpen = (session) => {
        if (listeners.get(session.runId)?.size) start(session);
      };
      pool.onClose = (session) => stop(session);
      // The live view shows the page the run acts on: a new tab or popup it followed, or one it switched to.
      pool.onPageChange = async (session) => {
        if (!capturing.has(session)) return;
        await stop(session);
        if (listeners.get(session.runId)?.size) start(session);
      };
    },
    subscribe(runId, onFrame) {
      let set = listeners.get(runId);
      if (!set) listeners.set(runId, (set = new Set()));
      set.add(onFrame);
      for (const session of pool.sessionsOf(runId)) start(session);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        set.delete(onFrame);
        if (set.size > 0) return;
        listeners.delete(runId);
        for (const session of pool.sessionsOf(runId)) void stop(session);
      };
    },
    active() {
      return [...new Set([...capturing.keys()].map((s) => s.runId))];
    },
  };
}

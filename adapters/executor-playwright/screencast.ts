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

  /** Sessions whose capture is waiting for their page to load before trying again. */
  const retrying = new Set<RunSession>();
  const open = (session: RunSession) => pool.sessionsOf(session.runId).includes(session) && !session.page.isClosed();

  function start(session: RunSession, attempt = 1): Promise<unknown> {
    const current = capturing.get(session);
    if (current) return current;
    const page = session.page;
    const started: Promise<CDPSession | undefined> = (async () => {
      const cdp = await session.context.newCDPSession(page);
      cdp.on('Page.screencastFrame', (f) => {
        emit(session.runId, { runId: session.runId, data: f.data, format: 'jpeg', metadata: { ...f.metadata } });
        cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {});
      });
      try {
        await cdp.send('Page.startScreencast', { format: 'jpeg', quality: options.quality ?? 60, everyNthFrame: options.everyNthFrame ?? 1 });
      } catch (err) {
        await cdp.detach().catch(() => {});
        throw err;
      }
      return cdp;
    })().catch(() => {
      // Chromium refuses to start while the page is between documents ("Not attached to an active
      // page": a navigation committing in another renderer). Forget this attempt, so the capture is not
      // taken for running, and try again once the page's document has loaded (a few times at most).
      if (capturing.get(session) === started) capturing.delete(session);
      if (attempt < 4 && !retrying.has(session)) {
        retrying.add(session);
        void page
          .waitForLoadState('load')
          .catch(() => {})
          .then(() => {
            retrying.delete(session);
            if (listeners.get(session.runId)?.size && open(session) && session.page === page) void start(session, attempt + 1);
          });
      }
      return undefined;
    });
    capturing.set(session, started);
    return started;
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
      // A subscriber already waits: the capture starts before the run's first navigation (openSession
      // awaits this), while the page is blank and idle, never during the navigation's commit.
      pool.onOpen = async (session) => {
        if (listeners.get(session.runId)?.size) await start(session);
      };
      pool.onClose = (session) => stop(session);
      // The live view shows the page the run acts on: a new tab or popup it followed, or one it switched to.
      pool.onPageChange = async (session) => {
        if (!capturing.has(session)) return;
        await stop(session);
        if (listeners.get(session.runId)?.size) await start(session);
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

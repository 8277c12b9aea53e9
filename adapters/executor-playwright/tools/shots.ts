import type { BrowserContext, CDPSession, Page } from 'playwright-core';

/**
 * Step screenshots from the frames Chromium already draws (docs/browser.md, "Screenshots"). A capture
 * per step (`Page.captureScreenshot`) costs about 30 ms of waiting for a frame, reading it back and
 * encoding it, on the step's path. Instead the run's current page is screencast (CDP
 * `Page.startScreencast`: a JPEG of every frame the page's changes cause, none while nothing
 * changes), and a step's picture is the first frame drawn after the step ended: it shows what the
 * step did. The step does not wait for it; only the next action does, before its input reaches the
 * page (`gate`), and only until that frame came or GRACE_MS after the step passed (a step that changed
 * nothing draws no frame: its picture is the last one drawn, which still shows the page). A read
 * changes nothing: its picture is the last frame as soon as the pictures before it are decided.
 *
 * Only unmasked pages are pictured this way (tools/step.ts decides); a page with a password input or
 * a secret-filled field is captured with the masks painted in, as before.
 */

/** How long after a step its picture waits for a frame drawn after it. */
export const GRACE_MS = 40;
/**
 * A frame drawn this little before the step's end still shows it: the step's last round trip (the
 * input's acknowledgement) reaches us a moment after the page changed and drew.
 */
const EARLY_MS = 4;

interface Frame {
  /** base64 JPEG, as CDP sends it. */
  data: string;
  /** When Chromium drew it (epoch ms, the host's clock). */
  drawnAt: number;
}

interface Waiter {
  after: number;
  settle(frame: Frame | undefined): void;
}

export class FrameShots {
  private page: Page | undefined;
  private cdp: CDPSession | undefined;
  private latest: Frame | undefined;
  private readonly waiters = new Set<Waiter>();
  /** Pictures not decided yet: the next action waits for them (`gate`). */
  private readonly undecided = new Set<Promise<unknown>>();

  constructor(private readonly context: BrowserContext) {}

  /**
   * Screencast `page` (the run's current page) from now on; false when Chromium refuses right now
   * (the page is between documents): that step is captured the direct way and the next one tries again.
   */
  async follow(page: Page): Promise<boolean> {
    if (this.page === page && this.cdp) return true;
    await this.stop();
    let cdp: CDPSession | undefined;
    try {
      cdp = await this.context.newCDPSession(page);
      cdp.on('Page.screencastFrame', (f) => {
        cdp!.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {});
        if (this.cdp !== cdp) return;
        const stamp = Number(f.metadata.timestamp);
        this.arrived({ data: f.data, drawnAt: Number.isFinite(stamp) ? stamp * 1000 : Date.now() });
      });
      await cdp.send('Page.startScreencast', { format: 'jpeg', quality: SHOT_QUALITY, everyNthFrame: 1 });
    } catch {
      await cdp?.detach().catch(() => {});
      return false;
    }
    this.page = page;
    this.cdp = cdp;
    return true;
  }

  /**
   * The picture of a step that ended at `endedAt` (epoch ms): the first frame drawn after it, or the
   * last one drawn when none came within GRACE_MS. `changed: false` (a read): the last frame, once the
   * earlier pictures are decided. Never rejects; undefined when no frame was ever drawn.
   */
  picture(endedAt: number, changed: boolean): Promise<Uint8Array | undefined> {
    const frame = changed ? this.firstAfter(endedAt - EARLY_MS) : Promise.allSettled([...this.undecided]).then(() => this.latest);
    this.undecided.add(frame);
    void frame.then(() => this.undecided.delete(frame));
    return frame.then((f) => (f ? Buffer.from(f.data, 'base64') : undefined));
  }

  /** Before the next action acts: every earlier picture is decided (each within GRACE_MS of its step). */
  async gate(): Promise<void> {
    if (this.undecided.size > 0) await Promise.allSettled([...this.undecided]);
  }

  /** Stop the screencast; undecided pictures take the last frame. */
  async stop(): Promise<void> {
    const cdp = this.cdp;
    this.cdp = undefined;
    this.page = undefined;
    for (const w of [...this.waiters]) w.settle(this.latest);
    if (!cdp) return;
    await cdp.send('Page.stopScreencast').catch(() => {});
    await cdp.detach().catch(() => {});
  }

  private firstAfter(after: number): Promise<Frame | undefined> {
    if (this.latest && this.latest.drawnAt >= after) return Promise.resolve(this.latest);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        after,
        settle: (frame) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(frame);
        },
      };
      const timer = setTimeout(() => waiter.settle(this.latest), Math.max(0, after + EARLY_MS + GRACE_MS - Date.now()));
      this.waiters.add(waiter);
    });
  }

  private arrived(frame: Frame): void {
    this.latest = frame;
    for (const w of [...this.waiters]) if (frame.drawnAt >= w.after) w.settle(frame);
  }
}

/** JPEG quality of step screenshots (the screencast's and the direct capture's). */
export const SHOT_QUALITY = 70;

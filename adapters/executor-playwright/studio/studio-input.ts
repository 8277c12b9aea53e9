import type { CDPSession, Page } from 'playwright-core';
import type { StudioInput } from '../../../src/ports/studio.js';

/**
 * The studio viewer's input into its page, in order (see studio-browser.ts): mouse as CDP
 * `Input.dispatchMouseEvent`, text as `Input.insertText`, keys through Playwright's keyboard. A move
 * waiting behind another input is replaced by the next move. HTML5 drags the page starts are
 * intercepted (`Input.setInterceptDrags`) and relayed as `Input.dispatchDragEvent`.
 */
export interface StudioInputQueue {
  /** Queue one input (dropped unless the page accepts input now). */
  input(input: StudioInput): void;
  /** Every input queued so far is dispatched (input queued meanwhile too). */
  drained(): Promise<void>;
}

const BUTTONS: Record<string, number> = { left: 1, right: 2, middle: 4, none: 0 };

export async function startStudioInput(
  page: Page,
  cdp: CDPSession,
  opts: {
    /** The page is closed: nothing more is dispatched. */
    isClosed(): boolean;
    /** Input is taken now (not while the page is closed or a replay runs). */
    accepting(): boolean;
    onNotice(text: string): void;
  },
): Promise<StudioInputQueue> {
  // Input, in order; a move waiting behind another input is replaced by the next move.
  const queue: StudioInput[] = [];
  /** The dispatch loop while it runs (drained waits for it). */
  let pumping: Promise<void> | undefined;
  let held = 0;
  let last = { x: 0, y: 0 };
  let dragAt = { x: -1, y: -1 };
  // HTML5 drags are handed to us; one in progress holds its drag data.
  let drag: { data: unknown; entered: boolean } | null = null;
  let dragArrived: (() => void) | null = null;
  cdp.on('Input.dragIntercepted', (e) => {
    if (opts.isClosed()) return;
    drag = { data: e.data, entered: false };
    dragArrived?.();
    // Released before the drag was known: it ends where the pointer is.
    if ((held & BUTTONS.left!) === 0) input({ type: 'mouse', action: 'up', x: last.x, y: last.y, button: 'left' });
  });
  await cdp.send('Input.setInterceptDrags', { enabled: true });

  const heldButton = () => (held & 1 ? 'left' : held & 4 ? 'middle' : held & 2 ? 'right' : 'none');
  /** After a move with the left button held: did the page start an HTML5 drag? Then wait for its data. */
  const dragBegan = async (): Promise<boolean> => {
    if (drag) return true;
    const started = await page
      .evaluate(() => (window as unknown as { __flowctlStudioDragStarted?: () => boolean }).__flowctlStudioDragStarted?.() === true)
      .catch(() => false);
    if (!started) return false;
    if (!drag) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        dragArrived = resolve;
        // Caps a hang only (the event follows the dragstart at once).
        timer = setTimeout(resolve, 2000);
      });
      clearTimeout(timer);
      dragArrived = null;
    }
    return drag !== null;
  };
  const dispatchDrag = (type: 'dragEnter' | 'dragOver' | 'drop' | 'dragCancel', x: number, y: number, modifiers = 0) =>
    cdp.send('Input.dispatchDragEvent', { type, x, y, modifiers, data: (drag?.data ?? { items: [], dragOperationsMask: 65535 }) as never });
  const dispatch = async (input: StudioInput) => {
    if (input.type === 'mouse') {
      const base = { x: input.x, y: input.y, modifiers: input.modifiers ?? 0 };
      const button = input.button ?? 'left';
      last = { x: input.x, y: input.y };
      if (drag) {
        // An HTML5 drag in progress: moves are drag-overs, the release drops; other input waits for its end.
        // A drag learnt of without our asking (one a frame started, or one released early) enters first.
        if (!drag.entered && (input.action === 'move' || input.action === 'up')) {
          drag.entered = true;
          await dispatchDrag('dragEnter', input.x, input.y, base.modifiers);
          dragAt = { x: input.x, y: input.y };
        }
        if (input.action === 'move') {
          await dispatchDrag('dragOver', input.x, input.y, base.modifiers);
          dragAt = { x: input.x, y: input.y };
        } else if (input.action === 'up') {
          held &= ~BUTTONS[button]!;
          // The drop target is the one the last drag-over found: over the release point first.
          if (dragAt.x !== input.x || dragAt.y !== input.y) await dispatchDrag('dragOver', input.x, input.y, base.modifiers).catch(() => {});
          await dispatchDrag('drop', input.x, input.y, base.modifiers).finally(() => (drag = null));
        }
        return;
      }
      if (input.action === 'move') {
        await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', ...base, button: heldButton(), buttons: held });
        // (drag is set by the event handler meanwhile: read it again.)
        const began = held & BUTTONS.left! && (await dragBegan()) ? (drag as { data: unknown; entered: boolean } | null) : null;
        if (began && !began.entered) {
          began.entered = true;
          await dispatchDrag('dragEnter', input.x, input.y, base.modifiers);
          dragAt = { x: input.x, y: input.y };
        }
      } else if (input.action === 'wheel') {
        await cdp.send('Input.dispatchMouseEvent', { type: 'mouseWheel', ...base, deltaX: input.deltaX ?? 0, deltaY: input.deltaY ?? 0 });
      } else {
        held = input.action === 'down' ? held | BUTTONS[button]! : held & ~BUTTONS[button]!;
        await cdp.send('Input.dispatchMouseEvent', {
          type: input.action === 'down' ? 'mousePressed' : 'mouseReleased',
          ...base,
          button,
          buttons: held,
          clickCount: input.clickCount ?? 1,
        });
      }
    } else if (input.type === 'key') {
      if (drag) {
        // Escape cancels a drag in progress; other keys wait for its end.
        if (input.key === 'Escape' && input.action === 'down') {
          held = 0;
          await dispatchDrag('dragCancel', last.x, last.y).finally(() => (drag = null));
        }
        return;
      }
      try {
        if (input.action === 'down') await page.keyboard.down(input.key);
        else await page.keyboard.up(input.key);
      } catch {
        opts.onNotice(`unknown key ${JSON.stringify(input.key.slice(0, 20))}`);
      }
    } else {
      await cdp.send('Input.insertText', { text: input.text });
    }
  };
  const pump = () => {
    if (pumping) return;
    const run = async () => {
      await Promise.resolve();
      while (queue.length > 0 && !opts.isClosed()) {
        const next = queue.shift()!;
        await dispatch(next).catch(() => {});
      }
    };
    pumping = run().finally(() => (pumping = undefined));
  };
  function input(next: StudioInput): void {
    if (!opts.accepting()) return;
    const tail = queue[queue.length - 1];
    if (next.type === 'mouse' && next.action === 'move' && tail?.type === 'mouse' && tail.action === 'move') queue[queue.length - 1] = next;
    else queue.push(next);
    void pump();
  }
  return {
    input,
    async drained() {
      while (pumping) await pumping;
    },
  };
}

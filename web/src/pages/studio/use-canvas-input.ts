import { useEffect, useRef, type RefObject } from 'react';
import type { StudioClientMessage } from '../../../../src/service/studio/protocol';

const BUTTON = ['left', 'middle', 'right'] as const;

/**
 * Input on the studio's canvas, relayed to the remote page in page pixels: mouse moves (one per
 * animation frame), buttons, the wheel, keys and pastes. Returns the canvas's event handlers.
 */
export function useCanvasInput(
  canvasRef: RefObject<HTMLCanvasElement | null>,
  viewport: RefObject<{ width: number; height: number }>,
  send: (m: StudioClientMessage) => void,
) {
  const point = (e: { clientX: number; clientY: number }) => {
    const canvas = canvasRef.current!;
    const r = canvas.getBoundingClientRect();
    return {
      x: Math.round(((e.clientX - r.left) / r.width) * viewport.current.width),
      y: Math.round(((e.clientY - r.top) / r.height) * viewport.current.height),
    };
  };
  const moveRef = useRef<{ x: number; y: number } | null>(null);
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      send({ type: 'mouse', action: 'wheel', ...point(e), deltaX: e.deltaX, deltaY: e.deltaY });
    };
    canvas.addEventListener('wheel', onWheel, { passive: false });
    return () => canvas.removeEventListener('wheel', onWheel);
  });
  /** A move still waiting for its animation frame goes first. */
  const flushMove = () => {
    if (moveRef.current) {
      send({ type: 'mouse', action: 'move', ...moveRef.current });
      moveRef.current = null;
    }
  };
  const onMouseMove = (e: React.MouseEvent) => {
    const first = moveRef.current === null;
    moveRef.current = point(e);
    if (first)
      requestAnimationFrame(() => {
        if (moveRef.current) send({ type: 'mouse', action: 'move', ...moveRef.current });
        moveRef.current = null;
      });
  };
  const onMouse = (action: 'down' | 'up') => (e: React.MouseEvent) => {
    e.preventDefault();
    if (action === 'down') canvasRef.current?.focus({ preventScroll: true });
    // A drag ends where the pointer last was.
    flushMove();
    send({ type: 'mouse', action, ...point(e), button: BUTTON[e.button] ?? 'left', clickCount: Math.max(1, e.detail || 1) });
  };
  const onKey = (action: 'down' | 'up') => (e: React.KeyboardEvent) => {
    // Paste arrives as a paste event (sent as text); composition and dead keys are not relayed.
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'v') return;
    e.preventDefault();
    if (e.nativeEvent.isComposing || e.key === 'Dead' || e.key === 'Unidentified' || e.key === 'Process') return;
    // A key acts where the pointer is (the extract picker's ↑ moves the pick under it).
    flushMove();
    // Every key as a key event (the page sees keydown, keypress/input and keyup, as from a keyboard).
    send({ type: 'key', action, key: e.key });
  };
  const onPaste = (e: React.ClipboardEvent) => {
    e.preventDefault();
    const text = e.clipboardData.getData('text/plain');
    if (text) send({ type: 'text', text });
  };
  return {
    onMouseMove,
    onMouseDown: onMouse('down'),
    onMouseUp: onMouse('up'),
    onContextMenu: (e: React.MouseEvent) => e.preventDefault(),
    onKeyDown: onKey('down'),
    onKeyUp: onKey('up'),
    onPaste,
  };
}

import { useEffect, useRef, type Dispatch, type RefObject } from 'react';
import { StudioServerMessage, type StudioClientMessage } from '../../../../src/service/studio/protocol';
import type { AuthoringSession } from '../../api';
import { frameDrawer, openLiveSocket } from '../../frames';
import type { Chooser, Status, StudioEvent } from './state';

/**
 * The studio's socket (`GET /api/authoring/{id}/live`): opens it, parses what the service sends with
 * the protocol's schema (a message that does not fit is ignored), sends only viewer messages of the
 * protocol, keeps the session's ops as the `op` and `stopped` messages leave them, and sends the page's
 * file chooser its files. What the page shows follows the messages through `dispatch`.
 */

/** One chunk of a file transfer: at most this many bytes (the service takes up to 45 KiB). */
const CHUNK_BYTES = 40 * 1024;

function base64Of(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return btoa(text);
}

const sendOn = (ws: WebSocket, m: StudioClientMessage) => ws.send(JSON.stringify(m));

/**
 * The remote page's viewport for a canvas `boxWidth` CSS px wide: that width (the page renders 1:1,
 * 320 to 1600 px), 0.6 as tall on a wide screen, taller than wide on a phone-sized one.
 */
export function fitViewport(boxWidth: number | undefined): { width: number; height: number } {
  const width = Math.round(Math.min(1600, Math.max(320, boxWidth ?? 1280)));
  const height = Math.round(Math.min(1000, Math.max(400, width < 640 ? width * 1.4 : width * 0.6)));
  return { width, height };
}

export function useStudioSocket({
  automationId,
  session,
  onSession,
  canvasRef,
  status,
  dispatch,
}: {
  automationId: string;
  session: AuthoringSession;
  onSession(s: AuthoringSession): void;
  canvasRef: RefObject<HTMLCanvasElement | null>;
  status: Status;
  dispatch: Dispatch<StudioEvent>;
}) {
  const wsRef = useRef<WebSocket | null>(null);
  /** The remote page's viewport, at once (input maps onto it before React renders again). */
  const viewport = useRef({ width: 1280, height: 720 });
  const sessionRef = useRef(session);
  sessionRef.current = session;
  /**
   * The session as the socket's messages leave it, at once: two `op` messages can arrive before React
   * renders again (a fill, then the click that committed it), and the second must extend the first.
   */
  const updateSession = (next: AuthoringSession) => {
    sessionRef.current = next;
    onSession(next);
  };
  /** The session is live (ready received): it answers `stop`. */
  const liveRef = useRef(false);
  /** Waiting for `stopped` (or the socket's close). */
  const stoppedRef = useRef<(() => void)[]>([]);
  const say = (message: string) => dispatch({ type: 'say', message });

  const send = (m: StudioClientMessage) => {
    const ws = wsRef.current;
    if (ws && ws.readyState === WebSocket.OPEN) sendOn(ws, m);
  };

  const start = (from?: string | null) => {
    if (wsRef.current) return;
    dispatch({ type: 'connect' });
    const { width, height } = fitViewport(canvasRef.current?.parentElement?.getBoundingClientRect().width);
    let opened = false;
    let framed = false;
    const drawFrame = frameDrawer(() => canvasRef.current);
    const onMessage = (m: StudioServerMessage) => {
      switch (m.type) {
        case 'ready':
          opened = true;
          liveRef.current = true;
          viewport.current = m.viewport;
          dispatch({ type: 'server', message: m });
          updateSession({ ...sessionRef.current, captured_ops: m.captured_ops, secret_slots: m.secret_slots, input_slots: m.input_slots });
          canvasRef.current?.focus({ preventScroll: true });
          return;
        case 'viewport':
          viewport.current = { width: m.width, height: m.height };
          break;
        case 'frame':
          drawFrame(m);
          // Only the first frame changes the page (its overlay goes): no render per frame.
          if (framed) return;
          framed = true;
          break;
        case 'op': {
          // At `index` (re-record: the drifted step's place), replacing the op there when `replaced`.
          const s = sessionRef.current;
          const list = [...s.captured_ops];
          const at = Math.min(Math.max(0, m.index), list.length);
          list.splice(at, m.replaced ? 1 : 0, m.op);
          updateSession({ ...s, captured_ops: list, secret_slots: m.secret_slots ?? s.secret_slots, input_slots: m.input_slots ?? s.input_slots });
          dispatch({ type: 'op', at, replaced: m.replaced === true, kind: m.op.kind });
          return;
        }
        case 'stopped': {
          // The typing not committed yet is stored: the capture as it is now.
          updateSession({ ...sessionRef.current, captured_ops: m.captured_ops, secret_slots: m.secret_slots, input_slots: m.input_slots });
          const waiting = stoppedRef.current;
          stoppedRef.current = [];
          for (const w of waiting) w();
          return;
        }
      }
      dispatch({ type: 'server', message: m });
    };
    const ws = openLiveSocket(
      `/api/authoring/${encodeURIComponent(automationId)}/live?width=${width}&height=${height}${from ? `&from_step=${encodeURIComponent(from)}` : ''}`,
      (raw) => {
        const parsed = StudioServerMessage.safeParse(raw);
        if (parsed.success) onMessage(parsed.data);
      },
    );
    wsRef.current = ws;
    ws.onclose = (event) => {
      wsRef.current = null;
      liveRef.current = false;
      const waiting = stoppedRef.current;
      stoppedRef.current = [];
      for (const w of waiting) w();
      dispatch({ type: 'socket_closed', opened, code: event.code, reason: event.reason });
    };
  };

  /**
   * The value typed last becomes a step: `stop` asks the service to commit the typing the page has
   * not committed yet and answers `stopped` once it is stored (the session stays open).
   */
  const commitTyping = (): Promise<void> => {
    const ws = wsRef.current;
    if (!ws || ws.readyState !== WebSocket.OPEN || !liveRef.current) return Promise.resolve();
    return new Promise<void>((resolve) => {
      stoppedRef.current.push(resolve);
      sendOn(ws, { type: 'stop' });
    });
  };
  const stop = async (commit = true) => {
    if (commit && liveRef.current) {
      dispatch({ type: 'stopping', on: true });
      try {
        await commitTyping();
      } finally {
        dispatch({ type: 'stopping', on: false });
      }
    }
    wsRef.current?.close(1000);
    wsRef.current = null;
    liveRef.current = false;
    dispatch({ type: 'stopped' });
  };

  // The page's file chooser: the picked files go to the service, announced, then in chunks (paced by
  // what the socket has not sent yet). The service gives them to the page and captures the upload.
  const sendFiles = async (chooser: Chooser | null, picked: File[]) => {
    const ws = wsRef.current;
    if (!chooser || !ws || picked.length === 0) return;
    const total = picked.reduce((n, f) => n + f.size, 0);
    if (picked.length > chooser.max_files) return say(`Pick at most ${chooser.max_files} file${chooser.max_files > 1 ? 's' : ''}.`);
    if (total > chooser.max_bytes) return say(`The files are ${total} bytes: at most ${chooser.max_bytes} bytes in all.`);
    dispatch({ type: 'sending', files: picked.map((f) => f.name).join(', ') });
    send({ type: 'files', files: picked.map((f) => ({ name: f.name, size: f.size })) });
    for (const file of picked) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      for (let at = 0; at < bytes.length; at += CHUNK_BYTES) {
        while (ws.readyState === WebSocket.OPEN && ws.bufferedAmount > 1024 * 1024) await new Promise((r) => setTimeout(r, 20));
        if (ws.readyState !== WebSocket.OPEN) return;
        sendOn(ws, { type: 'file_data', data: base64Of(bytes.subarray(at, at + CHUNK_BYTES)) });
      }
    }
  };
  const cancelFiles = () => {
    send({ type: 'file_cancel' });
    dispatch({ type: 'chooser_closed' });
    canvasRef.current?.focus({ preventScroll: true });
  };
  useEffect(() => () => wsRef.current?.close(1000), []);

  // The remote page fills the width the canvas has: when that width changes by much (a window resized
  // or turned), the page is resized to it, so it renders 1:1 instead of scaled down. Small changes (a
  // scroll bar) keep the page as it is.
  useEffect(() => {
    const screen = canvasRef.current?.parentElement;
    if (status !== 'live' || !screen || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      const next = fitViewport(screen.getBoundingClientRect().width);
      if (Math.abs(next.width - viewport.current.width) > viewport.current.width * 0.1) send({ type: 'resize', ...next });
    });
    observer.observe(screen);
    return () => observer.disconnect();
  }, [status]);

  return { start, stop, send, commitTyping, sendFiles, cancelFiles, viewport, sessionRef };
}

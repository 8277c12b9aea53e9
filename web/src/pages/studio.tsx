import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError, patch, post, type AuthoringSession, type Automation } from '../api';
import { Badge, Card, Digest, Empty, ErrorBox, useAction } from '../ui';
import { Link } from '../router';
import { frameDrawer, openLiveSocket } from '../frames';

/**
 * The studio (docs/hosted-api.md, "Studio (live capture)"): a remote Chromium at the automation's
 * site, streamed over `GET /api/authoring/{id}/live` (a WebSocket) into a canvas. Mouse, wheel and
 * keyboard on the canvas are relayed to the page; what the user does comes back as ops, appended to
 * the authoring session by the service. A drag in the canvas is relayed as held-button mouse input
 * (the service turns an HTML5 drag the page starts into drag events); a file input clicked in the page
 * opens a file picker here, whose files go to the service over the socket, in chunks. The op list
 * edits the session with PATCH (delete, reorder, input or secret slot for a fill) and publishes it.
 * Stop recording, Test run and Publish first send `stop` and wait for `stopped`: the value typed
 * last (a field not left yet) is a step of the capture before it is closed, run or published.
 *
 * Re-record (`rerecord`: a step id, from an automation's rerecord_href): the session opens with
 * `?from_step=<step>`; the service replays the steps before it in the fresh browser (`replaying`
 * messages), then what the user records takes the drifted step's place.
 */

type Op = Record<string, any>;
interface Chooser {
  multiple: boolean;
  accept: string;
  max_bytes: number;
  max_files: number;
}

/** One chunk of a file transfer: at most this many bytes (the service takes up to 45 KiB). */
const CHUNK_BYTES = 40 * 1024;

function base64Of(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return btoa(text);
}

const fileList = (files: unknown): string => (Array.isArray(files) ? files.join(', ') : String(files ?? ''));
type Status = 'idle' | 'connecting' | 'live' | 'closed';
type Mode = 'literal' | 'input' | 'secret';
type Replay =
  | { phase: 'replaying'; step: number; of: number; id: string }
  | { phase: 'failed'; step: number; of: number; id: string | null; code: string; message: string };

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Actions a step may skip when their element is absent (`optional`, docs/recordings.md "Optional steps"). */
const OPTIONAL_KINDS = new Set(['click', 'fill', 'select', 'drag', 'upload', 'press', 'hover', 'check', 'uncheck']);
export const canBeOptional = (op: Op): boolean => OPTIONAL_KINDS.has(op.kind) && op.target !== undefined;

/** A short name for an op's target: its primary locator. */
export function describeTarget(t: any): string {
  if (typeof t === 'string') return t;
  if (!t || typeof t !== 'object') return '?';
  if (t.testid) return `test id "${t.testid}"`;
  if (t.role) return t.name ? `${t.role} "${t.name}"` : t.role;
  if (t.label) return `label "${t.label}"`;
  if (t.text) return `text "${t.text}"`;
  if (t.css) return t.css;
  if (t.xpath) return t.xpath;
  return '?';
}

function slugOf(op: Op): string {
  const t = op.target ?? {};
  const raw = String(t.testid ?? t.name ?? t.label ?? t.text ?? 'value');
  let s =
    raw
      .replace(/[^A-Za-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .toLowerCase()
      .slice(0, 40) || 'value';
  if (!/^[A-Za-z_]/.test(s)) s = `_${s}`;
  return s;
}

function modeOf(op: Op, session: AuthoringSession): Mode {
  if (op.slot && session.secret_slots.includes(op.slot)) return 'secret';
  if (op.slot && session.input_slots.includes(op.slot)) return 'input';
  return 'literal';
}

/** Capture slots follow the ops: each list names the slots of the ops in that mode. */
function slotsOf(ops: Op[], modes: Mode[]) {
  const input = new Set<string>();
  const secret = new Set<string>();
  ops.forEach((op, i) => {
    if (op.slot && modes[i] === 'input') input.add(op.slot);
    if (op.slot && modes[i] === 'secret') secret.add(op.slot);
  });
  return { input_slots: [...input], secret_slots: [...secret] };
}

export function StudioRecorder({
  automation,
  session,
  onSession,
  onPublished,
  rerecord,
}: {
  automation: Automation;
  session: AuthoringSession;
  onSession(s: AuthoringSession): void;
  onPublished(): void;
  /** Re-record from this step id (`click_4`): replay the steps before it, then record in its place. */
  rerecord?: string | null;
}) {
  const canvasRef = useRef<HTMLCanvasElement | null>(null);
  const wsRef = useRef<WebSocket | null>(null);
  const viewport = useRef({ width: 1280, height: 720 });
  const [status, setStatus] = useState<Status>('idle');
  const [size, setSize] = useState({ width: 1280, height: 720 });
  const [url, setUrl] = useState(automation.site);
  const [address, setAddress] = useState(automation.site);
  const [notices, setNotices] = useState<string[]>([]);
  const [failure, setFailure] = useState<string | undefined>();
  /** The automation's site is one the egress rule refuses (SVC_EGRESS_ALLOW): the studio never opened it. */
  const [refusedSite, setRefusedSite] = useState(false);
  const [extractName, setExtractName] = useState('');
  const [armed, setArmed] = useState<string | null>(null);
  /** Extract a list (every item like the picked one) rather than one value. */
  const [extractList, setExtractList] = useState(false);
  const [armedList, setArmedList] = useState(false);
  const [frames, setFrames] = useState(0);
  const [published, setPublished] = useState<string | undefined>();
  const [fromStep, setFromStep] = useState<string | null>(rerecord ?? null);
  const [replay, setReplay] = useState<Replay | null>(null);
  /** Where this re-record puts ops (ready.rerecord), whether the drifted op was replaced, what was added. */
  const [insert, setInsert] = useState<{ index: number; step: string; replaced: boolean; added: number } | null>(null);
  const [chooser, setChooser] = useState<Chooser | null>(null);
  /** The remote page's document: navigating, its DOM ready (the capture script listens), or fully loaded. */
  const [load, setLoad] = useState<'loading' | 'interactive' | 'complete'>('loading');
  const [sending, setSending] = useState<string | null>(null);
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
  const [stopping, setStopping] = useState(false);
  const editing = session.state === 'editing';
  const ops = session.captured_ops as Op[];

  const say = (m: string) => setNotices((n) => [...n.slice(-4), m]);
  const send = (m: unknown) => {
    const ws = wsRef.current;
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(m));
  };

  const start = (from?: string | null) => {
    if (wsRef.current) return;
    setFailure(undefined);
    setRefusedSite(false);
    setNotices([]);
    setFrames(0);
    setReplay(null);
    setInsert(null);
    setStatus('connecting');
    const { width, height } = fitViewport(canvasRef.current?.parentElement?.getBoundingClientRect().width);
    let opened = false;
    const drawFrame = frameDrawer(() => canvasRef.current);
    const ws = openLiveSocket(
      `/api/authoring/${encodeURIComponent(automation.id)}/live?width=${width}&height=${height}${from ? `&from_step=${encodeURIComponent(from)}` : ''}`,
      (m) => {
        switch (m.type) {
          case 'ready':
            opened = true;
            liveRef.current = true;
            viewport.current = m.viewport;
            setSize(m.viewport);
            setStatus('live');
            setReplay(null);
            if (m.rerecord) setInsert({ index: m.rerecord.index, step: m.rerecord.step, replaced: false, added: 0 });
            updateSession({ ...sessionRef.current, captured_ops: m.captured_ops, secret_slots: m.secret_slots, input_slots: m.input_slots });
            canvasRef.current?.focus();
            break;
          case 'viewport':
            // The remote page took the size asked for (resize): clicks map onto it from now on.
            viewport.current = { width: m.width, height: m.height };
            setSize(viewport.current);
            break;
          case 'frame':
            setFrames((n) => (n === 0 ? 1 : n));
            drawFrame(m);
            break;
          case 'op': {
            // At `index` (re-record: the drifted step's place), replacing the op there when `replaced`.
            const s = sessionRef.current;
            const list = [...s.captured_ops];
            const at = typeof m.index === 'number' ? Math.min(Math.max(0, m.index), list.length) : list.length;
            list.splice(at, m.replaced ? 1 : 0, m.op);
            updateSession({ ...s, captured_ops: list, secret_slots: m.secret_slots ?? s.secret_slots, input_slots: m.input_slots ?? s.input_slots });
            setInsert((x) => (x ? { ...x, index: at + 1, replaced: x.replaced || m.replaced === true, added: x.added + 1 } : x));
            if (m.op.kind === 'extract') setArmed(null);
            break;
          }
          case 'replaying':
            setReplay({ phase: 'replaying', step: m.step, of: m.of, id: m.id });
            break;
          case 'replay_failed':
            setReplay({ phase: 'failed', step: m.step, of: m.of, id: m.id, code: m.code, message: m.message });
            break;
          case 'url':
          case 'loaded':
            setUrl(m.url);
            setAddress(m.url);
            setLoad(m.type === 'url' ? 'loading' : m.complete ? 'complete' : 'interactive');
            // A new document has a capture script of its own, not armed: so is the button.
            if (m.type === 'loaded' && m.complete === false) setArmed(null);
            break;
          case 'extract_armed':
            setArmed(m.field);
            setArmedList(m.all === true);
            break;
          case 'extract_cancelled':
            // Escape in the page (or a pick with no locator, said in a notice): the button un-arms.
            setArmed(null);
            break;
          case 'stopped': {
            // The typing not committed yet is stored: the capture as it is now.
            updateSession({ ...sessionRef.current, captured_ops: m.captured_ops, secret_slots: m.secret_slots, input_slots: m.input_slots });
            const waiting = stoppedRef.current;
            stoppedRef.current = [];
            for (const w of waiting) w();
            break;
          }
          case 'file_chooser':
            setChooser({
              multiple: m.multiple === true,
              accept: String(m.accept ?? ''),
              max_bytes: Number(m.max_bytes) || 10 * 1024 * 1024,
              max_files: Number(m.max_files) || 1,
            });
            setSending(null);
            break;
          case 'files_received':
            setChooser(null);
            setSending(null);
            say(`Uploaded ${m.files.map((f: any) => `${f.name} (${f.size} bytes)`).join(', ')} to the page.`);
            break;
          case 'notice':
            say(m.message);
            break;
          case 'error':
            if (m.error === 'egress_denied') break; // the closed message that follows says it
            say(`${m.error}: ${m.message}`);
            if (m.error === 'file_too_large') setSending(null);
            break;
          case 'refused':
            // A typed address the egress rule refuses: not opened, not captured.
            say(m.message);
            break;
          case 'closed':
            if (m.reason === 'egress_denied') setRefusedSite(true);
            if (m.reason !== 'replay_failed') setFailure(m.message);
            break;
        }
      },
    );
    wsRef.current = ws;
    ws.onclose = (event) => {
      wsRef.current = null;
      liveRef.current = false;
      const waiting = stoppedRef.current;
      stoppedRef.current = [];
      for (const w of waiting) w();
      setStatus('closed');
      setArmed(null);
      if (!opened) {
        if (event.code === 4024) return; // the replay failed: said by its own panel
        setFailure(
          (f) =>
            f ??
            'The studio could not be opened: only owners record, the capture must be editable (reopen it if published), and the browser limit may be reached. Try again in a moment.',
        );
      } else if (event.code !== 1000 && event.code !== 1005) {
        setFailure((f) => f ?? `The studio closed (${event.reason || event.code}).`);
      }
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
      ws.send(JSON.stringify({ type: 'stop' }));
    });
  };
  const stop = async (commit = true) => {
    if (commit && liveRef.current) {
      setStopping(true);
      try {
        await commitTyping();
      } finally {
        setStopping(false);
      }
    }
    wsRef.current?.close(1000);
    wsRef.current = null;
    liveRef.current = false;
    setStatus('closed');
    setChooser(null);
  };

  // The page's file chooser: the picked files go to the service, announced, then in chunks (paced by
  // what the socket has not sent yet). The service gives them to the page and captures the upload.
  const sendFiles = async (picked: File[]) => {
    const ws = wsRef.current;
    if (!chooser || !ws || picked.length === 0) return;
    const total = picked.reduce((n, f) => n + f.size, 0);
    if (picked.length > chooser.max_files) return say(`Pick at most ${chooser.max_files} file${chooser.max_files > 1 ? 's' : ''}.`);
    if (total > chooser.max_bytes) return say(`The files are ${total} bytes: at most ${chooser.max_bytes} bytes in all.`);
    setSending(picked.map((f) => f.name).join(', '));
    send({ type: 'files', files: picked.map((f) => ({ name: f.name, size: f.size })) });
    for (const file of picked) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      for (let at = 0; at < bytes.length; at += CHUNK_BYTES) {
        while (ws.readyState === WebSocket.OPEN && ws.bufferedAmount > 1024 * 1024) await new Promise((r) => setTimeout(r, 20));
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(JSON.stringify({ type: 'file_data', data: base64Of(bytes.subarray(at, at + CHUNK_BYTES)) }));
      }
    }
  };
  const cancelFiles = () => {
    send({ type: 'file_cancel' });
    setChooser(null);
    setSending(null);
    canvasRef.current?.focus();
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

  // Input on the canvas, in page pixels.
  const point = (e: { clientX: number; clientY: number }) => {
    const canvas = canvasRef.current!;
    const r = canvas.getBoundingClientRect();
    return {
      x: Math.round(((e.clientX - r.left) / r.width) * viewport.current.width),
      y: Math.round(((e.clientY - r.top) / r.height) * viewport.current.height),
    };
  };
  const BUTTON = ['left', 'middle', 'right'];
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
    if (action === 'down') canvasRef.current?.focus();
    // A move still waiting for its animation frame goes first: a drag ends where the pointer last was.
    if (moveRef.current) {
      send({ type: 'mouse', action: 'move', ...moveRef.current });
      moveRef.current = null;
    }
    send({ type: 'mouse', action, ...point(e), button: BUTTON[e.button] ?? 'left', clickCount: Math.max(1, e.detail || 1) });
  };
  const onKey = (action: 'down' | 'up') => (e: React.KeyboardEvent) => {
    // Paste arrives as a paste event (sent as text); composition and dead keys are not relayed.
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'v') return;
    e.preventDefault();
    if (e.nativeEvent.isComposing || e.key === 'Dead' || e.key === 'Unidentified' || e.key === 'Process') return;
    // A move still waiting for its animation frame goes first: a key acts where the pointer is (the
    // extract picker's ↑ moves the pick under it).
    if (moveRef.current) {
      send({ type: 'mouse', action: 'move', ...moveRef.current });
      moveRef.current = null;
    }
    // Every key as a key event (the page sees keydown, keypress/input and keyup, as from a keyboard).
    send({ type: 'key', action, key: e.key });
  };
  const onPaste = (e: React.ClipboardEvent) => {
    e.preventDefault();
    const text = e.clipboardData.getData('text/plain');
    if (text) send({ type: 'text', text });
  };
  const go = (e: FormEvent) => {
    e.preventDefault();
    send({ type: 'navigate', url: address });
  };
  const arm = (e: FormEvent) => {
    e.preventDefault();
    if (!IDENT.test(extractName)) return say('An output field name is letters, digits and _, not starting with a digit.');
    send({ type: 'extract', field: extractName, all: extractList });
    canvasRef.current?.focus();
  };

  // Editing the captured ops: PATCH the whole capture.
  const save = useAction(async (nextOps: Op[], modes: Mode[]) => {
    // A literal op keeps its recorded value and names no slot: the service refuses a slot that is in
    // neither list (captured_ops.N.slot), so a stale one is dropped here.
    const sent = nextOps.map((op, i) => {
      if (modes[i] !== 'literal' || op.slot === undefined) return op;
      const { slot: _slot, ...rest } = op;
      return rest as Op;
    });
    const b = await patch<{ session: AuthoringSession }>(`/api/authoring/${automation.id}`, { captured_ops: sent, ...slotsOf(sent, modes) });
    onSession(b.session);
  });
  const modes = ops.map((op) => modeOf(op, session));
  const remove = (i: number) =>
    void save.run(
      ops.filter((_, j) => j !== i),
      modes.filter((_, j) => j !== i),
    );
  // Optional: the step is skipped when its element does not turn up (a banner shown on some visits).
  const toggleOptional = (i: number) => {
    const { optional, ...rest } = ops[i]!;
    void save.run(
      ops.map((o, j) => (j === i ? (optional ? rest : { ...rest, optional: true }) : o)),
      modes,
    );
  };
  const swap = (i: number, j: number) => {
    const o = [...ops];
    const m = [...modes];
    [o[i], o[j]] = [o[j]!, o[i]!];
    [m[i], m[j]] = [m[j]!, m[i]!];
    void save.run(o, m);
  };
  const setMode = (i: number, mode: Mode) => {
    const op: Op = { ...ops[i] };
    if (mode === 'literal') delete op.slot;
    else op.slot = op.slot ?? slugOf(op);
    // A secret slot never keeps the typed value.
    if (mode === 'secret') delete op.value;
    const o = ops.map((x, j) => (j === i ? op : x));
    void save.run(
      o,
      modes.map((x, j) => (j === i ? mode : x)),
    );
  };
  const rename = (i: number, slot: string) => {
    if (!IDENT.test(slot)) return say('A slot name is letters, digits and _, not starting with a digit.');
    const o = ops.map((x, j) => (j === i ? { ...x, slot } : x));
    void save.run(o, modes);
  };
  // Test the capture before publishing: compiled as publish compiles it, run once in a fresh browser
  // context with the recorded samples (POST /api/authoring/{id}/test); nothing is published.
  const [tested, setTested] = useState<
    { run_id: string; status: string; output?: unknown; error?: { step: string | null; code: string; message: string } } | undefined
  >();
  const testRun = useAction(async () => {
    setTested(undefined);
    await commitTyping();
    setTested(
      await post<{ run_id: string; status: string; output?: unknown; error?: { step: string | null; code: string; message: string } }>(
        `/api/authoring/${automation.id}/test`,
      ),
    );
  });
  const publish = useAction(async () => {
    await commitTyping();
    const b = await post<{ automation: Automation; flow_digest: string }>(`/api/authoring/${automation.id}/publish`);
    setPublished(b.flow_digest);
    void stop(false);
    onPublished();
  });
  // Re-record: reopen a published capture first (the live version stays live until the next publish).
  const beginRerecord = useAction(async (step: string) => {
    if (sessionRef.current.state !== 'editing') onSession((await post<{ session: AuthoringSession }>(`/api/authoring/${automation.id}/edit`)).session);
    setFromStep(step);
    start(step);
  });

  const live = status === 'live';
  const drifted = fromStep ? /^[a-z]+_(\d+)$/.exec(fromStep) : null;
  const driftedIndex = drifted ? Number(drifted[1]) - 1 : -1;
  const replaying = replay?.phase === 'replaying' ? replay : null;
  return (
    <div className="studio">
      {fromStep ? (
        <RerecordPanel
          step={fromStep}
          index={driftedIndex}
          op={ops[driftedIndex]}
          status={status}
          replay={replay}
          insert={insert}
          busy={beginRerecord.busy}
          error={beginRerecord.error}
          editing={editing}
          onStart={(step) => void beginRerecord.run(step)}
        />
      ) : null}
      <Card
        className="studio-card"
        title={
          <span className="title-with-badge">
            Browser{' '}
            <Badge tone={live ? 'green' : status === 'connecting' ? 'blue' : refusedSite ? 'red' : 'gray'}>
              {live ? 'recording' : status === 'connecting' ? 'starting' : refusedSite ? 'site refused' : status === 'closed' ? 'stopped' : 'not started'}
            </Badge>
          </span>
        }
        subtitle="Click, type and scroll in the page below: each completed action is captured. Password fields become secret slots (their value is never sent or stored)."
        actions={
          live || status === 'connecting' ? (
            <button type="button" className="btn" disabled={stopping} onClick={() => void stop()}>
              {stopping ? 'Stopping…' : 'Stop recording'}
            </button>
          ) : (
            <button
              type="button"
              className="btn btn-primary"
              disabled={!editing}
              onClick={() => start()}
              title={editing ? undefined : 'Reopen the capture first'}
            >
              {status === 'closed' ? 'Record again' : 'Start recording'}
            </button>
          )
        }
      >
        {failure ? (
          <ErrorBox
            error={new ApiError(0, refusedSite ? 'egress_denied' : 'studio', failure)}
            title={refusedSite ? 'The studio may not open this site' : 'The studio stopped'}
            onRetry={editing && !refusedSite ? () => start() : undefined}
          />
        ) : null}
        <div className="studio-bar">
          <form className="studio-address" onSubmit={go}>
            <input aria-label="Address" value={address} disabled={!live} onChange={(e) => setAddress(e.target.value)} spellCheck={false} />
            <button type="submit" className="btn btn-small" disabled={!live}>
              Go
            </button>
          </form>
          <form className="studio-extract" onSubmit={arm}>
            <input
              aria-label="Output field"
              placeholder="output field, e.g. price"
              value={extractName}
              disabled={!live}
              onChange={(e) => setExtractName(e.target.value)}
            />
            <label className="studio-list-toggle small" title="Extract every item like the one you pick (a list), not one value">
              <input type="checkbox" checked={extractList} disabled={!live} onChange={(e) => setExtractList(e.target.checked)} /> List
            </label>
            <button type="submit" className={`btn btn-small ${armed ? 'btn-primary' : ''}`} disabled={!live || extractName === ''}>
              {armed ? `Click the element for "${armed}"` : 'Extract'}
            </button>
          </form>
        </div>
        <div className={`studio-screen ${live ? 'is-live' : ''}`}>
          <canvas
            ref={canvasRef}
            className="studio-canvas"
            aria-label="Remote browser"
            tabIndex={0}
            width={size.width}
            height={size.height}
            onMouseMove={onMouseMove}
            onMouseDown={onMouse('down')}
            onMouseUp={onMouse('up')}
            onContextMenu={(e) => e.preventDefault()}
            onKeyDown={onKey('down')}
            onKeyUp={onKey('up')}
            onPaste={onPaste}
          />
          {armed && live ? (
            // Over the canvas (its bottom edge), so arming never moves the canvas under the pointer.
            <div className="studio-hint small" role="status" data-testid="extract-hint">
              {armedList ? 'Click one item of the list (every item like it is extracted)' : 'Click the value to extract'} · ↑ parent · ↓ child · Esc cancel
            </div>
          ) : null}
          {replaying && frames > 0 ? (
            <div className="studio-replaying" role="status" data-testid="replay-progress">
              <span className="spinner" aria-hidden="true" /> Replaying step {replaying.step} of {replaying.of} (<code>{replaying.id}</code>)…
              <span className="replay-bar" aria-hidden="true">
                <span style={{ width: `${(replaying.step / Math.max(1, replaying.of)) * 100}%` }} />
              </span>
            </div>
          ) : null}
          {(status !== 'live' || frames === 0) && !(status === 'connecting' && frames > 0) ? (
            <div className="studio-overlay">
              {status === 'connecting' || (live && frames === 0) ? (
                <span>{replaying ? `Replaying step ${replaying.step} of ${replaying.of}…` : `Starting the browser at ${automation.site}…`}</span>
              ) : refusedSite ? (
                <span>{automation.site} was not opened: the service's egress rule refuses it (see above).</span>
              ) : status === 'closed' ? (
                <span>Recording stopped. The captured steps are saved.</span>
              ) : editing ? (
                <span>Start recording to open {automation.site} here.</span>
              ) : (
                <span>The capture is published: reopen it to record.</span>
              )}
            </div>
          ) : null}
        </div>
        <div className="studio-status small muted">
          <span data-testid="studio-url" data-state={live ? load : 'idle'}>
            {live ? url : ''}
            {live && load === 'loading' ? <span className="muted"> (loading…)</span> : null}
          </span>
          <span>
            Typing becomes a step when you leave the field, press Enter, Tab or Escape, click elsewhere, or stop; keys the page acts on are steps too. Select
            menus: focus them and type the option's first letters (native pop-ups are not streamed). Drag with the mouse; a file input asks for its file here.
            New tabs and frames are not captured.
          </span>
        </div>
        {chooser ? (
          <div className="notice studio-chooser" role="dialog" aria-label="The page asks for a file">
            <span>
              The page asks for {chooser.multiple ? 'files' : 'a file'}
              {chooser.accept ? ` (${chooser.accept})` : ''}: pick {chooser.multiple ? 'them' : 'it'} here (at most{' '}
              {Math.round(chooser.max_bytes / 1024 / 1024)} MiB). It is stored with the capture and uploaded again on every run.
            </span>
            <input
              type="file"
              aria-label="File for the page"
              multiple={chooser.multiple}
              accept={chooser.accept || undefined}
              disabled={sending !== null}
              onChange={(e) => void sendFiles([...(e.target.files ?? [])])}
            />
            {sending ? <span className="muted small">Sending {sending}…</span> : null}
            <button type="button" className="btn btn-small" onClick={cancelFiles}>
              Cancel
            </button>
          </div>
        ) : null}
        {notices.length > 0 ? (
          <ul className="studio-notices small" aria-live="polite">
            {notices.map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        ) : null}
      </Card>
      <Card
        title={`Captured steps (${ops.length})`}
        subtitle="Saved as you go. Mark a typed value as an input (a parameter of the automation) or a secret (read from the org secret of that name at run time)."
        actions={
          <>
            <button
              type="button"
              className="btn"
              disabled={!editing || testRun.busy || publish.busy || ops.length === 0}
              onClick={() => void testRun.run()}
              title="Run the captured steps once in a fresh browser, with the recorded samples, without publishing"
            >
              {testRun.busy ? 'Testing…' : 'Test run'}
            </button>
            <button type="button" className="btn btn-primary" disabled={!editing || publish.busy || ops.length === 0} onClick={() => void publish.run()}>
              {publish.busy ? 'Publishing…' : 'Publish'}
            </button>
          </>
        }
      >
        {tested ? (
          <div className={`notice ${tested.status === 'succeeded' ? 'notice-ok' : 'notice-bad'}`} role="status" data-testid="test-result">
            Test run {tested.status}
            {tested.error ? (
              <>
                {' '}
                at <code>{tested.error.step ?? 'start'}</code>: <code>{tested.error.code}</code> {tested.error.message}
              </>
            ) : tested.output !== undefined ? (
              <>
                {' '}
                with output <code>{JSON.stringify(tested.output).slice(0, 200)}</code>
              </>
            ) : null}{' '}
            · <Link to={`/runs/${tested.run_id}`}>open the run</Link>
          </div>
        ) : null}
        {testRun.error ? <ErrorBox error={testRun.error} title="Test run failed to start" /> : null}
        {published ? (
          <div className="notice notice-ok" role="status">
            Published: version <Digest value={published} /> is live at <code>/v1/run/{automation.name}</code>.
          </div>
        ) : null}
        {save.error ? <ErrorBox error={save.error} /> : null}
        {publish.error ? <ErrorBox error={publish.error} title="Publish failed" /> : null}
        {ops.length === 0 ? (
          <Empty title="Nothing captured yet">Start recording, then click and type in the page: each action appears here.</Empty>
        ) : (
          <ol className="op-list" data-testid="op-list">
            {ops.map((op, i) => {
              const isDrifted = fromStep !== null && i === driftedIndex && !insert?.replaced && `${op.kind}_${i + 1}` === fromStep;
              const isNew = insert !== null && insert.added > 0 && i >= insert.index - insert.added && i < insert.index;
              return (
                <li key={i} className={`op-row${isDrifted ? ' op-drifted' : ''}${isNew ? ' op-new' : ''}`} data-drifted={isDrifted || undefined}>
                  <span className="op-index">{i + 1}</span>
                  <Badge tone={isDrifted ? 'red' : op.kind === 'extract' ? 'violet' : op.kind === 'navigate' ? 'gray' : 'blue'}>{op.kind}</Badge>
                  <span className="op-desc">
                    {isDrifted ? (
                      <span className="op-tag op-tag-drifted" title="A run could not find this element: what you record replaces it">
                        drifted{' '}
                      </span>
                    ) : null}
                    {isNew ? (
                      <span className="op-tag op-tag-new" title="Recorded in this re-record">
                        new{' '}
                      </span>
                    ) : null}
                    {op.optional ? (
                      <span className="op-tag op-tag-optional" title="Skipped when its element does not appear">
                        optional{' '}
                      </span>
                    ) : null}
                    {op.kind === 'navigate' ? (
                      <code>{op.url}</code>
                    ) : op.kind === 'press' ? (
                      <>
                        <code>{String(op.key)}</code>
                        {op.target !== undefined ? (
                          <>
                            <span className="muted"> on </span>
                            <code>{describeTarget(op.target)}</code>
                          </>
                        ) : (
                          <span className="muted"> (the focused element)</span>
                        )}
                      </>
                    ) : op.kind === 'drag' ? (
                      <>
                        <code>{describeTarget(op.source)}</code>
                        <span className="muted"> → </span>
                        <code>{describeTarget(op.target)}</code>
                      </>
                    ) : (
                      <>
                        <code>{describeTarget(op.target)}</code>
                        {op.kind === 'fill' || op.kind === 'select' ? (
                          modes[i] === 'secret' ? (
                            <span className="muted"> ← secret </span>
                          ) : (
                            <span className="muted"> ← {JSON.stringify(op.value ?? '')}</span>
                          )
                        ) : null}
                        {op.kind === 'extract' && op.all === true ? (
                          <span className="muted">
                            {' '}
                            (list: all matches
                            {op.container ? (
                              <>
                                {' '}
                                in <code>{describeTarget(op.container)}</code>
                              </>
                            ) : null}
                            )
                          </span>
                        ) : null}
                        {op.kind === 'extract' ? <span className="muted"> → output.{op.name}</span> : null}
                        {op.kind === 'upload' ? <span className="muted"> ← {fileList(op.files)}</span> : null}
                        {op.target?.fallbacks?.length ? (
                          <span className="muted small">
                            {' '}
                            (+{op.target.fallbacks.length} fallback{op.target.fallbacks.length > 1 ? 's' : ''})
                          </span>
                        ) : null}
                      </>
                    )}
                  </span>
                  {op.kind === 'fill' || op.kind === 'select' ? (
                    <span className="op-slot">
                      <select
                        aria-label={`Value of step ${i + 1}`}
                        value={modes[i]}
                        disabled={!editing || save.busy}
                        onChange={(e) => setMode(i, e.target.value as Mode)}
                      >
                        <option value="literal" disabled={op.value === undefined}>
                          fixed value
                        </option>
                        <option value="input">input slot</option>
                        <option value="secret">secret slot</option>
                      </select>
                      {modes[i] !== 'literal' ? (
                        <SlotName value={op.slot ?? ''} disabled={!editing || save.busy} onChange={(s) => rename(i, s)} label={`Slot of step ${i + 1}`} />
                      ) : null}
                    </span>
                  ) : (
                    <span className="op-slot" />
                  )}
                  <span className="op-actions">
                    {canBeOptional(op) ? (
                      <button
                        type="button"
                        className={`btn btn-small${op.optional ? ' btn-primary' : ''}`}
                        aria-label={`Step ${i + 1} optional`}
                        aria-pressed={op.optional === true}
                        title="Optional: when its element does not appear (a cookie banner shown on some visits only), a run skips this step and goes on"
                        disabled={!editing || save.busy}
                        onClick={() => toggleOptional(i)}
                      >
                        Optional
                      </button>
                    ) : null}
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`Move step ${i + 1} up`}
                      disabled={!editing || i === 0 || save.busy}
                      onClick={() => swap(i, i - 1)}
                    >
                      ↑
                    </button>
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`Move step ${i + 1} down`}
                      disabled={!editing || i === ops.length - 1 || save.busy}
                      onClick={() => swap(i, i + 1)}
                    >
                      ↓
                    </button>
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`Delete step ${i + 1}`}
                      disabled={!editing || save.busy}
                      onClick={() => remove(i)}
                    >
                      Delete
                    </button>
                  </span>
                </li>
              );
            })}
          </ol>
        )}
      </Card>
    </div>
  );
}

function SlotName({ value, onChange, disabled, label }: { value: string; onChange(v: string): void; disabled: boolean; label: string }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <input
      className="slot-input mono"
      aria-label={label}
      value={text}
      disabled={disabled}
      onChange={(e) => setText(e.target.value)}
      onBlur={() => text !== value && onChange(text)}
      onKeyDown={(e) => e.key === 'Enter' && text !== value && onChange(text)}
    />
  );
}

/**
 * The re-record panel: which step drifted and what happens, the replay's progress, where the recorded
 * steps go, and a replay that stopped (with a way to re-record from the step it stopped at).
 */
function RerecordPanel({
  step,
  index,
  op,
  status,
  replay,
  insert,
  busy,
  error,
  editing,
  onStart,
}: {
  step: string;
  index: number;
  op: Op | undefined;
  status: Status;
  replay: Replay | null;
  insert: { index: number; step: string; replaced: boolean; added: number } | null;
  busy: boolean;
  error: ApiError | undefined;
  editing: boolean;
  onStart(step: string): void;
}) {
  const n = index + 1;
  const what = op ? (op.kind === 'navigate' ? op.url : describeTarget(op.target)) : null;
  const failed = replay?.phase === 'failed' ? replay : null;
  let body;
  if (failed) {
    body = (
      <>
        <div className="error-box" role="alert">
          <div className="error-head">
            <strong>
              The replay stopped at step {failed.step} of {failed.of}
              {failed.id ? ` (${failed.id})` : ''}
            </strong>
            <code className="error-code">{failed.code}</code>
          </div>
          <p>{failed.message.replace(/^replay stopped at step [^:]+: /, '')}</p>
          {failed.code === 'locator_drift' ? <p>That step changed on the site too: re-record from it instead (the capture is unchanged).</p> : null}
        </div>
        <div className="rerecord-actions">
          {failed.id && failed.id !== step ? (
            <button type="button" className="btn btn-primary" disabled={busy} onClick={() => onStart(failed.id!)}>
              Re-record from step {failed.step} ({failed.id})
            </button>
          ) : null}
          <button type="button" className="btn" disabled={busy} onClick={() => onStart(step)}>
            Try the replay again
          </button>
        </div>
      </>
    );
  } else if (insert && (status === 'live' || insert.replaced)) {
    body = insert.replaced ? (
      <p>
        Step {n} is re-recorded ({insert.added} step{insert.added === 1 ? '' : 's'} recorded, marked new below). Record more if the flow needs them, delete
        later steps it no longer needs, then publish.
      </p>
    ) : (
      <p>
        The page is as it was before step {n}. <strong>Show the changed step now</strong>: the first action you record replaces step {n}; more actions follow
        it, and the steps after it stay.
      </p>
    );
  } else if (status === 'connecting') {
    body = (
      <p>{replay?.phase === 'replaying' ? `Replaying step ${replay.step} of ${replay.of} (${replay.id}) in a fresh browser…` : 'Starting a fresh browser…'}</p>
    );
  } else {
    body = (
      <>
        <p>
          A run could not find the element of step {n}
          {what ? (
            <>
              {' '}
              (a {op!.kind} {op!.kind === 'navigate' ? 'to' : 'on'} <code>{what}</code>)
            </>
          ) : null}
          . Re-recording replays steps 1 to {Math.max(0, n - 1)} in a fresh browser, so the page is where step {n} starts; then you show the step on the changed
          page. What you record replaces step {n}; the steps after it stay.
          {editing ? '' : ' The capture is published: it is reopened for editing first (the live version stays live until you publish).'}
        </p>
        {error ? <ErrorBox error={error} /> : null}
        <div className="rerecord-actions">
          <button type="button" className="btn btn-primary" disabled={busy || status === 'live'} onClick={() => onStart(step)}>
            {busy ? 'Opening…' : status === 'closed' ? `Re-record step ${n} again` : `Re-record step ${n}`}
          </button>
        </div>
      </>
    );
  }
  return (
    <Card
      className="rerecord-card"
      title={
        <span className="title-with-badge">
          Re-record step {n} <Badge tone="red">{step}</Badge>
        </span>
      }
    >
      <div data-testid="rerecord-panel">{body}</div>
    </Card>
  );
}

/**
 * The remote page's viewport for a canvas `boxWidth` CSS px wide: that width (the page renders 1:1,
 * 320 to 1600 px), 0.6 as tall on a wide screen, taller than wide on a phone-sized one.
 */
export function fitViewport(boxWidth: number | undefined): { width: number; height: number } {
  const width = Math.round(Math.min(1600, Math.max(320, boxWidth ?? 1280)));
  const height = Math.round(Math.min(1000, Math.max(400, width < 640 ? width * 1.4 : width * 0.6)));
  return { width, height };
}

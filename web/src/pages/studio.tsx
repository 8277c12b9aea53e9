import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError, patch, post, type AuthoringSession, type Automation } from '../api';
import { Badge, Card, Digest, Empty, ErrorBox, useAction } from '../ui';

/**
 * The studio (docs/hosted-api.md, "Studio (live capture)"): a remote Chromium at the automation's
 * site, streamed over `GET /api/authoring/{id}/live` (a WebSocket) into a canvas. Mouse, wheel and
 * keyboard on the canvas are relayed to the page; what the user does comes back as ops, appended to
 * the authoring session by the service. The op list edits the session with PATCH (delete, reorder,
 * input or secret slot for a fill) and publishes it.
 */

type Op = Record<string, any>;
type Status = 'idle' | 'connecting' | 'live' | 'closed';
type Mode = 'literal' | 'input' | 'secret';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

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
  let s = raw.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').toLowerCase().slice(0, 40) || 'value';
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

export function StudioRecorder({ automation, session, onSession, onPublished }: { automation: Automation; session: AuthoringSession; onSession(s: AuthoringSession): void; onPublished(): void }) {
  const canvasRef = useRef<HTMLCanvasElement | null>(null);
  const wsRef = useRef<WebSocket | null>(null);
  const viewport = useRef({ width: 1280, height: 720 });
  const [status, setStatus] = useState<Status>('idle');
  const [size, setSize] = useState({ width: 1280, height: 720 });
  const [url, setUrl] = useState(automation.site);
  const [address, setAddress] = useState(automation.site);
  const [notices, setNotices] = useState<string[]>([]);
  const [failure, setFailure] = useState<string | undefined>();
  const [extractName, setExtractName] = useState('');
  const [armed, setArmed] = useState<string | null>(null);
  const [frames, setFrames] = useState(0);
  const [published, setPublished] = useState<string | undefined>();
  const sessionRef = useRef(session);
  sessionRef.current = session;
  const editing = session.state === 'editing';
  const ops = session.captured_ops as Op[];

  const say = (m: string) => setNotices((n) => [...n.slice(-4), m]);
  const send = (m: unknown) => {
    const ws = wsRef.current;
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(m));
  };

  const start = () => {
    if (wsRef.current) return;
    setFailure(undefined);
    setNotices([]);
    setFrames(0);
    setStatus('connecting');
    const box = canvasRef.current?.parentElement?.getBoundingClientRect();
    const width = Math.round(Math.min(1600, Math.max(640, box?.width ?? 1280)));
    const height = Math.round(Math.min(1000, Math.max(400, width * 0.6)));
    const proto = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${window.location.host}/api/authoring/${encodeURIComponent(automation.id)}/live?width=${width}&height=${height}`);
    wsRef.current = ws;
    let opened = false;
    let pendingFrame: any = null;
    let drawing = false;
    const draw = () => {
      const f = pendingFrame;
      const canvas = canvasRef.current;
      if (!f || !canvas) return;
      pendingFrame = null;
      drawing = true;
      const img = new Image();
      img.onload = () => {
        const ctx = canvas.getContext('2d');
        if (canvas.width !== f.width || canvas.height !== f.height) {
          canvas.width = f.width;
          canvas.height = f.height;
        }
        ctx?.drawImage(img, 0, 0, canvas.width, canvas.height);
        drawing = false;
        if (pendingFrame) draw();
      };
      img.onerror = () => {
        drawing = false;
      };
      img.src = `data:image/jpeg;base64,${f.data}`;
    };
    ws.onmessage = (event) => {
      let m: any;
      try {
        m = JSON.parse(String(event.data));
      } catch {
        return;
      }
      switch (m.type) {
        case 'ready':
          opened = true;
          viewport.current = m.viewport;
          setSize(m.viewport);
          setStatus('live');
          onSession({ ...sessionRef.current, captured_ops: m.captured_ops, secret_slots: m.secret_slots, input_slots: m.input_slots });
          canvasRef.current?.focus();
          break;
        case 'frame':
          pendingFrame = m;
          setFrames((n) => (n === 0 ? 1 : n));
          if (!drawing) draw();
          break;
        case 'op': {
          const s = sessionRef.current;
          onSession({ ...s, captured_ops: [...s.captured_ops, m.op], secret_slots: m.secret_slots ?? s.secret_slots });
          if (m.op.kind === 'extract') setArmed(null);
          break;
        }
        case 'url':
        case 'loaded':
          setUrl(m.url);
          setAddress(m.url);
          break;
        case 'extract_armed':
          setArmed(m.field);
          break;
        case 'notice':
          say(m.message);
          break;
        case 'error':
          say(`${m.error}: ${m.message}`);
          break;
        case 'closed':
          setFailure(m.message);
          break;
      }
    };
    ws.onclose = (event) => {
      wsRef.current = null;
      setStatus('closed');
      setArmed(null);
      if (!opened) {
        setFailure((f) => f ?? 'The studio could not be opened: only owners record, the capture must be editable (reopen it if published), and the browser limit may be reached. Try again in a moment.');
      } else if (event.code !== 1000 && event.code !== 1005) {
        setFailure((f) => f ?? `The studio closed (${event.reason || event.code}).`);
      }
    };
  };

  const stop = () => {
    wsRef.current?.close(1000);
    wsRef.current = null;
    setStatus('closed');
  };
  useEffect(() => () => wsRef.current?.close(1000), []);

  // Input on the canvas, in page pixels.
  const point = (e: { clientX: number; clientY: number }) => {
    const canvas = canvasRef.current!;
    const r = canvas.getBoundingClientRect();
    return { x: Math.round(((e.clientX - r.left) / r.width) * viewport.current.width), y: Math.round(((e.clientY - r.top) / r.height) * viewport.current.height) };
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
    send({ type: 'mouse', action, ...point(e), button: BUTTON[e.button] ?? 'left', clickCount: Math.max(1, e.detail || 1) });
  };
  const onKey = (action: 'down' | 'up') => (e: React.KeyboardEvent) => {
    // Paste arrives as a paste event (sent as text); composition and dead keys are not relayed.
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'v') return;
    e.preventDefault();
    if (e.nativeEvent.isComposing || e.key === 'Dead' || e.key === 'Unidentified' || e.key === 'Process') return;
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
    send({ type: 'extract', field: extractName });
    canvasRef.current?.focus();
  };

  // Editing the captured ops: PATCH the whole capture.
  const save = useAction(async (nextOps: Op[], modes: Mode[]) => {
    const b = await patch<{ session: AuthoringSession }>(`/api/authoring/${automation.id}`, { captured_ops: nextOps, ...slotsOf(nextOps, modes) });
    onSession(b.session);
  });
  const modes = ops.map((op) => modeOf(op, session));
  const remove = (i: number) => void save.run(ops.filter((_, j) => j !== i), modes.filter((_, j) => j !== i));
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
    void save.run(o, modes.map((x, j) => (j === i ? mode : x)));
  };
  const rename = (i: number, slot: string) => {
    if (!IDENT.test(slot)) return say('A slot name is letters, digits and _, not starting with a digit.');
    const o = ops.map((x, j) => (j === i ? { ...x, slot } : x));
    void save.run(o, modes);
  };
  const publish = useAction(async () => {
    const b = await post<{ automation: Automation; flow_digest: string }>(`/api/authoring/${automation.id}/publish`);
    setPublished(b.flow_digest);
    stop();
    onPublished();
  });

  const live = status === 'live';
  return (
    <div className="studio">
      <Card
        className="studio-card"
        title={
          <span className="title-with-badge">
            Browser{' '}
            <Badge tone={live ? 'green' : status === 'connecting' ? 'blue' : 'gray'}>{live ? 'recording' : status === 'connecting' ? 'starting' : status === 'closed' ? 'stopped' : 'not started'}</Badge>
          </span>
        }
        subtitle="Click, type and scroll in the page below: each completed action is captured. Password fields become secret slots (their value is never sent or stored)."
        actions={
          live || status === 'connecting' ? (
            <button className="btn" onClick={stop}>
              Stop recording
            </button>
          ) : (
            <button className="btn btn-primary" disabled={!editing} onClick={start} title={editing ? undefined : 'Reopen the capture first'}>
              {status === 'closed' ? 'Record again' : 'Start recording'}
            </button>
          )
        }
      >
        {failure ? <ErrorBox error={new ApiError(0, 'studio', failure)} title="The studio stopped" onRetry={editing ? start : undefined} /> : null}
        <div className="studio-bar">
          <form className="studio-address" onSubmit={go}>
            <input aria-label="Address" value={address} disabled={!live} onChange={(e) => setAddress(e.target.value)} spellCheck={false} />
            <button className="btn btn-small" disabled={!live}>
              Go
            </button>
          </form>
          <form className="studio-extract" onSubmit={arm}>
            <input aria-label="Output field" placeholder="output field, e.g. price" value={extractName} disabled={!live} onChange={(e) => setExtractName(e.target.value)} />
            <button className={`btn btn-small ${armed ? 'btn-primary' : ''}`} disabled={!live || extractName === ''}>
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
          {status !== 'live' || frames === 0 ? (
            <div className="studio-overlay">
              {status === 'connecting' || (live && frames === 0) ? (
                <span>Starting the browser at {automation.site}…</span>
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
          <span data-testid="studio-url">{live ? url : ''}</span>
          <span>Select menus: focus them and type the option's first letters (native pop-ups are not streamed). New tabs and frames are not captured.</span>
        </div>
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
          <button className="btn btn-primary" disabled={!editing || publish.busy || ops.length === 0} onClick={() => void publish.run()}>
            {publish.busy ? 'Publishing…' : 'Publish'}
          </button>
        }
      >
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
            {ops.map((op, i) => (
              <li key={i} className="op-row">
                <span className="op-index">{i + 1}</span>
                <Badge tone={op.kind === 'extract' ? 'violet' : op.kind === 'navigate' ? 'gray' : 'blue'}>{op.kind}</Badge>
                <span className="op-desc">
                  {op.kind === 'navigate' ? (
                    <code>{op.url}</code>
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
                      {op.kind === 'extract' ? <span className="muted"> → output.{op.name}</span> : null}
                      {op.target?.fallbacks?.length ? <span className="muted small"> (+{op.target.fallbacks.length} fallback{op.target.fallbacks.length > 1 ? 's' : ''})</span> : null}
                    </>
                  )}
                </span>
                {op.kind === 'fill' || op.kind === 'select' ? (
                  <span className="op-slot">
                    <select aria-label={`Value of step ${i + 1}`} value={modes[i]} disabled={!editing || save.busy} onChange={(e) => setMode(i, e.target.value as Mode)}>
                      <option value="literal" disabled={op.value === undefined}>
                        fixed value
                      </option>
                      <option value="input">input slot</option>
                      <option value="secret">secret slot</option>
                    </select>
                    {modes[i] !== 'literal' ? <SlotName value={op.slot ?? ''} disabled={!editing || save.busy} onChange={(s) => rename(i, s)} label={`Slot of step ${i + 1}`} /> : null}
                  </span>
                ) : (
                  <span className="op-slot" />
                )}
                <span className="op-actions">
                  <button className="btn btn-small" aria-label={`Move step ${i + 1} up`} disabled={!editing || i === 0 || save.busy} onClick={() => swap(i, i - 1)}>
                    ↑
                  </button>
                  <button className="btn btn-small" aria-label={`Move step ${i + 1} down`} disabled={!editing || i === ops.length - 1 || save.busy} onClick={() => swap(i, i + 1)}>
                    ↓
                  </button>
                  <button className="btn btn-small" aria-label={`Delete step ${i + 1}`} disabled={!editing || save.busy} onClick={() => remove(i)}>
                    Delete
                  </button>
                </span>
              </li>
            ))}
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

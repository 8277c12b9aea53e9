import type { Dispatch, FormEvent, RefObject } from 'react';
import type { StudioClientMessage } from '../../../../src/service/studio/protocol';
import { ApiError, type Automation } from '../../api';
import { Badge, Card, ErrorBox } from '../../ui';
import { IDENT } from './ops';
import type { Chooser, StudioEvent, StudioState } from './state';
import type { useCanvasInput } from './use-canvas-input';

/**
 * The studio's Browser card: start and stop, the address bar and the extract button, the remote
 * page's canvas with what covers it (starting, replaying, stopped, the extract hint), the page's file
 * chooser and the notices.
 */
export function BrowserCard({
  automation,
  state,
  dispatch,
  editing,
  canvasRef,
  input,
  start,
  stop,
  send,
  sendFiles,
  cancelFiles,
}: {
  automation: Automation;
  state: StudioState;
  dispatch: Dispatch<StudioEvent>;
  editing: boolean;
  canvasRef: RefObject<HTMLCanvasElement | null>;
  input: ReturnType<typeof useCanvasInput>;
  start(): void;
  stop(): Promise<void>;
  send(m: StudioClientMessage): void;
  sendFiles(chooser: Chooser | null, picked: File[]): Promise<void>;
  cancelFiles(): void;
}) {
  const {
    status,
    size,
    url,
    address,
    notices,
    failure,
    refusedSite,
    extractName,
    armed,
    extractList,
    armedList,
    frames,
    replay,
    chooser,
    load,
    sending,
    stopping,
  } = state;
  const live = status === 'live';
  const replaying = replay?.phase === 'replaying' ? replay : null;
  const go = (e: FormEvent) => {
    e.preventDefault();
    send({ type: 'navigate', url: address });
  };
  const arm = (e: FormEvent) => {
    e.preventDefault();
    if (!IDENT.test(extractName)) return dispatch({ type: 'say', message: 'An output field name is letters, digits and _, not starting with a digit.' });
    send({ type: 'extract', field: extractName, all: extractList });
    canvasRef.current?.focus({ preventScroll: true });
  };
  return (
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
          <input
            aria-label="Address"
            value={address}
            disabled={!live}
            onChange={(e) => dispatch({ type: 'address', value: e.target.value })}
            spellCheck={false}
          />
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
            onChange={(e) => dispatch({ type: 'extract_name', value: e.target.value })}
          />
          <label className="studio-list-toggle small" title="Extract every item like the one you pick (a list), not one value">
            <input type="checkbox" checked={extractList} disabled={!live} onChange={(e) => dispatch({ type: 'extract_list', value: e.target.checked })} /> List
          </label>
          <button type="submit" className={`btn btn-small ${armed ? 'btn-primary' : ''}`} disabled={!live || extractName === ''}>
            {armed ? `Click the element for "${armed}"` : 'Extract'}
          </button>
        </form>
      </div>
      <div className={`studio-screen ${live ? 'is-live' : ''}`}>
        <canvas ref={canvasRef} className="studio-canvas" aria-label="Remote browser" tabIndex={0} width={size.width} height={size.height} {...input} />
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
          menus: focus them and type the option's first letters (native pop-ups are not streamed). Drag with the mouse; a file input asks for its file here. New
          tabs and frames are not captured.
        </span>
      </div>
      {chooser ? (
        <div className="notice studio-chooser" role="dialog" aria-label="The page asks for a file">
          <span>
            The page asks for {chooser.multiple ? 'files' : 'a file'}
            {chooser.accept ? ` (${chooser.accept})` : ''}: pick {chooser.multiple ? 'them' : 'it'} here (at most {Math.round(chooser.max_bytes / 1024 / 1024)}{' '}
            MiB). It is stored with the capture and uploaded again on every run.
          </span>
          <input
            type="file"
            aria-label="File for the page"
            multiple={chooser.multiple}
            accept={chooser.accept || undefined}
            disabled={sending !== null}
            onChange={(e) => void sendFiles(chooser, [...(e.target.files ?? [])])}
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
  );
}

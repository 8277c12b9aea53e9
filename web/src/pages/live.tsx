import { useEffect, useRef, useState } from 'react';
import { Badge } from '../ui';
import { Link } from '../router';
import { frameDrawer, openLiveSocket } from '../frames';

/**
 * The run live view (docs/hosted-api.md, "Run live view"): `GET /api/automations/{id}/live` (a
 * WebSocket), read-only. It shows the screencast of a synchronous run of the automation in flight
 * on the service (`runId` picks one; without it the newest, or the next one to start) on a canvas,
 * and says why when there is nothing to show: waiting for a run, a queue-dispatched run (no frames),
 * the run's end. Nothing is sent to the run's page.
 */

export type LiveState = 'connecting' | 'waiting' | 'live' | 'finished' | 'no_frames' | 'closed' | 'refused';

interface Shown {
  runId?: string;
  executionId?: string;
  status?: string;
  message?: string;
}

export function RunLiveView({
  automationId,
  runId,
  onState,
  className,
}: {
  automationId: string;
  runId?: string;
  onState?(state: LiveState, shown: Shown): void;
  className?: string;
}) {
  const canvasRef = useRef<HTMLCanvasElement | null>(null);
  const [state, setState] = useState<LiveState>('connecting');
  const [shown, setShown] = useState<Shown>({});
  const [frames, setFrames] = useState(0);
  const [attempt, setAttempt] = useState(0);
  const onStateRef = useRef(onState);
  onStateRef.current = onState;

  useEffect(() => {
    let current: LiveState = 'connecting';
    let info: Shown = {};
    const go = (s: LiveState, patch: Shown = {}) => {
      current = s;
      info = { ...info, ...patch };
      setState(s);
      setShown(info);
      onStateRef.current?.(s, info);
    };
    go('connecting');
    setFrames(0);
    const query = runId ? `?run_id=${encodeURIComponent(runId)}` : '';
    let opened = false;
    // Only the newest frame is drawn; frames that arrive while one decodes replace each other.
    const drawFrame = frameDrawer(
      () => canvasRef.current,
      (count) => {
        if (count === 1) setFrames(1);
      },
    );
    const ws = openLiveSocket(`/api/automations/${encodeURIComponent(automationId)}/live${query}`, (m) => {
      switch (m.type) {
        case 'waiting':
          go('waiting');
          break;
        case 'run_started':
          go('live', { runId: m.run_id, executionId: m.execution_id, status: 'running' });
          break;
        case 'frame':
          drawFrame(m);
          break;
        case 'run_finished':
          go('finished', { runId: m.run_id, status: m.status });
          break;
        case 'notice':
          if (m.reason === 'no_frames') go('no_frames', { message: m.message, ...(m.run_id ? { runId: m.run_id } : {}) });
          break;
        case 'closed':
          go('closed', { message: m.message });
          break;
      }
    });
    ws.onopen = () => {
      opened = true;
    };
    ws.onclose = (event) => {
      if (!opened) return go('refused', { message: 'The live view could not be opened: sign in again, or the service has no browser to watch runs with.' });
      if (current === 'finished' || current === 'no_frames' || current === 'closed') return;
      go('closed', { message: event.code === 1001 ? 'The service is restarting.' : `The live view closed (${event.reason || event.code}).` });
    };
    return () => ws.close(1000);
  }, [automationId, runId, attempt]);

  const again = () => setAttempt((n) => n + 1);
  const tone = state === 'live' ? 'green' : state === 'waiting' || state === 'connecting' ? 'blue' : state === 'finished' ? 'gray' : 'amber';
  const label = {
    connecting: 'connecting',
    waiting: 'waiting for a run',
    live: 'live',
    finished: 'run ended',
    no_frames: 'no frames',
    closed: 'closed',
    refused: 'unavailable',
  }[state];
  const runLink = shown.executionId ? `/runs/${encodeURIComponent(shown.executionId)}` : shown.runId ? `/runs/${encodeURIComponent(shown.runId)}` : undefined;
  return (
    <div className={`live-view ${className ?? ''}`} data-testid="run-live" data-state={state}>
      <div className="live-head">
        <Badge tone={tone}>
          {state === 'live' ? <span className="pulse" aria-hidden="true" /> : null} {label}
        </Badge>
        {shown.runId ? (
          <span className="muted small">
            run <code>{shown.runId.slice(0, 8)}</code>
            {runLink && !runId ? (
              <>
                {' '}
                · <Link to={runLink}>open the run</Link>
              </>
            ) : null}
          </span>
        ) : null}
        <span className="live-note muted small">Read-only: the run's page takes no input from here. Secret fields are blacked out.</span>
      </div>
      <div className={`studio-screen ${state === 'live' ? 'is-live' : ''}`}>
        <canvas ref={canvasRef} className="studio-canvas live-canvas" aria-label="Live view of the run" width={1280} height={720} />
        {state !== 'live' || frames === 0 ? (
          <div className={`studio-overlay ${state === 'finished' && frames > 0 ? 'live-overlay-end' : ''}`}>
            {state === 'connecting' ? (
              <span>Connecting…</span>
            ) : state === 'waiting' ? (
              <span>
                No run of this automation is in flight here. The next one (a gateway or MCP call, a test run or a schedule fire) appears as it starts.
              </span>
            ) : state === 'live' ? (
              <span>The run started; waiting for its page…</span>
            ) : state === 'finished' ? (
              <span>
                The run ended: <strong>{shown.status}</strong>.{' '}
                {!runId ? (
                  <button type="button" className="btn btn-small" onClick={again}>
                    Watch the next run
                  </button>
                ) : null}
              </span>
            ) : state === 'no_frames' ? (
              <span>{shown.message ?? 'This run relays no frames here.'}</span>
            ) : (
              <span>
                {shown.message ?? 'The live view closed.'}{' '}
                <button type="button" className="btn btn-small" onClick={again}>
                  Reconnect
                </button>
              </span>
            )}
          </div>
        ) : null}
      </div>
    </div>
  );
}

import { useReducer, useRef } from 'react';
import { post, type AuthoringSession, type Automation } from '../api';
import { useAction } from '../ui';
import { BrowserCard } from './studio/browser-card';
import type { Op } from './studio/ops';
import { RerecordPanel } from './studio/rerecord-panel';
import { initialState, studioReducer } from './studio/state';
import { StepsCard } from './studio/steps-card';
import { useCanvasInput } from './studio/use-canvas-input';
import { useStudioSocket } from './studio/use-studio-socket';

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
 *
 * The page's parts are under studio/: its state (a reducer of the socket's messages and the user's
 * edits), the socket hook (messages typed by src/service/studio/protocol.ts), the canvas's input, the
 * Browser card, the captured steps and the re-record panel.
 */

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
  const [state, dispatch] = useReducer(studioReducer, undefined, () => initialState(automation.site, rerecord));
  const socket = useStudioSocket({ automationId: automation.id, session, onSession, canvasRef, status: state.status, dispatch });
  const input = useCanvasInput(canvasRef, socket.viewport, socket.send);
  const editing = session.state === 'editing';
  const ops = session.captured_ops as Op[];

  // Re-record: reopen a published capture first (the live version stays live until the next publish).
  const beginRerecord = useAction(async (step: string) => {
    if (socket.sessionRef.current.state !== 'editing') onSession((await post<{ session: AuthoringSession }>(`/api/authoring/${automation.id}/edit`)).session);
    dispatch({ type: 'rerecord', step });
    socket.start(step);
  });

  const { fromStep } = state;
  const drifted = fromStep ? /^[a-z]+_(\d+)$/.exec(fromStep) : null;
  const driftedIndex = drifted ? Number(drifted[1]) - 1 : -1;
  return (
    <div className="studio">
      {fromStep ? (
        <RerecordPanel
          step={fromStep}
          index={driftedIndex}
          op={ops[driftedIndex]}
          status={state.status}
          replay={state.replay}
          insert={state.insert}
          busy={beginRerecord.busy}
          error={beginRerecord.error}
          editing={editing}
          onStart={(step) => void beginRerecord.run(step)}
        />
      ) : null}
      <BrowserCard
        automation={automation}
        state={state}
        dispatch={dispatch}
        editing={editing}
        canvasRef={canvasRef}
        input={input}
        start={() => socket.start()}
        stop={() => socket.stop()}
        send={socket.send}
        sendFiles={socket.sendFiles}
        cancelFiles={socket.cancelFiles}
      />
      <StepsCard
        automation={automation}
        session={session}
        onSession={onSession}
        onPublished={onPublished}
        commitTyping={socket.commitTyping}
        stop={socket.stop}
        dispatch={dispatch}
        fromStep={fromStep}
        driftedIndex={driftedIndex}
        insert={state.insert}
      />
    </div>
  );
}

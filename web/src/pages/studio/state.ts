import type { StudioServerMessage } from '../../../../src/service/studio/protocol';

/** The studio page's state: the live session as its messages leave it, and the recorder's inputs. */

export type Status = 'idle' | 'connecting' | 'live' | 'closed';
export type Replay =
  | { phase: 'replaying'; step: number; of: number; id: string }
  | { phase: 'failed'; step: number; of: number; id: string | null; code: string; message: string };
/** Where this re-record puts ops (ready.rerecord), whether the drifted op was replaced, what was added. */
export interface Insert {
  index: number;
  step: string;
  replaced: boolean;
  added: number;
}
export interface Chooser {
  multiple: boolean;
  accept: string;
  max_bytes: number;
  max_files: number;
}

export interface StudioState {
  status: Status;
  /** The remote page's viewport, which the canvas takes. */
  size: { width: number; height: number };
  url: string;
  /** The address bar's text. */
  address: string;
  notices: string[];
  failure: string | undefined;
  /** The automation's site is one the egress rule refuses (SVC_EGRESS_ALLOW): the studio never opened it. */
  refusedSite: boolean;
  extractName: string;
  armed: string | null;
  /** Extract a list (every item like the picked one) rather than one value. */
  extractList: boolean;
  armedList: boolean;
  /** 0 until the first frame, then 1. */
  frames: number;
  fromStep: string | null;
  replay: Replay | null;
  insert: Insert | null;
  chooser: Chooser | null;
  /** The remote page's document: navigating, its DOM ready (the capture script listens), or fully loaded. */
  load: 'loading' | 'interactive' | 'complete';
  /** The names of the files being sent to the page's chooser. */
  sending: string | null;
  /** Waiting for `stopped` before closing. */
  stopping: boolean;
}

export type StudioEvent =
  /** A session is being opened: what the last one said is cleared. */
  | { type: 'connect' }
  | { type: 'server'; message: StudioServerMessage }
  /** An `op` message's op was placed at `at` of the session's ops (its `index`, clamped to the list). */
  | { type: 'op'; at: number; replaced: boolean; kind: unknown }
  /** The socket closed; `opened`: it had been ready. */
  | { type: 'socket_closed'; opened: boolean; code: number; reason: string }
  /** The user stopped recording (the socket is closed by the viewer). */
  | { type: 'stopped' }
  | { type: 'stopping'; on: boolean }
  | { type: 'say'; message: string }
  | { type: 'address'; value: string }
  | { type: 'extract_name'; value: string }
  | { type: 'extract_list'; value: boolean }
  | { type: 'sending'; files: string | null }
  /** The file chooser is answered or cancelled here. */
  | { type: 'chooser_closed' }
  | { type: 'rerecord'; step: string };

export const initialState = (site: string, rerecord: string | null | undefined): StudioState => ({
  status: 'idle',
  size: { width: 1280, height: 720 },
  url: site,
  address: site,
  notices: [],
  failure: undefined,
  refusedSite: false,
  extractName: '',
  armed: null,
  extractList: false,
  armedList: false,
  frames: 0,
  fromStep: rerecord ?? null,
  replay: null,
  insert: null,
  chooser: null,
  load: 'loading',
  sending: null,
  stopping: false,
});

const said = (s: StudioState, message: string): StudioState => ({ ...s, notices: [...s.notices.slice(-4), message] });

export function studioReducer(s: StudioState, e: StudioEvent): StudioState {
  switch (e.type) {
    case 'connect':
      return { ...s, failure: undefined, refusedSite: false, notices: [], frames: 0, replay: null, insert: null, status: 'connecting' };
    case 'server':
      return onMessage(s, e.message);
    case 'op': {
      const x = s.insert;
      return {
        ...s,
        armed: e.kind === 'extract' ? null : s.armed,
        insert: x ? { ...x, index: e.at + 1, replaced: x.replaced || e.replaced, added: x.added + 1 } : x,
      };
    }
    case 'socket_closed': {
      const next: StudioState = { ...s, status: 'closed', armed: null };
      if (!e.opened) {
        if (e.code === 4024) return next; // the replay failed: said by its own panel
        return {
          ...next,
          failure:
            s.failure ??
            'The studio could not be opened: only owners record, the capture must be editable (reopen it if published), and the browser limit may be reached. Try again in a moment.',
        };
      }
      if (e.code !== 1000 && e.code !== 1005) return { ...next, failure: s.failure ?? `The studio closed (${e.reason || e.code}).` };
      return next;
    }
    case 'stopped':
      return { ...s, status: 'closed', chooser: null };
    case 'stopping':
      return { ...s, stopping: e.on };
    case 'say':
      return said(s, e.message);
    case 'address':
      return { ...s, address: e.value };
    case 'extract_name':
      return { ...s, extractName: e.value };
    case 'extract_list':
      return { ...s, extractList: e.value };
    case 'sending':
      return { ...s, sending: e.files };
    case 'chooser_closed':
      return { ...s, chooser: null, sending: null };
    case 'rerecord':
      return { ...s, fromStep: e.step };
  }
}

/** What a server message changes on the page (the session's ops are the socket hook's to update). */
function onMessage(s: StudioState, m: StudioServerMessage): StudioState {
  switch (m.type) {
    case 'ready':
      return {
        ...s,
        size: m.viewport,
        status: 'live',
        replay: null,
        insert: m.rerecord ? { index: m.rerecord.index, step: m.rerecord.step, replaced: false, added: 0 } : s.insert,
      };
    case 'viewport':
      // The remote page took the size asked for (resize): clicks map onto it from now on.
      return { ...s, size: { width: m.width, height: m.height } };
    case 'frame':
      return s.frames === 0 ? { ...s, frames: 1 } : s;
    case 'replaying':
      return { ...s, replay: { phase: 'replaying', step: m.step, of: m.of, id: m.id } };
    case 'replay_failed':
      return { ...s, replay: { phase: 'failed', step: m.step, of: m.of, id: m.id, code: m.code, message: m.message } };
    case 'url':
    case 'loaded':
      return {
        ...s,
        url: m.url,
        address: m.url,
        load: m.type === 'url' ? 'loading' : m.complete ? 'complete' : 'interactive',
        // A new document has a capture script of its own, not armed: so is the button.
        armed: m.type === 'loaded' && m.complete === false ? null : s.armed,
      };
    case 'extract_armed':
      return { ...s, armed: m.field, armedList: m.all === true };
    case 'extract_cancelled':
      // Escape in the page (or a pick with no locator, said in a notice): the button un-arms.
      return { ...s, armed: null };
    case 'file_chooser':
      return {
        ...s,
        chooser: {
          multiple: m.multiple === true,
          accept: String(m.accept ?? ''),
          max_bytes: Number(m.max_bytes) || 10 * 1024 * 1024,
          max_files: Number(m.max_files) || 1,
        },
        sending: null,
      };
    case 'files_received':
      return said({ ...s, chooser: null, sending: null }, `Uploaded ${m.files.map((f) => `${f.name} (${f.size} bytes)`).join(', ')} to the page.`);
    case 'notice':
      return said(s, m.message);
    case 'error':
      if (m.error === 'egress_denied') return s; // the closed message that follows says it
      return said(m.error === 'file_too_large' ? { ...s, sending: null } : s, `${m.error}: ${m.message}`);
    case 'refused':
      // A typed address the egress rule refuses: not opened, not captured.
      return said(s, m.message);
    case 'closed':
      return { ...s, refusedSite: m.reason === 'egress_denied' ? true : s.refusedSite, failure: m.reason !== 'replay_failed' ? m.message : s.failure };
    default:
      // op and stopped (the session's, placed by the socket hook), replayed, pong.
      return s;
  }
}

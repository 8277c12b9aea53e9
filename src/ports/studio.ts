/**
 * The studio's browser (docs/hosted-api.md, "Studio (live capture)"): a live page the hosted service
 * streams to a viewer and relays the viewer's input into, reporting what the user did as raw
 * actions. flowctl/adapters/executor-playwright's createStudioBrowser() implements it over Chromium.
 */

import type { FileSource } from '../tools/types.js';

export interface StudioViewport {
  width: number;
  height: number;
}

/** One screencast frame: JPEG bytes in base64, and the size of the page area it shows (CSS px). */
export interface StudioFrame {
  data: string;
  width: number;
  height: number;
}

export type StudioMouseButton = 'left' | 'middle' | 'right' | 'none';

/**
 * Input from the viewer, in page CSS pixels. A drag is mouse input too: `down`, `move`s with the button
 * held, `up`; the browser relays an HTML5 drag and drop the page starts as CDP drag events.
 */
export type StudioInput =
  | {
      type: 'mouse';
      action: 'down' | 'up' | 'move' | 'wheel';
      x: number;
      y: number;
      button?: StudioMouseButton;
      clickCount?: number;
      deltaX?: number;
      deltaY?: number;
      modifiers?: number;
    }
  | { type: 'key'; action: 'down' | 'up'; key: string }
  | { type: 'text'; text: string };

/** A locator as the capture script computes it (docs/recordings.md, "Targets"). */
export interface StudioLocator {
  testid?: string;
  role?: string;
  name?: string;
  label?: string;
  text?: string;
  css?: string;
}

/**
 * What the page reported (untrusted: the page's own scripts can call the capture binding too, so the
 * service validates every action before it becomes an op).
 */
export type StudioAction =
  | { kind: 'click'; target: unknown }
  | { kind: 'fill'; target: unknown; value?: unknown; secret?: unknown; field?: unknown }
  | { kind: 'press'; key: unknown; target?: unknown }
  | { kind: 'select'; target: unknown; value: unknown }
  | { kind: 'extract'; target: unknown; name: unknown; all?: unknown; container?: unknown }
  /** The user left extract mode without picking (Escape in the page), or the pick could not be named. */
  | { kind: 'extract_cancelled' }
  | { kind: 'drag'; source: unknown; target: unknown }
  | { kind: 'refused'; message: unknown };

/** A file chooser the page opened (its `<input type=file>` clicked), intercepted: no dialog shows. */
export interface StudioFileChooser {
  /** The input, as the capture script names it (untrusted, like an action's target); undefined in a frame. */
  target: unknown;
  multiple: boolean;
  /** The input's `accept` attribute ("" when none). */
  accept: string;
}

/** A file to give the open chooser (its media type is the browser's guess from the name's extension, as for a picked file). */
export interface StudioFile {
  name: string;
  bytes: Uint8Array;
}

export interface StudioPageHandlers {
  /** A frame; call `ack` once it is sent (or dropped): the next frame comes only after it. */
  onFrame(frame: StudioFrame, ack: () => void): void;
  onAction(action: StudioAction): void;
  /** Something the user should know (a new tab refused, a dialog dismissed). */
  onNotice(message: string): void;
  /** The main frame's URL changed. */
  onNavigated?(url: string): void;
  /**
   * The main frame's document loaded: `complete` false at DOMContentLoaded (the capture script is
   * listening), true at the load event (frames and subresources loaded too).
   */
  onLoaded?(url: string, complete: boolean): void;
  /** The page went away on its own (crash, browser gone). */
  onGone?(reason: string): void;
  /**
   * The page opened a file chooser: answer with `StudioPage.setFiles` (or `cancelFileChooser`). A newer
   * chooser replaces one not answered yet. Without this handler choosers are not intercepted.
   */
  onFileChooser?(chooser: StudioFileChooser): void;
}

/**
 * One step of a replay (docs/hosted-api.md, "Re-record"): a browser tool call as the engine makes it,
 * from the compiled capture (`browser/<kind>@<MAJOR.MINOR>` and its input, expressions resolved).
 */
export interface StudioReplayStep {
  /** The step's id in the FlowSpec (`fill_2`), for messages. */
  id: string;
  /** `browser/<kind>@<MAJOR.MINOR>`, as the compiled capture names it. */
  tool: string;
  /** The tool's input with every `${inputs.x}` resolved (a secret slot's value included). */
  input: Record<string, unknown>;
  /** The step's budget (ms). */
  timeoutMs: number;
  /**
   * The input holds a secret value: the studio shows its page to a viewer, so the value is typed only
   * into a password field (which Chromium draws as dots); any other field fails the replay.
   */
  secret?: boolean;
  /** The step is optional: absent within the optional window, it is skipped, as in a run. */
  optional?: boolean;
}

export interface StudioReplayOptions {
  /** Called before each step (0-based index). */
  onStep?(index: number, step: StudioReplayStep): void;
  /**
   * Where replayed uploads read their files (the hosted service: the org's file store, by the digest
   * the step pins), as a run's `RunOptions.files`. Absent: a step that uploads is not replayed.
   */
  files?: FileSource;
}

export interface StudioPage {
  input(input: StudioInput): void;
  /**
   * Replay steps in this page with the engine's browser tools (the page's state is then what a run's
   * page is before the next step). What the page reports while replaying is not an action of the
   * user: it is dropped, up to and including a blur of the focused field at the end (whose `change`
   * would otherwise report the last fill again). Rejects with a FlowError `replay_failed` whose data
   * is `{step, index, code}`: the step that failed and the tool's error code (`locator_drift`, ...).
   */
  replay(steps: StudioReplayStep[], options?: StudioReplayOptions): Promise<void>;
  /**
   * Commit the typing the page has not committed yet: the viewer's input sent before is dispatched,
   * the page commits its dirty field (a `fill` through `onAction`), a barrier through the capture
   * binding proves every report sent before it has arrived, and a typed value still not committed
   * (the page did not answer) is reported as its `fill`. Bounded: a page that does not answer within
   * seconds does not hold it up. The browser also commits the latest typing by itself before a
   * main-frame navigation's document reports anything, and on `close()`.
   */
  commitTyping(): Promise<void>;
  /** Navigate the page (a typed URL). Rejects when the navigation fails. */
  navigate(url: string): Promise<void>;
  /**
   * Arm extract mode: the element under the pointer is outlined with the text it would give, and the
   * next click picks it for output field `field` (null disarms). With `all`, the pick is a list: every
   * item like it (reported as an `extract` with `all: true` and a `container`).
   */
  extract(field: string | null, options?: { all?: boolean }): Promise<void>;
  resize(viewport: StudioViewport): Promise<void>;
  /**
   * Give the open file chooser these files (as the user picking them: the input's `input` and `change`
   * events fire). FlowError `no_file_chooser` when none is open; rejects when its input is gone.
   */
  setFiles(files: StudioFile[]): Promise<void>;
  /** Forget the open file chooser (the input keeps what it had). */
  cancelFileChooser(): void;
  readonly viewport: StudioViewport;
  close(): Promise<void>;
}

export interface StudioBrowser {
  /** A fresh, isolated context with one page at `url`, its screencast started. */
  open(options: { url: string; viewport: StudioViewport } & StudioPageHandlers): Promise<StudioPage>;
  /**
   * Whether the egress rule refuses a page at `url` (checked as the guarded proxy checks it, DNS
   * included): `{target, message}` (`host:port` and why), or `undefined` when it is allowed, when the
   * browser has no egress guard, or when the name does not resolve (the page then shows its own error).
   */
  refusal?(url: string): Promise<{ target: string; message: string } | undefined>;
  /** Pages open now. */
  openPages(): number;
  dispose(): Promise<void>;
}

/**
 * Live frames of runs by engine run id: the source of the run live view (docs/hosted-api.md, "Run
 * live view"). The executor that runs the browser steps captures them; flowctl/adapters/executor-playwright's
 * `createPlaywrightExecutor().screencast` implements it (CDP `Page.startScreencast`, captured only
 * while someone subscribes).
 */
export interface RunScreencast {
  /**
   * Receive frames of run `runId` until the returned function is called. Subscribing before the
   * run's page opens is fine: frames start when it does.
   */
  subscribe(runId: string, onFrame: (frame: RunScreencastFrame) => void): () => void;
}

/** A frame of a run's page: JPEG bytes in base64, and CDP's frame metadata (`deviceWidth`, `deviceHeight`: CSS px). */
export interface RunScreencastFrame {
  data: string;
  metadata?: Record<string, unknown>;
}

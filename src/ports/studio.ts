/**
 * The studio's browser (docs/hosted-api.md, "Studio (live capture)"): a live page the hosted service
 * streams to a viewer and relays the viewer's input into, reporting what the user did as raw
 * actions. flowctl/adapters/executor-playwright's createStudioBrowser() implements it over Chromium.
 */

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

/** Input from the viewer, in page CSS pixels. */
export type StudioInput =
  | { type: 'mouse'; action: 'down' | 'up' | 'move' | 'wheel'; x: number; y: number; button?: StudioMouseButton; clickCount?: number; deltaX?: number; deltaY?: number; modifiers?: number }
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
  | { kind: 'select'; target: unknown; value: unknown }
  | { kind: 'extract'; target: unknown; name: unknown }
  | { kind: 'refused'; message: unknown };

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
}

export interface StudioPage {
  input(input: StudioInput): void;
  /** Navigate the page (a typed URL). Rejects when the navigation fails. */
  navigate(url: string): Promise<void>;
  /** Arm extract mode: the next click picks the element of output field `field` (null disarms). */
  extract(field: string | null): Promise<void>;
  resize(viewport: StudioViewport): Promise<void>;
  readonly viewport: StudioViewport;
  close(): Promise<void>;
}

export interface StudioBrowser {
  /** A fresh, isolated context with one page at `url`, its screencast started. */
  open(options: { url: string; viewport: StudioViewport } & StudioPageHandlers): Promise<StudioPage>;
  /** Pages open now. */
  openPages(): number;
  dispose(): Promise<void>;
}

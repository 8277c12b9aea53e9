/**
 * Keys a `press` op may name: Playwright's key names on its US keyboard layout (the only layout it has),
 * so a typo (`enter`, `Ctrl+A`) is refused when the ops file is recorded, not when the run gets there.
 * A key is a chord of `+`-separated names: modifiers first, the key last (`Enter`, `Control+A`,
 * `Shift+Tab`, `Control+Shift+ArrowLeft`, `Shift++`). See docs/recordings.md ("press").
 */

/** Key codes of Playwright's US layout (`KeyboardEvent.code` values). */
const CODES = [
  'Escape',
  'F1',
  'F2',
  'F3',
  'F4',
  'F5',
  'F6',
  'F7',
  'F8',
  'F9',
  'F10',
  'F11',
  'F12',
  'Backquote',
  'Digit1',
  'Digit2',
  'Digit3',
  'Digit4',
  'Digit5',
  'Digit6',
  'Digit7',
  'Digit8',
  'Digit9',
  'Digit0',
  'Minus',
  'Equal',
  'Backslash',
  'Backspace',
  'Tab',
  'KeyQ',
  'KeyW',
  'KeyE',
  'KeyR',
  'KeyT',
  'KeyY',
  'KeyU',
  'KeyI',
  'KeyO',
  'KeyP',
  'BracketLeft',
  'BracketRight',
  'CapsLock',
  'KeyA',
  'KeyS',
  'KeyD',
  'KeyF',
  'KeyG',
  'KeyH',
  'KeyJ',
  'KeyK',
  'KeyL',
  'Semicolon',
  'Quote',
  'Enter',
  'ShiftLeft',
  'KeyZ',
  'KeyX',
  'KeyC',
  'KeyV',
  'KeyB',
  'KeyN',
  'KeyM',
  'Comma',
  'Period',
  'Slash',
  'ShiftRight',
  'ControlLeft',
  'MetaLeft',
  'AltLeft',
  'Space',
  'AltRight',
  'AltGraph',
  'MetaRight',
  'ContextMenu',
  'ControlRight',
  'PrintScreen',
  'ScrollLock',
  'Pause',
  'PageUp',
  'PageDown',
  'Insert',
  'Delete',
  'Home',
  'End',
  'ArrowLeft',
  'ArrowUp',
  'ArrowRight',
  'ArrowDown',
  'AudioVolumeMute',
  'AudioVolumeDown',
  'AudioVolumeUp',
  'MediaTrackNext',
  'MediaTrackPrevious',
  'MediaPlayPause',
  'NumLock',
  'NumpadDivide',
  'NumpadMultiply',
  'NumpadSubtract',
  'Numpad7',
  'Numpad8',
  'Numpad9',
  'Numpad4',
  'Numpad5',
  'Numpad6',
  'NumpadAdd',
  'Numpad1',
  'Numpad2',
  'Numpad3',
  'Numpad0',
  'NumpadDecimal',
  'NumpadEnter',
] as const;

/** Modifier names; `ControlOrMeta` is Meta on macOS and Control elsewhere. */
export const MODIFIERS = ['Shift', 'Control', 'Alt', 'Meta', 'ControlOrMeta'] as const;

/** The printable characters of the layout (a key may be named by the character it types). */
const CHARACTERS = '`~1!2@3#4$5%6^7&8*9(0)-_=+\\|qQwWeErRtTyYuUiIoOpP[{]}aAsSdDfFgGhHjJkKlL;:\'"zZxXcCvVbBnNmM,<.>/? ';

const NAMES: ReadonlySet<string> = new Set<string>([...CODES, ...MODIFIERS, ...CHARACTERS]);

/** Split a chord as Playwright does: `+` separates names, except a `+` that is a name itself (`Shift++`, `+`). */
export function splitChord(key: string): string[] {
  const parts: string[] = [];
  let building = '';
  for (const ch of key) {
    if (ch === '+' && building) {
      parts.push(building);
      building = '';
    } else building += ch;
  }
  parts.push(building);
  return parts;
}

/** Why a key chord is not one Playwright can press, or undefined when it is. Never echoes the key (short, but an op's text). */
export function keyProblem(key: string): string | undefined {
  if (key === '') return 'must not be empty';
  const parts = splitChord(key);
  const bad = parts.findIndex((p) => !NAMES.has(p));
  if (bad >= 0) {
    const which = parts.length === 1 ? 'is not a key name' : `has an unknown key name at part ${bad + 1} of ${parts.length}`;
    return `${which} (a key name such as Enter, Tab, Escape, ArrowDown, KeyA or a character, after optional modifiers ${MODIFIERS.join(', ')}, joined by "+")`;
  }
  return undefined;
}

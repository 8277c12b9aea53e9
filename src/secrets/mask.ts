import { MASK } from '../ports/secrets.js';
import { secretPattern } from './encodings.js';

/**
 * The per-run set of resolved secret values. Everything the engine journals, returns, logs or puts
 * in an error message goes through `mask()`, which replaces every occurrence of every known value with
 * `***`, also inside larger strings (a URL, an error text that echoes the value) and object keys, and
 * in every encoding the value may have taken on its way out: percent and form encoding, JSON and
 * HTML escapes, base64 and base64url (also inside a Basic credential). See encodings.ts.
 */
export class SecretMask {
  // Longest first, so a value that contains another is replaced whole.
  private values: string[] = [];
  private patterns: RegExp[] = [];

  /** Remember a resolved value. Empty strings are ignored (they would match everywhere). */
  add(value: string): void {
    if (value.length === 0 || this.values.includes(value)) return;
    this.values.push(value);
    this.values.sort((a, b) => b.length - a.length);
    this.patterns = this.values.map((v) => new RegExp(secretPattern(v), 'g'));
  }

  get size(): number {
    return this.values.length;
  }

  /** Whether `text` contains any of the resolved values, in any of its encodings. */
  covers(text: string): boolean {
    return this.patterns.some((p) => {
      p.lastIndex = 0;
      return p.test(text);
    });
  }

  maskString(text: string): string {
    let out = text;
    for (const pattern of this.patterns) {
      pattern.lastIndex = 0;
      out = out.replace(pattern, MASK);
    }
    return out;
  }

  /** A deep copy of `value` with every secret occurrence masked; non-JSON leaves pass through. */
  mask<T>(value: T): T {
    if (this.values.length === 0) return value;
    return this.deep(value) as T;
  }

  private deep(value: unknown): unknown {
    if (typeof value === 'string') return this.maskString(value);
    if (Array.isArray(value)) return value.map((v) => this.deep(v));
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.maskString(k)] = this.deep(v);
      return out;
    }
    return value;
  }

  /** The message of any thrown value, masked. */
  maskError(err: unknown): string {
    const message = err instanceof Error ? err.message : String(err);
    return this.maskString(message);
  }
}

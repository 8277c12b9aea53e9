/** Formatting helpers: times, durations, digests. */

export function relTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  const future = s < 0;
  const a = Math.abs(s);
  const [n, unit] = a < 45 ? [a, 's'] : a < 3600 ? [Math.round(a / 60), 'min'] : a < 86_400 ? [Math.round(a / 3600), 'h'] : [Math.round(a / 86_400), 'd'];
  if (a < 5) return future ? 'in a moment' : 'just now';
  return future ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}

export function absTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function duration(ms: number | undefined | null): string {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export const shortDigest = (d: string | null | undefined) => (d ? `${d.replace(/^sha256:/, '').slice(0, 12)}` : '—');
export const shortId = (id: string) => id.slice(0, 8);

export function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    return String(value);
  }
}

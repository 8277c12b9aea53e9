import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError } from './api';
import { absTime, relTime, shortDigest } from './format';

/** Shared pieces: loading/empty/error states, badges, buttons, cards, tabs. */

export type Resource<T> = { state: 'loading'; data?: T } | { state: 'ok'; data: T } | { state: 'error'; error: ApiError; data?: T };

/** Load with `fn` whenever `deps` change; `reload()` keeps the old data on screen while loading. */
export function useResource<T>(fn: () => Promise<T>, deps: unknown[]): Resource<T> & { reload(): Promise<void>; set(data: T): void } {
  const [r, setR] = useState<Resource<T>>({ state: 'loading' });
  const seq = useRef(0);
  const load = useCallback(fn, deps);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    setR((prev) => ({ state: 'loading', data: prev.data }));
    try {
      const data = await load();
      if (mine === seq.current) setR({ state: 'ok', data });
    } catch (err) {
      if (mine === seq.current) setR((prev) => ({ state: 'error', error: asApiError(err), data: prev.data }));
    }
  }, [load]);
  useEffect(() => {
    setR({ state: 'loading' });
    void reload();
  }, [reload]);
  return { ...r, reload, set: (data: T) => setR({ state: 'ok', data }) };
}

export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, 'client_error', (err as Error)?.message ?? String(err));
}

/** Run an action, remembering whether it is running and how it failed. */
export function useAction<A extends unknown[], R>(fn: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const run = async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn(...args);
    } catch (err) {
      setError(asApiError(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

const TITLES: Record<string, string> = {
  invalid_request: 'Some fields are not valid',
  invalid_json: 'The request was not valid JSON',
  unauthenticated: 'You are signed out',
  invalid_credentials: 'Wrong email or password',
  forbidden: 'Not allowed',
  not_found: 'Not found',
  user_not_found: 'No account with that email',
  name_taken: 'That name is taken',
  last_owner: 'An org needs an owner',
  not_editable: 'The capture is published',
  conflict: 'Conflict',
  secret_leak: 'A secret would leak',
  rate_limited: 'Too many requests',
  body_too_large: 'Too large',
  network_error: 'The service is unreachable',
  internal_error: 'The service failed',
  method_not_allowed: 'Not supported',
  test_key_forbidden: 'A test key cannot run this',
};

/** Codes whose title says all the service's message says (the message would repeat it). */
const SELF_EXPLAINED = new Set(['invalid_credentials']);

/**
 * An error: its title, the service's message and issues. `plain` (forms a person fills in, e.g. the
 * log-in form) leaves out the code chip, and a self-explained code shows its title alone: one message.
 */
export function ErrorBox({ error, title, onRetry, plain }: { error: ApiError; title?: string; onRetry?: () => void; plain?: boolean }) {
  const showMessage = error.message && !(error.code === 'invalid_request' && error.issues.length > 0) && !(plain && SELF_EXPLAINED.has(error.code));
  return (
    <div className="error-box" role="alert">
      <div className="error-head">
        <strong>{title ?? TITLES[error.code] ?? 'Something went wrong'}</strong>
        {plain ? null : (
          <code className="error-code">
            {error.status ? `${error.status} ` : ''}
            {error.code}
          </code>
        )}
      </div>
      {showMessage ? <p>{error.message}</p> : null}
      {error.issues.length > 0 ? (
        <ul className="issues">
          {error.issues.map((i, n) => (
            <li key={n}>
              {i.path.length > 0 ? <code>{i.path.join('.')}</code> : null} {i.message}
            </li>
          ))}
        </ul>
      ) : null}
      {onRetry ? (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <div className="loading" aria-busy="true">
      <span className="spinner" aria-hidden="true" />
      {label}…
    </div>
  );
}

export function Empty({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="empty">
      <div className="empty-title">{title}</div>
      {children ? <div className="empty-text">{children}</div> : null}
      {action ? <div className="empty-action">{action}</div> : null}
    </div>
  );
}

/** Loading, error or the data (an empty check turns into the empty state). */
export function Async<T>({
  r,
  children,
  empty,
  isEmpty,
  label,
}: {
  r: Resource<T> & { reload(): Promise<void> };
  children: (data: T) => ReactNode;
  empty?: ReactNode;
  isEmpty?: (data: T) => boolean;
  label?: string;
}) {
  if (r.state === 'error' && r.data === undefined) return <ErrorBox error={r.error} onRetry={() => void r.reload()} />;
  if (r.data === undefined) return <Loading label={label} />;
  return (
    <>
      {r.state === 'error' ? <ErrorBox error={r.error} onRetry={() => void r.reload()} /> : null}
      {isEmpty?.(r.data) && empty !== undefined ? empty : children(r.data)}
    </>
  );
}

export function Badge({ tone, children, title }: { tone: 'green' | 'red' | 'gray' | 'amber' | 'blue' | 'violet'; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

export function StatusBadge({ status }: { status: string }) {
  const tone =
    (
      {
        published: 'green',
        succeeded: 'green',
        failing: 'red',
        failed: 'red',
        draft: 'gray',
        canceled: 'gray',
        running: 'blue',
        pending: 'blue',
        queued: 'blue',
      } as const
    )[status as 'draft'] ?? 'gray';
  return (
    <Badge tone={tone}>
      {status === 'running' || status === 'pending' ? <span className="pulse" aria-hidden="true" /> : null}
      {status}
    </Badge>
  );
}

export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span className="muted">—</span>;
  return (
    <time dateTime={at} title={absTime(at)}>
      {relTime(at)}
    </time>
  );
}

export function Digest({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="muted">—</span>;
  return (
    <code className="digest" title={value}>
      {shortDigest(value)}
    </code>
  );
}

export function Card({
  title,
  actions,
  children,
  className,
  subtitle,
}: {
  title?: ReactNode;
  subtitle?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  className?: string;
}) {
  return (
    <section className={`card ${className ?? ''}`}>
      {title || actions ? (
        <header className="card-head">
          <div>
            {title ? <h2 className="card-title">{title}</h2> : null}
            {subtitle ? <p className="card-subtitle">{subtitle}</p> : null}
          </div>
          {actions ? <div className="card-actions">{actions}</div> : null}
        </header>
      ) : null}
      <div className="card-body">{children}</div>
    </section>
  );
}

export function PageHeader({ title, subtitle, actions, crumbs }: { title: ReactNode; subtitle?: ReactNode; actions?: ReactNode; crumbs?: ReactNode }) {
  return (
    <header className="page-head">
      <div>
        {crumbs ? <div className="crumbs">{crumbs}</div> : null}
        <h1>{title}</h1>
        {subtitle ? <p className="page-subtitle">{subtitle}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}

/** A destructive button that asks once more, inline (no browser dialog). */
export function ConfirmButton({
  label,
  confirm,
  onConfirm,
  disabled,
  busy,
  small = true,
}: {
  label: string;
  confirm: string;
  onConfirm(): void;
  disabled?: boolean;
  busy?: boolean;
  small?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={`btn btn-danger-ghost ${small ? 'btn-small' : ''}`} disabled={disabled || busy} onClick={() => setAsking(true)}>
        {busy ? '…' : label}
      </button>
    );
  }
  return (
    <span className="confirm">
      <span className="confirm-text">{confirm}</span>
      <button
        type="button"
        className="btn btn-danger btn-small"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes
      </button>
      <button type="button" className="btn btn-small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="btn btn-small"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        } catch {
          /* no clipboard (insecure context): the text is selectable */
        }
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/** The end of a grid form: the action's error (if any) across the grid, then its submit button. */
export function FormFooter({
  action,
  label,
  busyLabel,
  disabled,
}: {
  action: { busy: boolean; error?: ApiError };
  label: string;
  busyLabel: string;
  disabled?: boolean;
}) {
  return (
    <>
      {action.error ? (
        <div className="span-all">
          <ErrorBox error={action.error} />
        </div>
      ) : null}
      <div className="form-actions span-all">
        <button type="submit" className="btn btn-primary" disabled={action.busy || disabled}>
          {action.busy ? busyLabel : label}
        </button>
      </div>
    </>
  );
}

export function Field({ label, hint, children, htmlFor }: { label: string; hint?: ReactNode; children: ReactNode; htmlFor?: string }) {
  return (
    <div className="field">
      <label htmlFor={htmlFor}>{label}</label>
      {children}
      {hint ? <div className="hint">{hint}</div> : null}
    </div>
  );
}

export function OwnerOnly({ isOwner, children }: { isOwner: boolean; children: ReactNode }) {
  if (isOwner) return <>{children}</>;
  return <span className="muted small">Only an owner can change this.</span>;
}

/** The "older" footer of a cursor-paged list: shown while there is a next cursor. */
export function LoadOlder({ cursor, busy, label, onLoad }: { cursor: string | null | undefined; busy: boolean; label: string; onLoad(cursor: string): void }) {
  if (!cursor) return null;
  return (
    <div className="card-foot">
      <button type="button" className="btn" disabled={busy} onClick={() => onLoad(cursor)}>
        {busy ? 'Loading…' : label}
      </button>
    </div>
  );
}

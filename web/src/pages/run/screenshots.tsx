import { useEffect, useRef, useState } from 'react';
import { artifactUrl } from '../../api';

/**
 * A step's screenshots as thumbnails (GET /api/executions/{id}/artifacts/{digest}); a click shows one
 * full size. Each thumbnail has its loading and error state; a failed one can be loaded again.
 */
export function Screenshots({ execution, shots, caption }: { execution: string; shots: { digest: string; label: string }[]; caption?: string }) {
  const [open, setOpen] = useState<{ digest: string; label: string } | null>(null);
  return (
    <div className="shots" data-testid="step-shots">
      {caption ? <div className="io-label">{caption}</div> : null}
      <div className="shot-row">
        {shots.map((s) => (
          <Thumbnail key={s.digest} src={artifactUrl(execution, s.digest)} label={s.label} onOpen={() => setOpen(s)} />
        ))}
      </div>
      {open ? <Lightbox src={artifactUrl(execution, open.digest)} label={open.label} onClose={() => setOpen(null)} /> : null}
    </div>
  );
}

function Thumbnail({ src, label, onOpen }: { src: string; label: string; onOpen(): void }) {
  const [state, setState] = useState<'loading' | 'ok' | 'error'>('loading');
  const [attempt, setAttempt] = useState(0);
  return (
    <span className={`shot shot-${state}`}>
      <button type="button" className="shot-button" onClick={onOpen} disabled={state !== 'ok'} aria-label={`${label}: show full size`} title={label}>
        <img key={attempt} src={src} alt={label} loading="lazy" onLoad={() => setState('ok')} onError={() => setState('error')} />
      </button>
      {state === 'loading' ? (
        <span className="shot-state" aria-live="polite">
          <span className="spinner" aria-hidden="true" /> Loading screenshot…
        </span>
      ) : null}
      {state === 'error' ? (
        <span className="shot-state shot-error" role="alert">
          The screenshot could not be loaded.{' '}
          <button
            type="button"
            className="btn btn-small"
            onClick={() => {
              setState('loading');
              setAttempt((n) => n + 1);
            }}
          >
            Retry
          </button>
        </span>
      ) : null}
    </span>
  );
}

function Lightbox({ src, label, onClose }: { src: string; label: string; onClose(): void }) {
  const close = useRef<HTMLButtonElement | null>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    close.current?.focus();
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: Escape closes it (the window listener above) and its Close button has the focus; the backdrop click is a pointer shortcut
    <div className="lightbox" role="dialog" aria-modal="true" aria-label={label} onClick={onClose}>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: only stops a click on the picture from reaching the backdrop */}
      <figure className="lightbox-body" onClick={(e) => e.stopPropagation()}>
        <figcaption>
          <span>{label}</span>
          <button ref={close} type="button" className="btn btn-small" onClick={onClose}>
            Close
          </button>
        </figcaption>
        <img src={src} alt={label} />
      </figure>
    </div>
  );
}

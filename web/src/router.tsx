import { createContext, useContext, useEffect, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

/**
 * A small history-API router: the app has a dozen routes, all listed in app.tsx. The service answers
 * index.html for these client paths (src/service/web-app.ts), so deep links and reloads work.
 */

export interface Location {
  path: string;
  search: URLSearchParams;
}

const read = (): Location => ({ path: window.location.pathname.replace(/\/+$/, '') || '/', search: new URLSearchParams(window.location.search) });
const LocationContext = createContext<Location>(read());

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === window.location.pathname + window.location.search) return;
  if (opts.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event('flowctl:navigate'));
  if (!opts.replace) window.scrollTo(0, 0);
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    window.addEventListener('popstate', update);
    window.addEventListener('flowctl:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('flowctl:navigate', update);
    };
  }, []);
  return <LocationContext.Provider value={loc}>{children}</LocationContext.Provider>;
}

export const useLocation = () => useContext(LocationContext);

/** `/automations/:id/:tab?` against a path: the params, or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  const params: Record<string, string> = {};
  for (let i = 0; i < Math.max(p.length, s.length); i++) {
    const part = p[i];
    if (part === undefined) return undefined;
    const optional = part.endsWith('?');
    const name = part.replace(/^:|\?$/g, '');
    if (s[i] === undefined) {
      if (optional) continue;
      return undefined;
    }
    if (part.startsWith(':')) params[name] = decodeURIComponent(s[i]!);
    else if (part !== s[i]) return undefined;
  }
  return params;
}

export function Link({ to, children, ...rest }: { to: string; children: ReactNode } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} {...rest} onClick={onClick}>
      {children}
    </a>
  );
}

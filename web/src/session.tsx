import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { api, type ApiError, get, onUnauthenticated, post, type Session } from './api';

/**
 * The signed-in state. The cookie is HttpOnly, so the app asks the service: a session-only route
 * (GET /api/members) tells whether a session exists without GET /api/session's development-mode
 * auto-provisioning; only then is GET /api/session read.
 */

type State = { status: 'loading' } | { status: 'anonymous' } | { status: 'error'; error: ApiError } | { status: 'signed-in'; session: Session };

interface SessionApi {
  state: State;
  refresh(): Promise<void>;
  signedIn(): Promise<void>;
  logout(): Promise<void>;
  switchOrg(orgId: string): Promise<void>;
}

const Ctx = createContext<SessionApi | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<State>({ status: 'loading' });

  const refresh = useCallback(async () => {
    try {
      await api('GET', '/api/members', undefined, { quiet401: true });
      setState({ status: 'signed-in', session: await get<Session>('/api/session') });
    } catch (err) {
      const e = err as ApiError;
      setState(e.status === 401 ? { status: 'anonymous' } : { status: 'error', error: e });
    }
  }, []);

  useEffect(() => {
    void refresh();
    return onUnauthenticated(() => setState({ status: 'anonymous' }));
  }, [refresh]);

  const value: SessionApi = {
    state,
    refresh,
    signedIn: refresh,
    async logout() {
      try {
        await post('/api/auth/logout');
      } finally {
        setState({ status: 'anonymous' });
      }
    },
    async switchOrg(orgId) {
      await post('/api/session/org', { org_id: orgId });
      await refresh();
    },
  };
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useSessionApi(): SessionApi {
  const v = useContext(Ctx);
  if (!v) throw new Error('useSessionApi outside SessionProvider');
  return v;
}

/** The signed-in session (only rendered inside the signed-in layout). */
export function useSession(): Session {
  const { state } = useSessionApi();
  if (state.status !== 'signed-in') throw new Error('not signed in');
  return state.session;
}

export const useIsOwner = () => useSession().role === 'owner';

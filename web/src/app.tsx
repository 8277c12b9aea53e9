import { useEffect, useState, type ReactNode } from 'react';
import { Link, match, navigate, RouterProvider, useLocation } from './router';
import { ConsentPage } from './pages/consent';
import { SessionProvider, useSession, useSessionApi } from './session';
import { Icon } from './icons';
import { ErrorBox, Loading, useAction } from './ui';
import { AuthPage } from './pages/auth';
import { AutomationsPage, NewAutomationPage } from './pages/automations';
import { AutomationPage } from './pages/automation';
import { RunsPage } from './pages/runs';
import { RunPage } from './pages/run';
import { KeysPage } from './pages/keys';
import { SecretsPage } from './pages/secrets';
import { MembersPage } from './pages/members';
import { AuditPage } from './pages/audit';
import { NewOrgPage } from './pages/org';

export function App() {
  return (
    <RouterProvider>
      <SessionProvider>
        <Root />
      </SessionProvider>
    </RouterProvider>
  );
}

function Root() {
  const { state, refresh } = useSessionApi();
  const { path } = useLocation();
  if (state.status === 'loading') {
    return (
      <div className="center-screen">
        <Loading label="Starting" />
      </div>
    );
  }
  if (state.status === 'error') {
    return (
      <div className="center-screen">
        <div className="auth-card">
          <ErrorBox error={state.error} title="The service did not answer" onRetry={() => void refresh()} />
        </div>
      </div>
    );
  }
  if (state.status === 'anonymous') return <AuthPage mode={path === '/signup' ? 'signup' : 'login'} />;
  if (path === '/login' || path === '/signup' || path === '/') return <Redirect to="/automations" />;
  // The OAuth consent (a chat client connecting): a page of its own, outside the app's shell.
  const consent = match('/consent/:uid', path);
  if (consent) return <ConsentPage uid={consent.uid!} />;
  return (
    <Shell>
      <Routes path={path} />
    </Shell>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function Routes({ path }: { path: string }) {
  let m: Record<string, string> | undefined;
  if (match('/automations', path)) return <AutomationsPage />;
  if (match('/automations/new', path)) return <NewAutomationPage />;
  if ((m = match('/automations/:id/:tab?', path))) return <AutomationPage id={m.id!} tab={m.tab ?? 'overview'} />;
  if (match('/runs', path)) return <RunsPage />;
  if ((m = match('/runs/:id', path))) return <RunPage id={m.id!} />;
  if (match('/keys', path)) return <KeysPage />;
  if (match('/secrets', path)) return <SecretsPage />;
  if (match('/members', path)) return <MembersPage />;
  if (match('/audit', path)) return <AuditPage />;
  if (match('/orgs/new', path)) return <NewOrgPage />;
  return (
    <div className="page">
      <h1>Page not found</h1>
      <p className="muted">
        Nothing lives at <code>{path}</code>. <Link to="/automations">Back to automations</Link>
      </p>
    </div>
  );
}

function NavLink({ to, children, icon }: { to: string; children: ReactNode; icon: string }) {
  const { path } = useLocation();
  const active = path === to || path.startsWith(`${to}/`);
  return (
    <Link to={to} className={`nav-link ${active ? 'active' : ''}`} aria-current={active ? 'page' : undefined}>
      <span className="nav-icon">
        <Icon name={icon} />
      </span>
      {children}
    </Link>
  );
}

function Shell({ children }: { children: ReactNode }) {
  const session = useSession();
  const { logout, switchOrg } = useSessionApi();
  const owner = session.role === 'owner';
  const switching = useAction(async (orgId: string) => {
    await switchOrg(orgId);
    navigate('/automations');
  });
  // Narrow screens: the navigation folds behind a menu button (styles.css hides the top bar on wide
  // screens, where the sidebar is always shown); opening a page folds it again.
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  return (
    <div className={`shell ${menuOpen ? 'menu-open' : ''}`}>
      <header className="topbar">
        <Link to="/automations" className="brand">
          <img src="/favicon.svg" alt="" width={24} height={24} />
          <span>flowctl</span>
        </Link>
        <button
          type="button"
          className="btn btn-small btn-side menu-button"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen((o) => !o)}
        >
          <span aria-hidden="true">{menuOpen ? '✕' : '☰'}</span> Menu
        </button>
      </header>
      <aside className="sidebar" id="sidebar">
        <Link to="/automations" className="brand side-brand">
          <img src="/favicon.svg" alt="" width={26} height={26} />
          <span>flowctl</span>
        </Link>
        <div className="org-switch">
          <label htmlFor="org-select" className="side-label">
            Organization
          </label>
          <select id="org-select" value={session.org.id} disabled={switching.busy} onChange={(e) => void switching.run(e.target.value)}>
            {session.orgs.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
          {switching.error ? <div className="side-error">{switching.error.message}</div> : null}
          <Link to="/orgs/new" className="side-small-link">
            + New organization
          </Link>
        </div>
        <nav className="nav">
          <NavLink to="/automations" icon="automations">
            Automations
          </NavLink>
          <NavLink to="/runs" icon="runs">
            Runs
          </NavLink>
          <div className="side-label nav-section">Manage</div>
          {owner ? (
            <NavLink to="/keys" icon="keys">
              API keys
            </NavLink>
          ) : null}
          <NavLink to="/secrets" icon="secrets">
            Secrets
          </NavLink>
          <NavLink to="/members" icon="members">
            Members
          </NavLink>
          {owner ? (
            <NavLink to="/audit" icon="audit">
              Audit log
            </NavLink>
          ) : null}
        </nav>
        <div className="side-foot">
          <div className="user-row">
            <span className="avatar" aria-hidden="true">
              {session.user.email.slice(0, 1).toUpperCase()}
            </span>
            <span className="user-text">
              <span className="user-email" data-testid="user-email" title={session.user.email}>
                {session.user.email}
              </span>
              <span className="user-role">
                {session.role} of {session.org.name}
              </span>
            </span>
          </div>
          <div className="side-foot-row">
            <a className="side-small-link" href="/docs" target="_blank" rel="noreferrer">
              API reference ↗
            </a>
            <button type="button" className="btn btn-small btn-side" onClick={() => void logout().then(() => navigate('/login'))}>
              Log out
            </button>
          </div>
        </div>
      </aside>
      <main className="main" key={session.org.id}>
        {children}
      </main>
    </div>
  );
}

import { useState, type FormEvent } from 'react';
import { post } from '../api';
import { Link, navigate, useLocation } from '../router';
import { useSessionApi } from '../session';
import { ErrorBox, Field, useAction } from '../ui';

/** Sign up (POST /api/auth/signup) and log in (POST /api/auth/login); the service sets the cookie. */
export function AuthPage({ mode }: { mode: 'login' | 'signup' }) {
  const { signedIn } = useSessionApi();
  const { path } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [orgName, setOrgName] = useState('');
  const action = useAction(async () => {
    if (mode === 'signup') await post('/api/auth/signup', { email, password, ...(orgName.trim() ? { org_name: orgName.trim() } : {}) });
    else await post('/api/auth/login', { email, password });
    // Stay on the page that asked for a sign-in (a deep link), else the automations.
    if (path === '/login' || path === '/signup' || path === '/') navigate('/automations', { replace: true });
    await signedIn();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run();
  };
  const signup = mode === 'signup';
  return (
    <div className="center-screen auth-bg">
      <div className="auth-card">
        <div className="auth-brand">
          <img src="/favicon.svg" alt="" width={36} height={36} />
          <span>flowctl</span>
        </div>
        <h1>{signup ? 'Create your account' : 'Log in'}</h1>
        <p className="muted">
          {signup
            ? 'You will own a new organization: automations, keys and secrets live there.'
            : 'Named, deterministic browser automations, callable by API and MCP.'}
        </p>
        <form onSubmit={submit} className="form">
          <Field label="Email" htmlFor="email">
            <input id="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </Field>
          <Field label="Password" htmlFor="password" hint={signup ? 'At least 8 characters.' : undefined}>
            <input
              id="password"
              type="password"
              autoComplete={signup ? 'new-password' : 'current-password'}
              required
              minLength={signup ? 8 : 1}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </Field>
          {signup ? (
            <Field label="Organization name" htmlFor="org" hint="Optional. Default: “<you>'s org”.">
              <input id="org" maxLength={120} value={orgName} onChange={(e) => setOrgName(e.target.value)} />
            </Field>
          ) : null}
          {action.error ? <ErrorBox error={action.error} plain /> : null}
          <button className="btn btn-primary btn-block" type="submit" disabled={action.busy}>
            {action.busy ? 'Please wait…' : signup ? 'Sign up' : 'Log in'}
          </button>
        </form>
        <p className="auth-switch">
          {signup ? (
            <>
              Have an account? <Link to="/login">Log in</Link>
            </>
          ) : (
            <>
              New here? <Link to="/signup">Create an account</Link>
            </>
          )}
        </p>
      </div>
    </div>
  );
}

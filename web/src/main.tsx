import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { apiGet, auth, describeError, onUnauthorized, type Session } from './api';
import { BASE, navigate, onLinkClick, parseRoute, useLocation, type Route } from './router';
import { Loading, useAsync } from './components';
import { Login } from './views/login';
import { PullRequests } from './views/pull-requests';
import { PullRequestPage } from './views/pull-request';
import { Analytics } from './views/analytics';
import { Settings } from './views/settings';
import { Memory } from './views/memory';
import './styles.css';

type AuthState = { state: 'checking' } | { state: 'signed-in'; session: Session } | { state: 'signed-out' };

const NAV: { path: string; label: string; match: Route['name'][] }[] = [
  { path: `${BASE}/pull-requests`, label: 'Pull requests', match: ['pull-requests', 'pull-request'] },
  { path: `${BASE}/analytics`, label: 'Analytics', match: ['analytics'] },
  { path: `${BASE}/settings`, label: 'Settings', match: ['settings'] },
  { path: `${BASE}/memory`, label: 'Memory & Test Lab', match: ['memory'] },
];

function App() {
  const loc = useLocation();
  const route = parseRoute(loc.pathname, loc.search);
  const [authState, setAuth] = useState<AuthState>({ state: 'checking' });

  useEffect(() => {
    auth.session().then(
      (session) => setAuth({ state: 'signed-in', session }),
      () => setAuth({ state: 'signed-out' }),
    );
    return onUnauthorized(() => setAuth({ state: 'signed-out' }));
  }, []);

  useEffect(() => {
    const names: Record<Route['name'], string> = {
      'pull-requests': 'Pull requests',
      'pull-request': 'Pull request',
      analytics: 'Analytics',
      settings: 'Settings',
      memory: 'Memory & Test Lab',
      login: 'Sign in',
      'not-found': 'Not found',
    };
    document.title = `${names[route.name]} · Verdict operator`;
  }, [route.name]);

  if (authState.state === 'checking') {
    return (
      <main class="page">
        <Loading what="your session" />
      </main>
    );
  }
  if (authState.state === 'signed-out' || route.name === 'login') {
    if (authState.state === 'signed-in' && route.name === 'login') {
      navigate(`${BASE}/pull-requests`, { replace: true });
      return null;
    }
    return (
      <Login
        error={route.name === 'login' ? route.error : null}
        onSignedIn={(session) => {
          setAuth({ state: 'signed-in', session });
          if (route.name === 'login') navigate(`${BASE}/pull-requests`, { replace: true });
        }}
      />
    );
  }

  const signOut = async () => {
    try {
      await auth.logout();
    } catch (err) {
      console.warn('sign-out failed', describeError(err));
    }
    setAuth({ state: 'signed-out' });
  };

  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={`${BASE}/pull-requests`}>
          Verdict
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.path}>
                <a href={item.path} aria-current={item.match.includes(route.name) ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <AlertBadge />
        <div class="who">
          <span title={`signed in via ${authState.session.via}`}>{authState.session.login}</span>
          <button type="button" class="secondary small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" class="page" tabIndex={-1}>
        <View route={route} />
      </main>
    </div>
  );
}

function View({ route }: { route: Route }) {
  switch (route.name) {
    case 'pull-requests':
      return <PullRequests />;
    case 'pull-request':
      return (
        <PullRequestPage key={`${route.repo}#${route.number}`} repo={route.repo} number={route.number} />
      );
    case 'analytics':
      return <Analytics />;
    case 'settings':
      return <Settings />;
    case 'memory':
      return <Memory />;
    case 'login':
      return null;
    case 'not-found':
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page at <code>{route.path}</code>.{' '}
            <a href={`${BASE}/pull-requests`}>Go to pull requests</a>.
          </p>
        </section>
      );
  }
}

render(<App />, document.getElementById('app')!);

/** Open SCM alerts, as a badge linking to the analytics view's Alerts panel (nothing when none is open). */
function AlertBadge() {
  const [answer] = useAsync(
    (signal) =>
      apiGet<{ analytics: { alerts?: { open: { info: number; warning: number; critical: number } } } }>(
        'analytics',
        {},
        signal,
      ),
    [],
  );
  const open = answer.data?.analytics.alerts?.open;
  const total = open ? open.info + open.warning + open.critical : 0;
  if (!open || total === 0) return null;
  return (
    <a
      class={`badge alert-badge${open.critical > 0 ? ' badge-failed' : ''}`}
      href={`${BASE}/analytics#alerts`}
    >
      {total} open alert{total === 1 ? '' : 's'}
    </a>
  );
}

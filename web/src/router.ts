import { useEffect, useState } from 'preact/hooks';

/** The dashboard's paths, all under `/operator/` (the server answers `index.html` for each). */
export const BASE = '/operator';

export type Route =
  | { name: 'pull-requests' }
  | { name: 'pull-request'; repo: string; number: number }
  | { name: 'analytics' }
  | { name: 'settings' }
  | { name: 'memory' }
  | { name: 'login'; error: string | null }
  | { name: 'not-found'; path: string };

export function parseRoute(pathname: string, search: string): Route {
  const path = pathname.replace(/\/+$/, '');
  if (path === BASE || path === '' || path === `${BASE}/pull-requests`) return { name: 'pull-requests' };
  const pr = /^\/operator\/pull-requests\/([^/]+)\/([^/]+)\/(\d+)$/.exec(path);
  if (pr) {
    return {
      name: 'pull-request',
      repo: `${decodeURIComponent(pr[1]!)}/${decodeURIComponent(pr[2]!)}`,
      number: Number(pr[3]),
    };
  }
  if (path === `${BASE}/analytics`) return { name: 'analytics' };
  if (path === `${BASE}/settings`) return { name: 'settings' };
  if (path === `${BASE}/memory`) return { name: 'memory' };
  if (path === `${BASE}/login`) return { name: 'login', error: new URLSearchParams(search).get('error') };
  return { name: 'not-found', path };
}

export function prPath(repo: string, number: number): string {
  const [owner, name] = repo.split('/');
  return `${BASE}/pull-requests/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}/${number}`;
}

const listeners = new Set<() => void>();

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

/** The current location, re-rendered on navigation and on the browser's back and forward. */
export function useLocation(): { pathname: string; search: string } {
  const read = () => ({ pathname: location.pathname, search: location.search });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return loc;
}

/** A left click without modifier keys on a same-app link navigates without reloading the page. */
export function onLinkClick(event: MouseEvent): void {
  if (
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  )
    return;
  const anchor = (event.target as Element | null)?.closest('a');
  if (!anchor || anchor.target || anchor.hasAttribute('download')) return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(`${BASE}/`)) return;
  if (url.pathname.startsWith(`${BASE}/auth/`)) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}

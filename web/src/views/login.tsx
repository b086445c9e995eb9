import { useState } from 'preact/hooks';
import { ApiError, auth, describeError, type Session } from '../api';

/** Why the server refused a sign-in (`/operator/login?error=<code>`). */
const REFUSALS: Record<string, string> = {
  not_allowed: 'Your GitHub account is not on the list of operators of this Verdict.',
  github_denied: 'GitHub sign-in was cancelled.',
  exchange_failed: 'GitHub did not confirm the sign-in. Please try again.',
  github_unreachable: 'GitHub could not be reached. Please try again.',
  state_mismatch: 'The sign-in link expired or was opened twice. Please start again.',
  github_not_configured: 'Sign-in with GitHub is not configured on this server (GITHUB_CLIENT_ID / SECRET).',
  operator_auth_required: 'Please sign in.',
};

export function Login({ error, onSignedIn }: { error: string | null; onSignedIn: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!token.trim()) {
      setFailure('Enter the dashboard token.');
      return;
    }
    setBusy(true);
    setFailure(null);
    try {
      onSignedIn(await auth.token(token.trim()));
    } catch (err) {
      setFailure(
        err instanceof ApiError && err.status === 401 ? 'That token was not accepted.' : describeError(err),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="login" id="main">
      <div class="login-card">
        <h1>Verdict operator</h1>
        <p class="muted">Sign in to see reviews, runs, costs and settings.</p>
        {error && (
          <p class="state state-error" role="alert">
            Sign-in refused: {REFUSALS[error] ?? error}
          </p>
        )}
        <a class="button github" href="/operator/auth/github">
          Sign in with GitHub
        </a>
        <div class="or">
          <span>or</span>
        </div>
        <form onSubmit={submit} noValidate>
          <label for="token">Dashboard token</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="current-password"
            value={token}
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
            aria-invalid={failure ? true : undefined}
            aria-describedby={failure ? 'token-error' : undefined}
          />
          {failure && (
            <p id="token-error" class="field-error" role="alert">
              {failure}
            </p>
          )}
          <button type="submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in with token'}
          </button>
        </form>
      </div>
    </main>
  );
}

import { type FormEvent, useState } from 'react';
import { errorMessage } from '../../api/errors';
import { useSignIn } from '../../hooks/useSignIn';

export function SignInForm({ notice }: { notice: string | null }) {
  const [token, setToken] = useState('');
  const signIn = useSignIn();
  const blank = token.trim() === '';

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!blank) signIn.mutate(token.trim());
  }

  return (
    <form className="sign-in" aria-label="Sign in" data-testid="sign-in-form" onSubmit={submit}>
      <h1>Sign in to Quanta</h1>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <label htmlFor="api-token">API token</label>
      <input
        id="api-token"
        name="token"
        type="password"
        autoComplete="off"
        spellCheck={false}
        autoFocus
        value={token}
        onChange={(event) => setToken(event.target.value)}
      />
      <p className="hint">
        <code>make run</code> prints <code>Admin token: …</code> on first start.
      </p>
      {signIn.isError && (
        <p className="form-error" role="alert" data-testid="sign-in-error">
          {errorMessage(signIn.error)}
        </p>
      )}
      <button type="submit" className="button button-primary" disabled={blank || signIn.isPending}>
        {signIn.isPending ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

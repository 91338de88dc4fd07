import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { signInMethodsOptions, usePasswordSignIn, useSignIn } from '../../api/auth';
import { errorMessage } from '../../api/errors';
import { type SignInMethod, signInMethod } from '../../auth/signInMethod';

function TokenForm({ onPassword, noUsers }: { onPassword: () => void; noUsers: boolean }) {
  const [token, setToken] = useState('');
  const signIn = useSignIn();
  const blank = token.trim() === '';

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!blank) signIn.mutate(token.trim());
  }

  return (
    <form aria-label="Sign in with an API token" onSubmit={submit} className="sign-in-fields">
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
        <code>make run</code> prints <code>Admin token: …</code> on its first start and keeps it in{' '}
        <code>.quanta/admin-token</code>.{noUsers && <> No user can sign in with a password yet.</>}
      </p>
      {signIn.isError && (
        <p className="form-error" role="alert" data-testid="sign-in-error">
          {errorMessage(signIn.error)}
        </p>
      )}
      <button type="submit" className="button button-primary" disabled={blank || signIn.isPending}>
        {signIn.isPending ? 'Signing in…' : 'Sign in'}
      </button>
      <button type="button" className="button button-link" onClick={onPassword}>
        Sign in with a name and password
      </button>
    </form>
  );
}

function PasswordForm({ onToken }: { onToken: () => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const signIn = usePasswordSignIn();
  const blank = name.trim() === '' || password === '';

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!blank) signIn.mutate({ name: name.trim(), password });
  }

  return (
    <form aria-label="Sign in with a password" onSubmit={submit} className="sign-in-fields">
      <label htmlFor="user-name">Name</label>
      <input
        id="user-name"
        name="username"
        autoComplete="username"
        spellCheck={false}
        autoFocus
        value={name}
        onChange={(event) => setName(event.target.value)}
      />
      <label htmlFor="user-password">Password</label>
      <input
        id="user-password"
        name="password"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={(event) => setPassword(event.target.value)}
      />
      {signIn.isError && (
        <p className="form-error" role="alert" data-testid="sign-in-error">
          {errorMessage(signIn.error)}
        </p>
      )}
      <button type="submit" className="button button-primary" disabled={blank || signIn.isPending}>
        {signIn.isPending ? 'Signing in…' : 'Sign in'}
      </button>
      <p className="hint">
        No user yet? An admin creates one with <code>quanta user create NAME --role admin</code>.
      </p>
      <button type="button" className="button button-link" onClick={onToken}>
        Sign in with an API token
      </button>
    </form>
  );
}

/**
 * The sign-in page: name and password when users exist, else the API token first (the one
 * `make run` printed: before `quanta user create` it is the only way in).
 */
export function SignInForm({ notice }: { notice: string | null }) {
  const options = useQuery(signInMethodsOptions());
  const [chosen, setChosen] = useState<SignInMethod | null>(null);
  const method = signInMethod(options.data?.password, chosen);
  return (
    <section className="sign-in" aria-label="Sign in" role="form" data-testid="sign-in-form">
      <h1>Sign in to Quanta</h1>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      {method === 'token' ? (
        <TokenForm
          onPassword={() => setChosen('password')}
          noUsers={options.data?.password === false}
        />
      ) : (
        <PasswordForm onToken={() => setChosen('token')} />
      )}
    </section>
  );
}

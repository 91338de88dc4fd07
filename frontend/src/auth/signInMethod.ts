// Which sign-in form the page leads with.

export type SignInMethod = 'token' | 'password';

/**
 * The form to show: the one the person chose, else the token while no user can sign in
 * with a password (only the admin token works then), else name and password. `password`
 * is the server's answer (undefined while loading or when it could not answer: the
 * password form, as before the server could say).
 */
export function signInMethod(
  password: boolean | undefined,
  chosen: SignInMethod | null,
): SignInMethod {
  if (chosen) return chosen;
  return password === false ? 'token' : 'password';
}

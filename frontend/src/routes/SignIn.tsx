import { SignInForm } from '../components/Auth/SignInForm';

export function SignIn({ notice }: { notice: string | null }) {
  return (
    <main className="sign-in-page">
      <div className="brand brand-large">
        <span className="brand-name">Quanta</span>
        <span className="brand-tagline">Query analytics for MySQL and MariaDB</span>
      </div>
      <SignInForm notice={notice} />
    </main>
  );
}

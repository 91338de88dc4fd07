import { AppHeader } from './components/Layout/AppHeader';
import { useAuth } from './hooks/useAuth';
import { Overview } from './routes/Overview';
import { SignIn } from './routes/SignIn';

export function App() {
  const { token, notice, signOut } = useAuth();
  if (token === null) return <SignIn notice={notice} />;
  return (
    <>
      <AppHeader onSignOut={signOut} />
      <main className="content">
        <Overview />
      </main>
    </>
  );
}

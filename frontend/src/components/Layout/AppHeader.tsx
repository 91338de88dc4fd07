import { NavLink } from 'react-router';
import { useMe } from '../../hooks/useMe';

export function AppHeader({ onSignOut }: { onSignOut: () => void }) {
  const me = useMe();
  return (
    <header className="app-header">
      <div className="brand">
        <span className="brand-name">Quanta</span>
        <span className="brand-tagline">Query analytics</span>
      </div>
      <nav className="main-nav" aria-label="Main">
        <NavLink to="/" end>
          Queries
        </NavLink>
        <NavLink to="/regressions">Regressions</NavLink>
        <NavLink to="/annotations">Annotations</NavLink>
        <NavLink to="/settings">Settings</NavLink>
      </nav>
      <div className="user">
        {me.data && (
          <span className="user-name" data-testid="user-name">
            {me.data.user ?? me.data.name}
            {me.data.role && <span className="muted"> ({me.data.role})</span>}
          </span>
        )}
        <button type="button" className="button" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    </header>
  );
}

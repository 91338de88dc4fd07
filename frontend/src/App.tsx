import { Suspense, lazy } from 'react';
import { BrowserRouter, Route, Routes } from 'react-router';
import { AppHeader } from './components/Layout/AppHeader';
import { EmptyState } from './components/Status/EmptyState';
import { LoadingState } from './components/Status/LoadingState';
import { useAuth } from './hooks/useAuth';
import { useRestoreSession } from './hooks/useRestoreSession';
import { AnnotationImpact } from './routes/AnnotationImpact';
import { Annotations } from './routes/Annotations';
import { IndexPlan } from './routes/IndexPlan';
import { IndexReview } from './routes/IndexReview';
import { Overview } from './routes/Overview';
import { Regressions } from './routes/Regressions';
import { Settings } from './routes/Settings';
import { SignIn } from './routes/SignIn';
import { TableWorkload } from './routes/TableWorkload';
import { Tables } from './routes/Tables';
import { Users } from './routes/Users';

// The detail view brings Recharts (the largest dependency): loaded when first opened.
const QueryDetail = lazy(() =>
  import('./routes/QueryDetail').then((module) => ({ default: module.QueryDetail })),
);

export function AppRoutes() {
  return (
    <Routes>
      <Route path="/" element={<Overview />} />
      <Route
        path="/queries/:queryId"
        element={
          <Suspense fallback={<LoadingState label="Loading…" />}>
            <QueryDetail />
          </Suspense>
        }
      />
      <Route path="/annotations" element={<Annotations />} />
      <Route path="/annotations/:annotationId" element={<AnnotationImpact />} />
      <Route path="/regressions" element={<Regressions />} />
      <Route path="/instances/:instanceId/index-plan" element={<IndexPlan />} />
      <Route path="/instances/:instanceId/tables" element={<Tables />} />
      <Route path="/instances/:instanceId/tables/:table" element={<TableWorkload />} />
      <Route path="/instances/:instanceId/users" element={<Users />} />
      <Route path="/instances/:instanceId/index-review" element={<IndexReview />} />
      <Route path="/settings" element={<Settings />} />
      <Route
        path="*"
        element={<EmptyState title="There is no page at this address." testId="not-found" />}
      />
    </Routes>
  );
}

export function App() {
  const { signedIn, notice, signOut } = useAuth();
  const restoring = useRestoreSession();
  if (restoring && !signedIn) return <LoadingState label="Restoring your session…" />;
  // Signed out, any address shows the sign-in form and keeps the address: a deep link
  // opens its view right after signing in.
  if (!signedIn) return <SignIn notice={notice} />;
  return (
    <BrowserRouter>
      <AppHeader onSignOut={() => void signOut()} />
      <main className="content">
        <AppRoutes />
      </main>
    </BrowserRouter>
  );
}

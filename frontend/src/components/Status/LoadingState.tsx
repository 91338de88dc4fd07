export function LoadingState({ label, testId }: { label: string; testId?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite" data-testid={testId}>
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

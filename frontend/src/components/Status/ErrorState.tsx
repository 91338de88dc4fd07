export function ErrorState({
  title,
  message,
  onRetry,
  testId,
}: {
  title: string;
  message: string;
  onRetry?: () => void;
  testId?: string;
}) {
  return (
    <div className="state state-error" role="alert" data-testid={testId}>
      <p className="state-title">{title}</p>
      <p className="state-message">{message}</p>
      {onRetry && (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

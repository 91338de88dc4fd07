import type { ReactNode } from 'react';

export function EmptyState({
  title,
  children,
  testId,
}: {
  title: string;
  children?: ReactNode;
  testId?: string;
}) {
  return (
    <div className="state state-empty" data-testid={testId}>
      <p className="state-title">{title}</p>
      {children}
    </div>
  );
}

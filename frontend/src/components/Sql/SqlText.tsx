import { memo } from 'react';
import { tokenizeSql } from '../../lib/sql';

/** SQL with its keywords, names and literals coloured (see lib/sql.ts). */
export const SqlText = memo(function SqlText({
  sql,
  className,
  title,
}: {
  sql: string;
  className?: string;
  title?: string;
}) {
  return (
    <code className={className ? `sql ${className}` : 'sql'} title={title}>
      {tokenizeSql(sql).map((token, index) =>
        token.kind === 'space' || token.kind === 'text' || token.kind === 'operator' ? (
          token.text
        ) : (
          <span key={index} className={`sql-${token.kind}`}>
            {token.text}
          </span>
        ),
      )}
    </code>
  );
});

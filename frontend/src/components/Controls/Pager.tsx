import { PAGE_SIZES, type PageSize } from '../../lib/viewState';

/** Page n of m with previous/next, and the page size. */
export function Pager({
  page,
  size,
  total,
  hasNext,
  onPage,
  onSize,
}: {
  page: number;
  size: PageSize;
  /** Number of rows in all pages, when known. */
  total: number | undefined;
  /** Without a total: whether a next page exists. */
  hasNext?: boolean;
  onPage: (page: number) => void;
  onSize: (size: PageSize) => void;
}) {
  const pages = total === undefined ? undefined : Math.max(1, Math.ceil(total / size));
  return (
    <nav className="pager" aria-label="Pages">
      <button
        type="button"
        className="button"
        disabled={page <= 1}
        onClick={() => onPage(page - 1)}
        data-testid="page-prev"
      >
        ← Previous
      </button>
      <span data-testid="page-label">
        Page {page}
        {pages !== undefined && ` of ${pages}`}
      </span>
      <button
        type="button"
        className="button"
        disabled={pages !== undefined ? page >= pages : !hasNext}
        onClick={() => onPage(page + 1)}
        data-testid="page-next"
      >
        Next →
      </button>
      <label className="page-size">
        Rows per page
        <select
          value={size}
          onChange={(event) => onSize(Number(event.target.value) as PageSize)}
          data-testid="page-size"
        >
          {PAGE_SIZES.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}

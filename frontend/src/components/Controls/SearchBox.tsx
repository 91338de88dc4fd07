import { useEffect, useState } from 'react';

const DEBOUNCE_MS = 300;

/** A search field that reports its text once typing pauses, or at once on Enter. */
export function SearchBox({
  value,
  onSearch,
}: {
  value: string;
  onSearch: (text: string) => void;
}) {
  const [text, setText] = useState(value);
  const [synced, setSynced] = useState(value);
  // Follow URL changes (Back, a deep link) without clobbering what is being typed.
  if (value !== synced) {
    setSynced(value);
    setText(value);
  }

  useEffect(() => {
    if (text.trim() === value) return undefined;
    const timer = window.setTimeout(() => onSearch(text.trim()), DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [text, value, onSearch]);

  return (
    <form
      className="search"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch(text.trim());
      }}
    >
      <label className="visually-hidden" htmlFor="query-search">
        Search queries
      </label>
      <input
        id="query-search"
        type="search"
        placeholder="Search fingerprint, table or query_id"
        value={text}
        onChange={(event) => setText(event.target.value)}
        data-testid="search"
      />
    </form>
  );
}

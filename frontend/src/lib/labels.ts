// Instance labels as one line of text in the settings form: `environment=prod, cluster=eu-1`.

/** Labels written as `key=value` pairs, sorted by key, joined by ", ". */
export function formatLabels(labels: Record<string, string> | undefined): string {
  return Object.entries(labels ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}

/** The labels of a `key=value, key=value` line (keys lower-cased), or the error to show. */
export function parseLabels(text: string): Record<string, string> | { error: string } {
  const labels: Record<string, string> = {};
  for (const item of text.split(',')) {
    const part = item.trim();
    if (!part) continue;
    const at = part.indexOf('=');
    const key = at < 0 ? '' : part.slice(0, at).trim().toLowerCase();
    const value = at < 0 ? '' : part.slice(at + 1).trim();
    if (!/^[a-z_][a-z0-9_.-]*$/.test(key) || !value) {
      return { error: `Write each label as key=value (environment=prod): not "${part}".` };
    }
    labels[key] = value;
  }
  return labels;
}

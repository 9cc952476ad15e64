/** Front matter values as the items keep them: text as text, lists as lists. */

/** YAML gives dates as Date objects and numbers as numbers; we keep text as text. */
export function asText(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) return value.map(asText).filter(Boolean).join(', ') || null;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A list from a YAML list or a comma-separated text. */
export function asList(value: unknown): string[] {
  if (value === null || value === undefined || value === '') return [];
  if (Array.isArray(value)) return value.map(asText).filter((v): v is string => v !== null);
  const text = asText(value);
  return text
    ? text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

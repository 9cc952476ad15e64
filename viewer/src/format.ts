/** Small display helpers: status order and labels, dates, recent searches, theme. */

/** Where a status sorts in lists and on the board (Backlog.md's "To Do"/"In Progress" included). */
const STATUS_RANK: Record<string, number> = {
  in_progress: 0,
  doing: 0,
  open: 1,
  to_do: 1,
  todo: 1,
  backlog: 1.5,
  blocked: 2,
  review: 2.5,
  in_review: 2.5,
  draft: 3,
  proposed: 3,
  accepted: 3.5,
  done: 4,
  closed: 4,
  cancelled: 5,
  canceled: 5,
};

export function statusKey(status: string | null): string {
  return status
    ? status
        .trim()
        .toLowerCase()
        .replace(/[\s-]+/g, '_')
    : 'none';
}

export function statusRank(status: string | null): number {
  if (!status) return 9;
  return STATUS_RANK[statusKey(status)] ?? 3.8;
}

export function statusLabel(status: string | null): string {
  if (!status) return 'No status';
  const s = status.replace(/_/g, ' ').trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A CSS class for the status colour: known families, else neutral. */
export function statusTone(status: string | null): string {
  const k = statusKey(status);
  if (['in_progress', 'doing', 'review', 'in_review'].includes(k)) return 'progress';
  if (['open', 'to_do', 'todo', 'backlog', 'draft', 'proposed'].includes(k)) return 'open';
  if (k === 'blocked') return 'blocked';
  if (['done', 'closed', 'accepted'].includes(k)) return 'done';
  if (['cancelled', 'canceled'].includes(k)) return 'cancelled';
  return 'neutral';
}

const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' });
const dateFmt = new Intl.DateTimeFormat('en', { year: 'numeric', month: 'short', day: 'numeric' });

export function relativeDate(iso: string | null, now = Date.now()): string {
  if (!iso) return '';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const days = Math.round((t - now) / 86_400_000);
  if (Math.abs(days) < 1) return 'today';
  if (Math.abs(days) < 30) return rtf.format(days, 'day');
  if (Math.abs(days) < 365) return rtf.format(Math.round(days / 30), 'month');
  return dateFmt.format(t);
}

export function fullDate(iso: string | null): string {
  if (!iso) return '';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : dateFmt.format(t);
}

// ----- recent searches (localStorage)

const RECENT_KEY = 'backlog-search:recent';
const RECENT_MAX = 8;

export function recentSearches(): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(RECENT_KEY) ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(0, RECENT_MAX) : [];
  } catch {
    return [];
  }
}

export function rememberSearch(query: string): void {
  const q = query.trim();
  if (!q) return;
  const next = [q, ...recentSearches().filter((r) => r.toLowerCase() !== q.toLowerCase())].slice(
    0,
    RECENT_MAX,
  );
  try {
    localStorage.setItem(RECENT_KEY, JSON.stringify(next));
  } catch {
    // Private mode or full storage: recent searches are a convenience.
  }
}

export function forgetSearches(): void {
  try {
    localStorage.removeItem(RECENT_KEY);
  } catch {
    // ignore
  }
}

// ----- theme

export type Theme = 'system' | 'light' | 'dark';
const THEME_KEY = 'backlog-search:theme';

export function storedTheme(): Theme {
  try {
    const t = localStorage.getItem(THEME_KEY);
    return t === 'light' || t === 'dark' ? t : 'system';
  } catch {
    return 'system';
  }
}

export function applyTheme(theme: Theme): void {
  if (theme === 'system') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.setAttribute('data-theme', theme);
  try {
    if (theme === 'system') localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, theme);
  } catch {
    // ignore
  }
}

export const isMac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

/**
 * Settings a backlog keeps in its own folder: `languages` in `config.yml` (the file Backlog.md keeps
 * its settings in), read with the same limits as front matter. Only what the search needs is read.
 *
 *   languages: [english, japanese]   # or `detect` (the default), or `de`, `ja, en`
 */
import { parseSettingsFile } from '../storage/settings-yaml.js';
import { readInsideRoot } from '../storage/root-path.js';
import { errors } from '../errors.js';
import { parseLanguage } from '../search/languages.js';

export const SETTINGS_FILE = 'config.yml';
const MAX_BYTES = 64 * 1024;

/** `'detect'`, a list of known language names, or undefined when the value is absent. Throws INVALID_FILTER for an unknown language. */
export function parseLanguagesSetting(value: unknown, where: string): 'detect' | string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value.map(String) : typeof value === 'string' ? value.split(',') : null;
  if (list === null)
    throw errors.invalidFilter(
      where,
      'expected a list of languages or "detect"',
      'Write e.g. languages: [english, japanese].',
    );
  const names = list.map((s) => s.trim()).filter(Boolean);
  if (names.length === 1 && names[0].toLowerCase() === 'detect') return 'detect';
  const unknown = names.filter((n) => !parseLanguage(n));
  if (unknown.length > 0 || names.length === 0)
    throw errors.invalidFilter(
      where,
      `unknown language "${unknown[0] ?? ''}"`,
      'Use "detect" or names/codes such as english, de, ja, zh (docs/search.md lists them).',
    );
  return names;
}

/** The `languages` of `<dir>/config.yml`, when the file exists and sets it (read like Backlog.md's settings). */
export async function readBacklogLanguages(dir: string): Promise<'detect' | string[] | undefined> {
  const read = await readInsideRoot(dir, SETTINGS_FILE, MAX_BYTES).catch(() => null);
  if (!read?.complete) return undefined;
  const { data, error } = await parseSettingsFile(read.bytes.toString('utf8'));
  if (error) return undefined;
  return parseLanguagesSetting(data.languages, `${SETTINGS_FILE}: languages`);
}

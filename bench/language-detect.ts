/**
 * Language detectors from npm, compared for what the analyzer asks of one (docs/search.md, "Languages"):
 * telling apart the languages of one script on short texts, and the cost of loading and running it.
 * eld is a dependency; the others are measured when installed:
 *
 *   npm i --no-save tinyld franc-min lande languagedetect   # optional, for the comparison
 *   npx tsx bench/language-detect.ts
 *
 * Texts: the 595 XQuAD dev questions in English, German, Spanish (candidates: the 17 Latin-script
 * languages the analyzer stems) and Russian (candidates: Russian, Ukrainian, Bulgarian, Serbian), whole,
 * cut to their first 4 words and to their first 2; and SciFact's 5,183 abstracts cut to 200 characters
 * (all English). Each detector is loaded in a child process of its own (load time and RSS).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVAL_DIR = resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'));
const LATIN = [
  'en',
  'de',
  'es',
  'fr',
  'it',
  'pt',
  'nl',
  'da',
  'sv',
  'no',
  'fi',
  'hu',
  'ro',
  'tr',
  'id',
  'ga',
  'lt',
];
const CYRILLIC = ['ru', 'uk', 'bg', 'sr'];
const ISO3: Record<string, string> = {
  en: 'eng',
  de: 'deu',
  es: 'spa',
  fr: 'fra',
  it: 'ita',
  pt: 'por',
  nl: 'nld',
  da: 'dan',
  sv: 'swe',
  no: 'nob',
  fi: 'fin',
  hu: 'hun',
  ro: 'ron',
  tr: 'tur',
  id: 'ind',
  ga: 'gle',
  lt: 'lit',
  ru: 'rus',
  uk: 'ukr',
  bg: 'bul',
  sr: 'srp',
};
const NAMES: Record<string, string> = {
  en: 'english',
  de: 'german',
  es: 'spanish',
  fr: 'french',
  it: 'italian',
  pt: 'portuguese',
  nl: 'dutch',
  da: 'danish',
  sv: 'swedish',
  no: 'norwegian',
  fi: 'finnish',
  hu: 'hungarian',
  ro: 'romanian',
  tr: 'turkish',
  id: 'indonesian',
  ga: 'irish',
  lt: 'lithuanian',
  ru: 'russian',
  uk: 'ukrainian',
  bg: 'bulgarian',
  sr: 'serbian',
};
const from = (table: Record<string, string>, value: string | undefined) =>
  Object.keys(table).find((k) => table[k] === value);

type Detect = (text: string, candidates: string[]) => string | undefined;

/** Each detector, restricted to the candidates the way its API allows. */
const DETECTORS: Record<string, () => Promise<Detect>> = {
  'eld (extrasmall)': async () => {
    const { eld } = (await import('eld/extrasmall')) as unknown as {
      eld: { setLanguageSubset(c: string[]): void; detect(t: string): { language: string } };
    };
    return (t, c) => {
      eld.setLanguageSubset(c);
      return eld.detect(t).language;
    };
  },
  tinyld: async () => {
    const m = (await import('tinyld' as string)) as { detect(t: string, o: { only: string[] }): string };
    return (t, c) => m.detect(t, { only: c });
  },
  'franc-min': async () => {
    const { franc } = (await import('franc-min' as string)) as {
      franc(t: string, o: { only: string[]; minLength: number }): string;
    };
    return (t, c) => from(ISO3, franc(t, { only: c.map((x) => ISO3[x]), minLength: 1 }));
  },
  lande: async () => {
    const lande = ((await import('lande' as string)) as { default: (t: string) => [string, number][] })
      .default;
    return (t, c) => {
      const allowed = new Set(c.map((x) => ISO3[x]));
      return from(ISO3, lande(t).find(([k]) => allowed.has(k))?.[0]);
    };
  },
  languagedetect: async () => {
    const LD = (
      (await import('languagedetect' as string)) as {
        default: new () => { detect(t: string): [string, number][] };
      }
    ).default;
    const ld = new LD();
    return (t, c) => {
      const allowed = new Set(c.map((x) => NAMES[x]));
      return from(NAMES, ld.detect(t).find(([k]) => allowed.has(k))?.[0]);
    };
  },
};

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, string>);

async function child(name: string): Promise<void> {
  const before = process.memoryUsage().rss;
  const t0 = performance.now();
  let detect: Detect;
  try {
    detect = await DETECTORS[name]();
  } catch {
    process.stdout.write(`${JSON.stringify({ name, installed: false })}\n`);
    return;
  }
  const loadMs = performance.now() - t0;
  const rssMb = (process.memoryUsage().rss - before) / 2 ** 20;
  const result: Record<string, unknown> = {
    name,
    installed: true,
    load_ms: Math.round(loadMs),
    rss_mb: Math.round(rssMb),
  };
  for (const [kind, cut] of [
    ['questions', (q: string) => q],
    ['4 words', (q: string) => q.split(/\s+/).slice(0, 4).join(' ')],
    ['2 words', (q: string) => q.split(/\s+/).slice(0, 2).join(' ')],
  ] as const) {
    let ok = 0;
    let n = 0;
    const t = performance.now();
    for (const l of ['en', 'de', 'es', 'ru']) {
      for (const q of lines(join(EVAL_DIR, `xquad-${l}`, 'queries.jsonl'))) {
        n++;
        if (detect(cut(q.text), l === 'ru' ? CYRILLIC : LATIN) === l) ok++;
      }
    }
    result[kind] = {
      accuracy: Number((ok / n).toFixed(3)),
      per_second: Math.round(n / ((performance.now() - t) / 1000)),
    };
  }
  const docs = lines(join(EVAL_DIR, 'scifact', 'corpus.jsonl')).map((d) =>
    `${d.title} ${d.text}`.slice(0, 200),
  );
  const t = performance.now();
  const en = docs.filter((d) => detect(d, LATIN) === 'en').length;
  result['SciFact 200 chars'] = {
    accuracy: Number((en / docs.length).toFixed(4)),
    per_second: Math.round(docs.length / ((performance.now() - t) / 1000)),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]);
} else {
  const rows = Object.keys(DETECTORS).map((name) => {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', name],
      {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    return JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
  });
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
}

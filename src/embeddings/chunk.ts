export interface ChunkOptions {
  /** Body words per chunk (the title and heading come on top). Default 200. */
  maxWords?: number;
  /** Words shared by consecutive windows of one long section. Default 40. */
  overlap?: number;
  /** At most this many chunks per document; the rest of a huge document is left to lexical search. Default 64. */
  maxChunks?: number;
}

export interface Chunk {
  /** 0-based position in the document. */
  index: number;
  /** What gets embedded: the title, the section heading (when any), then the chunk's words. */
  text: string;
  /** Heading of the section the chunk starts in ('' before the first heading). */
  heading: string;
  /** Offset of the chunk's first word among the document's body words, and how many it has. */
  wordStart: number;
  wordCount: number;
}

export const DEFAULT_CHUNK_OPTIONS: Required<ChunkOptions> = { maxWords: 200, overlap: 40, maxChunks: 64 };

/**
 * Chunk sizes for a model that reads `maxTokens` tokens: English prose runs about 1.3-1.8 tokens a word,
 * and the title takes some, so a window gets about 0.55 words per token, at most 200 (128 tokens, the
 * bundled model: 70 words with 14 overlapping; 512 tokens: 200 and 40).
 */
export function chunkOptionsFor(embedder: { maxTokens?: number }): Required<ChunkOptions> {
  if (!embedder.maxTokens) return { ...DEFAULT_CHUNK_OPTIONS };
  const maxWords = Math.max(
    16,
    Math.min(DEFAULT_CHUNK_OPTIONS.maxWords, Math.floor(embedder.maxTokens * 0.55)),
  );
  return { maxWords, overlap: Math.floor(maxWords / 5), maxChunks: DEFAULT_CHUNK_OPTIONS.maxChunks };
}

interface Section {
  heading: string;
  words: string[];
}

const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(```|~~~)/;

/** Markdown to plain words: comments, link targets, list and emphasis markers go; the words stay. */
function plainWords(markdown: string): string[] {
  const text = markdown
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/gm, '')
    .replace(/[*`~]+/g, '')
    .replace(/(?<![\p{L}\p{N}])_+|_+(?![\p{L}\p{N}])/gu, '')
    .replace(/^\s*(?:>\s*)+/gm, '')
    .replace(/^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$/gm, ' ')
    .replace(/\|/g, ' ');
  return text.split(/\s+/).filter((w) => w.length > 0);
}

function sections(body: string): Section[] {
  const out: Section[] = [];
  let heading = '';
  let lines: string[] = [];
  let inFence = false;
  const flush = () => {
    const words = plainWords(lines.join('\n'));
    if (words.length > 0 || heading) out.push({ heading, words });
    lines = [];
  };
  for (const line of body.split(/\r?\n/)) {
    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    const m = inFence ? null : HEADING.exec(line);
    if (m) {
      flush();
      heading = plainWords(m[1]).join(' ');
    } else lines.push(line);
  }
  flush();
  return out;
}

function chunkTextOf(title: string, heading: string, words: string[]): string {
  const parts = [title.trim(), heading, words.join(' ')].filter((p) => p.length > 0);
  return parts.join('\n');
}

/**
 * Splits a document for embedding. Markdown headings split first; consecutive short sections are packed
 * together up to `maxWords`; a longer section is cut into windows of `maxWords` overlapping by `overlap`.
 * Every chunk starts with the document title (and its section heading) as context. A body of at most
 * `maxWords` words is one chunk. Pure and deterministic.
 */
export function chunkText(title: string, body: string, options: ChunkOptions = {}): Chunk[] {
  const maxWords = Math.max(1, Math.floor(options.maxWords ?? DEFAULT_CHUNK_OPTIONS.maxWords));
  const overlap = Math.min(
    maxWords - 1,
    Math.max(0, Math.floor(options.overlap ?? DEFAULT_CHUNK_OPTIONS.overlap)),
  );
  const maxChunks = Math.max(1, options.maxChunks ?? DEFAULT_CHUNK_OPTIONS.maxChunks);
  const secs = sections(body);
  const chunks: Chunk[] = [];
  const push = (heading: string, words: string[], wordStart: number) => {
    if (chunks.length < maxChunks)
      chunks.push({
        index: chunks.length,
        text: chunkTextOf(title, heading, words),
        heading,
        wordStart,
        wordCount: words.length,
      });
  };

  // Every section's words, headings of all but a chunk's first section inline.
  const all: string[] = [];
  for (const [i, s] of secs.entries()) {
    if (i > 0 && s.heading) all.push(...s.heading.split(' '));
    all.push(...s.words);
  }
  if (all.length <= maxWords) {
    const heading = secs.length > 0 && secs[0].heading ? secs[0].heading : '';
    push('', heading ? [...heading.split(' '), ...all] : all, 0);
    return chunks;
  }

  let pack: string[] = [];
  let open = false;
  let packHeading = '';
  let packStart = 0;
  let offset = 0;
  const flush = () => {
    if (open) push(packHeading, pack, packStart);
    open = false;
    pack = [];
  };
  for (const [i, s] of secs.entries()) {
    const inlineHeading = i > 0 && s.heading ? s.heading.split(' ') : [];
    const start = offset + inlineHeading.length;
    offset = start + s.words.length;
    if (s.words.length > maxWords) {
      flush();
      const step = maxWords - overlap;
      for (let at = 0; ; at += step) {
        const end = Math.min(s.words.length, at + maxWords);
        push(s.heading, s.words.slice(at, end), start + at);
        if (end >= s.words.length) break;
      }
      continue;
    }
    if (open && pack.length + inlineHeading.length + s.words.length > maxWords) flush();
    if (!open) {
      open = true;
      packHeading = s.heading;
      packStart = start;
      pack = [...s.words];
    } else pack.push(...inlineHeading, ...s.words);
  }
  flush();
  if (chunks.length === 0) push('', [], 0);
  return chunks;
}

/**
 * The raw query language (`match_mode: "raw"`), parsed by recursive descent into an AST:
 *
 *   query    := or
 *   or       := and ( "OR" and )*
 *   and      := unary ( "AND"? unary )*          adjacency is "implicit": OR with coordination, AND when conjunctive
 *   unary    := "NOT" unary | "-" primary | primary
 *   primary  := "(" or ")" | field ":" primary | "\"phrase\"" | word "*" | word
 *   field    := title | tags | tag | status | author | type | body
 *
 * Operators are upper-case words; `and`, `or`, `not` in lower case are plain words. Errors are
 * QUERY_SYNTAX with the position (0-based character offset) and a hint.
 */
import { BacklogError } from '../errors.js';

export const QUERY_FIELDS = ['title', 'tags', 'status', 'author', 'type', 'body'] as const;
export type QueryField = (typeof QUERY_FIELDS)[number];
const FIELD_ALIASES: Record<string, QueryField> = { tag: 'tags' };

export type QueryNode =
  | { kind: 'term'; text: string; field?: QueryField; position: number }
  | { kind: 'prefix'; text: string; field?: QueryField; position: number }
  | { kind: 'phrase'; text: string; field?: QueryField; position: number }
  | { kind: 'and' | 'or' | 'implicit'; children: QueryNode[] }
  | { kind: 'not'; child: QueryNode };

/** Deeper nesting than this is refused: it only ever comes from generated or hostile input. */
export const MAX_DEPTH = 32;
export const MAX_LEAVES = 64;

type Token =
  | { type: '(' | ')' | '-'; position: number }
  | { type: 'word'; text: string; position: number }
  | { type: 'phrase'; text: string; position: number }
  | { type: 'op'; op: 'AND' | 'OR' | 'NOT'; position: number }
  | { type: 'field'; field: QueryField; position: number };

export function syntaxError(message: string, position: number, hint: string): BacklogError {
  return new BacklogError('QUERY_SYNTAX', `${message} at position ${position}`, hint, { position });
}

const SPACE = /\s/;

function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (SPACE.test(c)) {
      i++;
    } else if (c === '(' || c === ')') {
      tokens.push({ type: c, position: i++ });
    } else if (c === '"') {
      const end = input.indexOf('"', i + 1);
      if (end < 0)
        throw syntaxError(
          'Unclosed quote',
          i,
          'Close the phrase with a second " or use match_mode "simple".',
        );
      tokens.push({ type: 'phrase', text: input.slice(i + 1, end), position: i });
      i = end + 1;
    } else if (
      c === '-' &&
      i + 1 < input.length &&
      !SPACE.test(input[i + 1]) &&
      (i === 0 || SPACE.test(input[i - 1]) || input[i - 1] === '(')
    ) {
      tokens.push({ type: '-', position: i++ });
    } else {
      const start = i;
      while (
        i < input.length &&
        !SPACE.test(input[i]) &&
        input[i] !== '(' &&
        input[i] !== ')' &&
        input[i] !== '"'
      ) {
        const colon = input[i] === ':';
        i++;
        if (colon) {
          const name = input.slice(start, i - 1).toLowerCase();
          const field = (QUERY_FIELDS as readonly string[]).includes(name)
            ? (name as QueryField)
            : FIELD_ALIASES[name];
          if (field) {
            tokens.push({ type: 'field', field, position: start });
            break;
          }
        }
      }
      if (tokens.at(-1)?.position === start && tokens.at(-1)?.type === 'field') continue;
      const text = input.slice(start, i);
      if (text === 'AND' || text === 'OR' || text === 'NOT')
        tokens.push({ type: 'op', op: text, position: start });
      else tokens.push({ type: 'word', text, position: start });
    }
  }
  return tokens;
}

/** Parses a raw query. Throws BacklogError QUERY_SYNTAX (with `position`) on invalid syntax. */
export function parseRawQuery(input: string): QueryNode {
  const tokens = lex(input);
  let at = 0;
  let leaves = 0;
  const peek = () => tokens[at];
  const end = input.length;

  function leaf(node: QueryNode): QueryNode {
    if (++leaves > MAX_LEAVES)
      throw syntaxError(
        `More than ${MAX_LEAVES} terms`,
        (node as { position: number }).position,
        'Shorten the query.',
      );
    return node;
  }

  function parseOr(depth: number): QueryNode {
    const children = [parseImplicit(depth)];
    while (isOp(peek(), 'OR')) {
      at++;
      if (!startsOperand(peek()))
        throw syntaxError('OR needs a term after it', peek()?.position ?? end, 'Write `a OR b`.');
      children.push(parseImplicit(depth));
    }
    return children.length === 1 ? children[0] : { kind: 'or', children };
  }

  /** Adjacent operands: binds looser than AND, tighter than OR (`a b AND c OR d` = `(a (b AND c)) OR d`). */
  function parseImplicit(depth: number): QueryNode {
    const children = [parseAnd(depth)];
    while (startsOperand(peek())) children.push(parseAnd(depth));
    return children.length === 1 ? children[0] : { kind: 'implicit', children };
  }

  function parseAnd(depth: number): QueryNode {
    const children = [parseUnary(depth)];
    while (isOp(peek(), 'AND')) {
      at++;
      if (!startsOperand(peek()))
        throw syntaxError('AND needs a term after it', peek()?.position ?? end, 'Write `a AND b`.');
      children.push(parseUnary(depth));
    }
    return children.length === 1 ? children[0] : { kind: 'and', children };
  }

  function parseUnary(depth: number): QueryNode {
    const t = peek();
    if (depth > MAX_DEPTH)
      throw syntaxError('Nesting too deep', t?.position ?? end, `Use at most ${MAX_DEPTH} nested operators.`);
    if (isOp(t, 'NOT')) {
      at++;
      if (!startsOperand(peek()))
        throw syntaxError('NOT needs a term after it', peek()?.position ?? end, 'Write `a NOT b` or `-b`.');
      return { kind: 'not', child: parseUnary(depth + 1) };
    }
    if (t?.type === '-') {
      at++;
      return { kind: 'not', child: parsePrimary(depth + 1) };
    }
    return parsePrimary(depth);
  }

  function parsePrimary(depth: number, field?: QueryField): QueryNode {
    if (depth > MAX_DEPTH)
      throw syntaxError(
        'Nesting too deep',
        peek()?.position ?? end,
        `Use at most ${MAX_DEPTH} levels of parentheses.`,
      );
    const t = peek();
    if (!t) throw syntaxError('Unexpected end of query', end, 'Finish the query with a term.');
    switch (t.type) {
      case '(': {
        at++;
        if (peek()?.type === ')')
          throw syntaxError('Empty parentheses', t.position, 'Put a term inside ( ).');
        const inner = parseOr(depth + 1);
        if (peek()?.type !== ')')
          throw syntaxError('Unclosed parenthesis', t.position, 'Add the closing ) or remove the (.');
        at++;
        return field ? withField(inner, field) : inner;
      }
      case ')':
        throw syntaxError('Unexpected )', t.position, 'Remove it or add the matching (.');
      case 'field': {
        at++;
        if (field)
          throw syntaxError(
            'A field inside a field',
            t.position,
            'Write one field per term, e.g. title:login.',
          );
        if (
          !startsOperand(peek()) ||
          peek()?.type === 'field' ||
          peek()?.type === 'op' ||
          peek()?.type === '-'
        ) {
          throw syntaxError(
            `${t.field}: needs a value`,
            t.position,
            `Write ${t.field}:word, ${t.field}:"a phrase" or ${t.field}:(a OR b).`,
          );
        }
        return parsePrimary(depth + 1, t.field);
      }
      case 'phrase':
        at++;
        return leaf({ kind: 'phrase', text: t.text, field, position: t.position });
      case 'word': {
        at++;
        if (t.text.endsWith('*') && t.text.length > 1 && !t.text.slice(0, -1).endsWith('*')) {
          return leaf({ kind: 'prefix', text: t.text.slice(0, -1), field, position: t.position });
        }
        if (/^\*+$/.test(t.text))
          throw syntaxError(
            'A wildcard needs a prefix',
            t.position,
            'Write at least one letter before *, e.g. auth*.',
          );
        return leaf({ kind: 'term', text: t.text, field, position: t.position });
      }
      case 'op':
        throw syntaxError(
          `${t.op} needs a term before it`,
          t.position,
          `Put a term before ${t.op}, or write it in lower case to search for the word.`,
        );
      case '-':
        throw syntaxError('Unexpected -', t.position, 'Write -word to exclude a word.');
    }
  }

  if (tokens.length === 0) throw syntaxError('Empty query', 0, 'Pass at least one word.');
  const root = parseOr(0);
  if (at < tokens.length) {
    const t = tokens[at];
    throw syntaxError(
      t.type === ')' ? 'Unexpected )' : 'Unexpected token',
      t.position,
      'Check parentheses and operators.',
    );
  }
  return root;
}

function isOp(t: Token | undefined, op: 'AND' | 'OR' | 'NOT'): boolean {
  return t?.type === 'op' && t.op === op;
}

function startsOperand(t: Token | undefined): boolean {
  return (
    t !== undefined &&
    (t.type === 'word' ||
      t.type === 'phrase' ||
      t.type === '(' ||
      t.type === 'field' ||
      t.type === '-' ||
      (t.type === 'op' && t.op === 'NOT'))
  );
}

/** `title:(a OR b)` puts the field on every leaf inside. */
function withField(node: QueryNode, field: QueryField): QueryNode {
  switch (node.kind) {
    case 'term':
    case 'prefix':
    case 'phrase':
      return { ...node, field: node.field ?? field };
    case 'not':
      return { kind: 'not', child: withField(node.child, field) };
    default:
      return { kind: node.kind, children: node.children.map((c) => withField(c, field)) };
  }
}

/** The words of the leaves that are not negated and not status/type filters: what snippets highlight. */
export function positiveText(node: QueryNode): string {
  switch (node.kind) {
    case 'term':
    case 'prefix':
    case 'phrase':
      return node.field === 'status' || node.field === 'type' ? '' : node.text;
    case 'not':
      return '';
    default:
      return node.children.map(positiveText).join(' ');
  }
}

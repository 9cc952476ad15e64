/** An item's detail: fields, parent and children links, references, and the body rendered. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, getItem, type ItemDetail, type ItemSummary } from '../api.js';
import { toApiError } from '../data.js';
import { fullDate } from '../format.js';
import { linkItems, renderMarkdown, renderPlain } from '../markdown.js';
import { getState, hrefFor, navigate } from '../state.js';
import {
  IdLabel,
  ItemLink,
  ParentIcon,
  StateBadge,
  StatusPill,
  Tags,
  TypeBadge,
  ownId,
  useVocabulary,
} from './common.js';
import { BackIcon, CloseIcon, LinkIcon, TypeIcon } from './icons.js';

const MARKDOWN_TYPES = new Set(['md', 'markdown', 'mdx']);

function Body({ detail, resolve }: { detail: ItemDetail; resolve: (ref: string) => string | undefined }) {
  const ref = useRef<HTMLDivElement>(null);
  const { item } = detail;
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const frag = MARKDOWN_TYPES.has(item.file_type)
      ? renderMarkdown(item.body)
      : renderPlain(item.body, item.file_type);
    linkItems(frag, item.path, resolve, (r) => hrefFor(getState(), { item: r }));
    el.replaceChildren(frag);
  }, [item.body, item.file_type, item.path, resolve]);
  const onClick = (e: MouseEvent) => {
    const a = (e.target as HTMLElement).closest('a[data-item]');
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate({ item: a.getAttribute('data-item') ?? '' });
  };
  if (!item.body.trim()) return <p class="muted">This file has no content.</p>;
  return <div class="markdown" ref={ref} onClick={onClick} />;
}

function Field({ label, children }: { label: string; children: ComponentChildren }) {
  if (children === null || children === undefined || children === '' || children === false) return null;
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

/**
 * A link to a related item (the parent, a reference) by its title, after the item's own id if it has
 * one: a document known only by its path shows its title, the path in the tooltip.
 */
function RelatedLink({ item }: { item: ItemSummary }) {
  const id = ownId(item);
  return (
    <ItemLink item={item} class="ref-link" title={id ? `${id} · ${item.title}` : item.path}>
      <TypeIcon type={item.type} size={13} />
      {id !== null && <IdLabel item={item} />}
      <span class="ref-title">{item.title}</span>
      <StateBadge state={item.state} />
    </ItemLink>
  );
}

/** A child's row: its title first, then its own id (cut when long) and its status, which always fit. */
function ChildLink({ item }: { item: ItemSummary }) {
  const id = ownId(item);
  return (
    <ItemLink item={item} class="child" title={id ? undefined : item.path}>
      <TypeIcon type={item.type} size={14} />
      <span class="child-title">{item.title}</span>
      <span class="child-meta">
        {id !== null && <IdLabel item={item} />}
        <StateBadge state={item.state} />
        <StatusPill status={item.status} />
      </span>
    </ItemLink>
  );
}

function Reference({
  value,
  byId,
  project,
}: {
  value: string;
  byId: Map<string, ItemSummary>;
  project: string | undefined;
}) {
  // Several backlogs served: ids are qualified, a file's references are its own project's.
  const known = byId.get(value) ?? (project ? byId.get(`${project}:${value}`) : undefined);
  if (known) return <RelatedLink item={known} />;
  if (/^https?:\/\//i.test(value))
    return (
      <a href={value} target="_blank" rel="noopener noreferrer" class="ref-link external">
        {value}
      </a>
    );
  return <span class="ref-link">{value}</span>;
}

export function DetailPanel({
  refId,
  version,
  byId,
  resolve,
}: {
  refId: string;
  version: number;
  byId: Map<string, ItemSummary>;
  resolve: (ref: string) => string | undefined;
}) {
  const [detail, setDetail] = useState<ItemDetail | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [copied, setCopied] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const lastRef = useRef('');

  useEffect(() => {
    const ctrl = new AbortController();
    getItem(refId, ctrl.signal)
      .then((d) => {
        setDetail(d);
        setError(null);
      })
      .catch((err) => {
        if (ctrl.signal.aborted) return;
        setError(toApiError(err));
        setDetail(null);
      });
    return () => ctrl.abort();
  }, [refId, version]);

  // Focus moves to the heading when another item opens (not on a live refresh of the same one), unless
  // the spotlight was opened while the item loaded: the dialog keeps its focus.
  useEffect(() => {
    if (detail && lastRef.current !== refId) {
      lastRef.current = refId;
      if (getState().q === null) heading.current?.focus({ preventScroll: true });
      heading.current?.closest('.detail')?.scrollTo({ top: 0 });
    }
  }, [detail, refId]);

  // Several backlogs served: an id or a path in the body is one of the item's own project.
  const project = detail?.item.project;
  const inProject = useCallback(
    (ref: string) => resolve(ref) ?? (project ? resolve(`${project}:${ref}`) : undefined),
    [resolve, project],
  );
  const vocabulary = useVocabulary();
  // "Epic" above a task of an epic, "Parent task" above a sub-task.
  const parentWord = detail?.parent?.type === 'epic' ? 'Epic' : 'Parent task';
  const close = () => navigate({ item: '' });
  const copyLink = async () => {
    try {
      await navigator.clipboard.writeText(location.href);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      // Clipboard unavailable (http on a non-local host); the address bar has the link.
    }
  };

  return (
    <aside class="detail" aria-label="Item details">
      <div class="detail-bar">
        <button type="button" class="icon-btn back" onClick={close} aria-label="Back to the list">
          <BackIcon />
        </button>
        {detail && (
          <span class="detail-crumbs">
            <TypeBadge type={detail.item.type} />
            <IdLabel item={detail.item} />
          </span>
        )}
        <span class="spacer" />
        <button
          type="button"
          class="icon-btn"
          onClick={copyLink}
          aria-label="Copy link to this item"
          title="Copy link"
        >
          <LinkIcon />
          {copied && <span class="copied">Copied</span>}
        </button>
        <button
          type="button"
          class="icon-btn close"
          onClick={close}
          aria-label="Close details"
          title="Close (Esc)"
        >
          <CloseIcon />
        </button>
      </div>
      {error && (
        <div class="notice error" role="alert">
          <strong>{error.code === 'NOT_FOUND' ? 'Not found' : error.code}</strong>
          <p>{error.message}</p>
          {error.code === 'NOT_FOUND' ? (
            <p class="muted">It may have been deleted or renamed.</p>
          ) : (
            error.hint && <p class="muted">{error.hint}</p>
          )}
        </div>
      )}
      {!detail && !error && <div class="skeleton" aria-busy="true" aria-label="Loading" />}
      {detail && (
        <article class="detail-body" data-id={detail.item.id}>
          <header>
            <h1 ref={heading} tabIndex={-1} class="detail-title">
              {detail.item.title}
            </h1>
            <div class="detail-pills">
              <StateBadge state={detail.item.state} />
              <StatusPill status={detail.item.status} />
              {detail.item.priority && (
                <span class="pill tone-neutral">Priority: {detail.item.priority}</span>
              )}
              <Tags tags={detail.item.tags} max={12} />
            </div>
          </header>
          {detail.parent && (
            <nav class="parent" aria-label={parentWord}>
              <span class="muted parent-word">
                <ParentIcon type={detail.parent.type} size={13} />
                {parentWord}
              </span>
              <RelatedLink item={detail.parent} />
            </nav>
          )}
          <dl class="fields">
            <Field label="Assignee">{detail.item.assignee}</Field>
            <Field label="Author">{detail.item.author}</Field>
            <Field label="Created">{fullDate(detail.item.created_at)}</Field>
            <Field label="Updated">{fullDate(detail.item.updated_at)}</Field>
            <Field label="Project">{detail.item.project}</Field>
            <Field label="File">
              <code>{detail.item.path}</code>
            </Field>
          </dl>
          <Body detail={detail} resolve={inProject} />
          {detail.children.length > 0 && (
            <section class="children" aria-labelledby="children-title">
              <h2 id="children-title">
                {detail.item.type === 'epic'
                  ? 'Tasks in this epic'
                  : vocabulary.parent === 'parent task'
                    ? 'Subtasks'
                    : 'Children'}
                <span class="count">{detail.children.length}</span>
              </h2>
              <ul>
                {detail.children.map((c) => (
                  <li key={c.id}>
                    <ChildLink item={c} />
                  </li>
                ))}
              </ul>
            </section>
          )}
          {detail.item.references.length > 0 && (
            <section class="references" aria-labelledby="refs-title">
              <h2 id="refs-title">References</h2>
              <ul>
                {detail.item.references.map((r) => (
                  <li key={r}>
                    <Reference value={r} byId={byId} project={detail.item.project} />
                  </li>
                ))}
              </ul>
            </section>
          )}
        </article>
      )}
    </aside>
  );
}

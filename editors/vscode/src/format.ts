// Everything the extension shows or sends that can be computed without VS Code: quick pick items,
// status bar text, command arguments, handoff rendering, path arithmetic on URIs.
// Pure module: no `vscode` import, so the unit tests can load it.

import {
  CONFIGURATION_SECTION,
  HandoffResponse,
  Location,
  Range,
  SEARCH_LIMIT,
  SearchResult,
  ServerStatus,
} from './protocol';

// ---------------------------------------------------------------------------------------------
// Small value helpers

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** Collapses whitespace (summaries may span lines) and cuts long text with an ellipsis. */
export function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/** The message of whatever a rejected promise carried: an Error, a JSON-RPC ResponseError, a string. */
export function errorMessage(error: unknown): string {
  if (typeof error === 'string') {
    return error;
  }
  if (isObject(error) || error instanceof Error) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string' && message !== '') {
      return message;
    }
  }
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

// ---------------------------------------------------------------------------------------------
// Command arguments (`workspace/executeCommand`)

export interface ExecuteCommandParams {
  command: string;
  arguments: unknown[];
}

export function executeCommandParams(command: string, args: unknown[]): ExecuteCommandParams {
  return { command, arguments: args };
}

/** Arguments of `docbridge.search`: `[query, limit]`, plus `kinds` only when some are given. */
export function searchArguments(query: string, limit: number = SEARCH_LIMIT, kinds?: readonly string[]): unknown[] {
  const safeLimit = Number.isInteger(limit) && limit > 0 ? limit : SEARCH_LIMIT;
  const args: unknown[] = [query.trim(), safeLimit];
  if (kinds !== undefined && kinds.length > 0) {
    args.push([...kinds]);
  }
  return args;
}

/** Arguments of `docbridge.handoff`: `[ref]`, or undefined when the reference is blank. */
export function handoffArguments(ref: string): unknown[] | undefined {
  const trimmed = ref.trim();
  return trimmed === '' ? undefined : [trimmed];
}

// ---------------------------------------------------------------------------------------------
// Search

const KIND_ICONS: Record<string, string> = {
  document: '$(book)',
  module: '$(symbol-module)',
  area: '$(folder)',
  package: '$(package)',
  intent: '$(lightbulb)',
  change: '$(git-commit)',
};

export function kindIcon(kind: string): string {
  return KIND_ICONS[kind] ?? '$(search)';
}

function isPosition(value: unknown): boolean {
  return isObject(value) && isFiniteNumber(value.line) && isFiniteNumber(value.character);
}

function parseRange(value: unknown): Range | undefined {
  if (!isObject(value) || !isPosition(value.start) || !isPosition(value.end)) {
    return undefined;
  }
  const start = value.start as Record<string, number>;
  const end = value.end as Record<string, number>;
  return {
    start: { line: start.line, character: start.character },
    end: { line: end.line, character: end.character },
  };
}

function parseLocation(value: unknown): Location | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const uri = nonEmptyString(value.uri);
  if (uri === undefined) {
    return undefined;
  }
  const range = parseRange(value.range);
  return range === undefined ? { uri } : { uri, range };
}

/** Validates one search result; returns undefined when it has nothing to show. */
export function parseSearchResult(value: unknown): SearchResult | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const id = typeof value.id === 'string' ? value.id : '';
  const path = typeof value.path === 'string' ? value.path : '';
  const title = typeof value.title === 'string' ? value.title : '';
  if (id === '' && path === '' && title === '') {
    return undefined;
  }
  const result: SearchResult = {
    id,
    kind: typeof value.kind === 'string' ? value.kind : 'document',
    path,
    title,
    score: isFiniteNumber(value.score) ? value.score : 0,
    confidence: typeof value.confidence === 'string' ? value.confidence : '',
    provenance: typeof value.provenance === 'string' ? value.provenance : '',
  };
  const summary = nonEmptyString(value.summary);
  if (summary !== undefined) {
    result.summary = summary;
  }
  const location = parseLocation(value.location);
  if (location !== undefined) {
    result.location = location;
  }
  return result;
}

/** The results of a `docbridge.search` (or `docbridge.explain`) response, malformed entries dropped. */
export function parseSearchResponse(value: unknown): SearchResult[] {
  if (!isObject(value) || !Array.isArray(value.results)) {
    return [];
  }
  const results: SearchResult[] = [];
  for (const item of value.results) {
    const parsed = parseSearchResult(item);
    if (parsed !== undefined) {
      results.push(parsed);
    }
  }
  return results;
}

export interface SearchPickItem {
  label: string;
  description?: string;
  detail?: string;
  /** The server already ranked and filtered: keep VS Code from filtering the items again by label. */
  alwaysShow: boolean;
  result?: SearchResult;
}

/** label = icon + title, description = path, detail = kind · confidence · summary. */
export function toQuickPickItem(result: SearchResult): SearchPickItem {
  const title = result.title !== '' ? result.title : result.path !== '' ? result.path : result.id;
  const detail = [result.kind, result.confidence, result.summary === undefined ? '' : oneLine(result.summary)]
    .filter((part) => part !== '')
    .join(' · ');
  const item: SearchPickItem = {
    label: `${kindIcon(result.kind)} ${oneLine(title, 120)}`,
    alwaysShow: true,
    result,
  };
  if (result.path !== '') {
    item.description = result.path;
  }
  if (detail !== '') {
    item.detail = detail;
  }
  return item;
}

/** The single, unselectable-in-effect item shown when a query found nothing. */
export function noResultsItem(query: string): SearchPickItem {
  return { label: `No Doc Bridge results for "${oneLine(query, 80)}"`, alwaysShow: true };
}

export function searchFailedItem(error: unknown): SearchPickItem {
  return { label: '$(error) Doc Bridge search failed', detail: oneLine(errorMessage(error), 300), alwaysShow: true };
}

// ---------------------------------------------------------------------------------------------
// Status bar

/** What the status bar shows: a `docbridge/status` notification, or a state of the client itself. */
export type DisplayStatus =
  | ServerStatus
  | { state: 'starting' }
  | { state: 'running' }
  | { state: 'stopped' }
  | { state: 'missing'; command: string }
  | { state: 'failed'; message: string };

export interface StatusView {
  text: string;
  tooltip: string;
  tone: 'normal' | 'warning' | 'error';
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Validates the params of a `docbridge/status` notification. */
export function parseStatus(value: unknown): ServerStatus | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const state = value.state;
  if (state !== 'scanning' && state !== 'ready' && state !== 'error') {
    return undefined;
  }
  const count = (v: unknown): number => (isFiniteNumber(v) && v >= 0 ? Math.floor(v) : 0);
  const status: ServerStatus = { state, files: count(value.files), findings: count(value.findings) };
  const message = nonEmptyString(value.message);
  if (message !== undefined) {
    status.message = message;
  }
  return status;
}

/** The grade (A–F) of the first folder in a `docbridge.doctor` response, or undefined. */
export function parseDoctorGrade(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : undefined;
  const grade = isObject(first) ? first.grade : undefined;
  return typeof grade === 'string' && /^[A-F]$/.test(grade) ? grade : undefined;
}

export function formatStatus(status: DisplayStatus, grade?: string): StatusView {
  const hint = 'Click to show the Doc Bridge output.';
  switch (status.state) {
    case 'starting':
      return { text: '$(sync~spin) Doc Bridge: starting…', tooltip: `Starting the Doc Bridge language server. ${hint}`, tone: 'normal' };
    case 'running':
      return { text: '$(book) Doc Bridge', tooltip: `The Doc Bridge language server is running. ${hint}`, tone: 'normal' };
    case 'scanning': {
      const files = status.files > 0 ? ` (${plural(status.files, 'file')} so far)` : '';
      return {
        text: '$(sync~spin) Doc Bridge: scanning…',
        tooltip: `Doc Bridge is scanning the workspace${files}. ${status.message ?? ''}${status.message ? ' ' : ''}${hint}`,
        tone: 'normal',
      };
    }
    case 'ready': {
      const graded = grade === undefined ? '' : ` · grade ${grade}`;
      const doctor = grade === undefined ? '' : `Doctor grade ${grade} (the docbridge.doctor command opens the report). `;
      return {
        text: `$(book) Doc Bridge: ${plural(status.findings, 'finding')}${graded}`,
        tooltip: `Doc Bridge indexed ${plural(status.files, 'file')} and reports ${plural(status.findings, 'finding')}. ${doctor}${hint}`,
        tone: 'normal',
      };
    }
    case 'error':
      return {
        text: '$(error) Doc Bridge: error',
        tooltip: `Doc Bridge scan failed${status.message ? `: ${status.message}` : ''}. ${hint}`,
        tone: 'error',
      };
    case 'missing':
      return {
        text: '$(warning) Doc Bridge: server not found',
        tooltip: `The language server command \`${status.command}\` was not found. ${hint}`,
        tone: 'warning',
      };
    case 'failed':
      return {
        text: '$(error) Doc Bridge: server failed',
        tooltip: `The Doc Bridge language server failed: ${status.message}. ${hint}`,
        tone: 'error',
      };
    case 'stopped':
      return { text: '$(circle-slash) Doc Bridge: stopped', tooltip: `The Doc Bridge language server is not running. ${hint}`, tone: 'warning' };
  }
}

// ---------------------------------------------------------------------------------------------
// Reindex

/** "Doc Bridge reindexed N files in S s" from a `docbridge.reindex` response. */
export function formatReindex(value: unknown): string {
  const response = isObject(value) ? value : {};
  const files = isFiniteNumber(response.files) ? Math.max(0, Math.round(response.files)) : 0;
  const seconds = isFiniteNumber(response.seconds) ? Math.max(0, response.seconds) : 0;
  const shown = seconds >= 10 ? seconds.toFixed(0) : seconds >= 1 ? seconds.toFixed(1) : seconds.toFixed(2);
  return `Doc Bridge reindexed ${plural(files, 'file')} in ${Number(shown)} s`;
}

/** Arguments of `docbridge.render`: `[template]`, plus `{area}` / `{record}` when one page is asked for. */
export function renderArguments(template: string, key?: string): unknown[] {
  const page = key?.trim();
  if (!page) {
    return [template];
  }
  return [template, template === 'ownership' ? { record: page } : { area: page.replace(/\/+$/, '') }];
}

/** The message for a `docbridge.render` response: how many pages were written and how many were unchanged. */
export function formatRender(value: unknown): string {
  const response = isObject(value) ? value : {};
  const template = typeof response.template === 'string' ? response.template : 'template';
  const pages = Array.isArray(response.pages) ? response.pages.filter(isObject) : [];
  const written = pages.filter((page) => page.status === 'written').length;
  const first = pages.length === 1 && typeof pages[0].path === 'string' ? ` (${pages[0].path})` : '';
  return `Doc Bridge rendered ${template}: ${plural(written, 'page')} written, ${pages.length - written} unchanged${first}`;
}

// ---------------------------------------------------------------------------------------------
// Handoff

/** The Markdown to show for a `docbridge.handoff` response: the server's, or a card rendered here. */
export function handoffMarkdown(value: unknown, ref: string): string {
  if (!isObject(value)) {
    return renderHandoffFallback({}, ref);
  }
  const response = value as Partial<HandoffResponse>;
  const markdown = nonEmptyString(response.markdown);
  if (markdown !== undefined) {
    return markdown;
  }
  return renderHandoffFallback(isObject(response.handoff) ? response.handoff : {}, ref);
}

function inlineCode(text: string): string {
  if (!text.includes('`')) {
    return `\`${text}\``;
  }
  return `\`\` ${text} \`\``;
}

function looksLikeCodeRef(text: string): boolean {
  return text !== '' && !/\s/.test(text);
}

const LABEL_KEYS = ['path', 'command', 'id', 'ref', 'name', 'title', 'target'];
const NOTE_KEYS = ['reason', 'why', 'summary', 'description', 'note', 'title'];

function itemLabel(item: Record<string, unknown>): { label?: string; key?: string } {
  for (const key of LABEL_KEYS) {
    const value = nonEmptyString(item[key]);
    if (value !== undefined) {
      return { label: value, key };
    }
  }
  return {};
}

function renderItem(item: unknown): string {
  if (typeof item === 'string') {
    return looksLikeCodeRef(item) ? inlineCode(item) : item;
  }
  if (typeof item === 'number' || typeof item === 'boolean') {
    return String(item);
  }
  if (isObject(item)) {
    const { label, key } = itemLabel(item);
    if (label === undefined) {
      return inlineCode(JSON.stringify(item));
    }
    const shownLabel = key === 'title' || key === 'name' ? `**${label}**` : inlineCode(label);
    const note = NOTE_KEYS.map((k) => (k === key ? undefined : nonEmptyString(item[k]))).find((v) => v !== undefined);
    return note === undefined ? shownLabel : `${shownLabel} — ${oneLine(note, 400)}`;
  }
  return inlineCode(JSON.stringify(item) ?? String(item));
}

function renderList(value: unknown): string[] {
  const items = Array.isArray(value) ? value : [value];
  return items.filter((item) => item !== undefined && item !== null && item !== '').map((item) => `- ${renderItem(item)}`);
}

function jsonBlock(value: unknown): string[] {
  return ['```json', JSON.stringify(value, null, 2), '```'];
}

function targetLabel(target: unknown, ref: string): string {
  if (typeof target === 'string' && target.trim() !== '') {
    return target;
  }
  if (isObject(target)) {
    const title = nonEmptyString(target.title);
    const path = nonEmptyString(target.path) ?? nonEmptyString(target.id);
    if (title !== undefined && path !== undefined && title !== path) {
      return `${title} (${path})`;
    }
    if (title !== undefined || path !== undefined) {
      return (title ?? path) as string;
    }
  }
  return ref;
}

const LIST_SECTIONS: ReadonlyArray<[string, string]> = [
  ['startHere', 'Start here'],
  ['readBeforeEditing', 'Read before editing'],
  ['editRoots', 'Edit roots'],
  ['checks', 'Checks'],
  ['related', 'Related'],
];
const JSON_SECTIONS: ReadonlyArray<[string, string]> = [
  ['evidence', 'Evidence'],
  ['metadata', 'Metadata'],
];

function titleFromKey(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1).toLowerCase();
}

function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (isObject(value) && Object.keys(value).length === 0)
  );
}

/** A Markdown card for a handoff object, used when the server sent no `markdown`. */
export function renderHandoffFallback(handoff: Record<string, unknown>, ref = ''): string {
  const lines: string[] = [`# Handoff: ${targetLabel(handoff.target, ref)}`];
  const known = new Set<string>(['target', 'explain', ...LIST_SECTIONS.map(([k]) => k), ...JSON_SECTIONS.map(([k]) => k)]);
  const target = handoff.target;
  if (isObject(target)) {
    const summary = nonEmptyString(target.summary);
    if (summary !== undefined) {
      lines.push('', summary.trim());
    }
  }
  for (const [key, title] of LIST_SECTIONS) {
    if (!isEmpty(handoff[key])) {
      lines.push('', `## ${title}`, '', ...renderList(handoff[key]));
    }
  }
  const explain = handoff.explain;
  if (!isEmpty(explain)) {
    lines.push('', '## Why these', '');
    if (typeof explain === 'string') {
      lines.push(explain.trim());
    } else if (Array.isArray(explain)) {
      lines.push(...renderList(explain));
    } else {
      lines.push(...jsonBlock(explain));
    }
  }
  for (const key of Object.keys(handoff)) {
    if (!known.has(key) && !isEmpty(handoff[key])) {
      const value = handoff[key];
      lines.push('', `## ${titleFromKey(key)}`, '', ...(isObject(value) ? jsonBlock(value) : renderList(value)));
    }
  }
  for (const [key, title] of JSON_SECTIONS) {
    if (!isEmpty(handoff[key])) {
      lines.push('', `## ${title}`, '', ...jsonBlock(handoff[key]));
    }
  }
  if (lines.length === 1) {
    lines.push('', '_The server returned an empty handoff._');
  }
  return `${lines.join('\n')}\n`;
}

/** Path of the virtual `docbridge-handoff:` document for a reference, ending in `.md` so it opens as Markdown. */
export function handoffDocumentPath(ref: string): string {
  const cleaned = ref
    .trim()
    .replace(/\\/g, '/')
    .replace(/[?#%*"<>|\u0000-\u001f]/g, '_')
    .replace(/\/{2,}/g, '/')
    .replace(/^\/+/, '');
  return `/Handoff/${cleaned === '' ? 'handoff' : cleaned}.md`;
}

// ---------------------------------------------------------------------------------------------
// URIs and workspace folders

export interface FolderRef {
  /** The folder's URI as a string (`vscode.Uri.toString()`). */
  uri: string;
  name?: string;
}

interface UriParts {
  prefix: string;
  segments: string[];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function splitUri(uri: string): UriParts | undefined {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):(\/\/([^/?#]*))?([^?#]*)/.exec(uri);
  if (match === null) {
    return undefined;
  }
  const scheme = match[1].toLowerCase();
  const authority = (match[3] ?? '').toLowerCase();
  const segments = match[4]
    .split('/')
    .filter((segment) => segment !== '')
    .map(safeDecode);
  // Windows drive letters are case-insensitive (`c:` and `C:`).
  if (segments.length > 0 && /^[a-zA-Z]:$/.test(segments[0])) {
    segments[0] = segments[0].toLowerCase();
  }
  return { prefix: `${scheme}://${authority}`, segments };
}

/** The best (deepest) workspace folder containing `uri`, with the path inside it (`/`-separated). */
export function folderForUri(uri: string, folders: readonly FolderRef[]): { folder: FolderRef; path: string } | undefined {
  const target = splitUri(uri);
  if (target === undefined) {
    return undefined;
  }
  let best: { folder: FolderRef; path: string; depth: number } | undefined;
  for (const folder of folders) {
    const base = splitUri(folder.uri);
    if (base === undefined || base.prefix !== target.prefix || base.segments.length > target.segments.length) {
      continue;
    }
    if (!base.segments.every((segment, i) => segment === target.segments[i])) {
      continue;
    }
    if (best === undefined || base.segments.length > best.depth) {
      best = { folder, path: target.segments.slice(base.segments.length).join('/'), depth: base.segments.length };
    }
  }
  return best === undefined ? undefined : { folder: best.folder, path: best.path };
}

/** Workspace-relative path of a file (`src/app.ts`), or undefined when it is outside every folder or is a folder. */
export function workspaceRelativePath(uri: string, folders: readonly FolderRef[]): string | undefined {
  const found = folderForUri(uri, folders);
  return found === undefined || found.path === '' ? undefined : found.path;
}

/** `folderUri` + a `/`-separated relative path, each segment percent-encoded. */
export function joinUriPath(folderUri: string, relativePath: string): string {
  const base = folderUri.replace(/\/+$/, '');
  const segments = relativePath
    .replace(/\\/g, '/')
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .map((segment) => encodeURIComponent(segment));
  return segments.length === 0 ? base : `${base}/${segments.join('/')}`;
}

export interface OpenTarget {
  uri: string;
  range?: Range;
}

/** Where to go for a search result: its location, else its path inside the first workspace folder. */
export function resultTarget(result: SearchResult, folders: readonly FolderRef[]): OpenTarget | undefined {
  if (result.location !== undefined) {
    return result.location.range === undefined
      ? { uri: result.location.uri }
      : { uri: result.location.uri, range: result.location.range };
  }
  if (result.path !== '' && folders.length > 0) {
    if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(result.path)) {
      return { uri: result.path };
    }
    return { uri: joinUriPath(folders[0].uri, result.path) };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Settings

/** Full key (`docbridge.server.command`) of a setting of the Doc Bridge section. */
export function settingKey(name: string): string {
  return `${CONFIGURATION_SECTION}.${name}`;
}

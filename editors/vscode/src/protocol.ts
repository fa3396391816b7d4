// The contract between this extension and the Doc Bridge language server (`docbridge-lsp`).
// Pure module: no `vscode` import, so the unit tests can load it.

/** Commands the server advertises through `workspace/executeCommand`. vscode-languageclient registers
 * VS Code commands with exactly these ids, so the extension must never register them itself. */
export const SERVER_COMMANDS = {
  search: 'docbridge.search',
  handoff: 'docbridge.handoff',
  lookup: 'docbridge.lookup',
  explain: 'docbridge.explain',
  reindex: 'docbridge.reindex',
  render: 'docbridge.render',
  doctor: 'docbridge.doctor',
} as const;

/** Templates `docbridge.render` knows (`docbridge render TEMPLATE`), in the order the palette offers them. */
export const RENDER_TEMPLATES = ['area', 'ownership', 'llms.txt', 'change-digest', 'overlay-review'] as const;

/** Server → client notification carrying the scan state and the number of findings. */
export const STATUS_NOTIFICATION = 'docbridge/status';

/** Configuration section the server pulls (`workspace/configuration`) and is pushed (`didChangeConfiguration`). */
export const CONFIGURATION_SECTION = 'docbridge';

export const DEFAULT_SERVER_COMMAND = 'docbridge-lsp';

/** Number of results the Search quick pick asks for. */
export const SEARCH_LIMIT = 20;

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Location {
  uri: string;
  range?: Range;
}

export type ResultKind = 'document' | 'module' | 'area' | 'package' | 'intent' | 'change';
export type Confidence = 'observed' | 'declared' | 'fuzzy' | 'proposed';

export interface SearchResult {
  id: string;
  kind: ResultKind | string;
  path: string;
  title: string;
  summary?: string;
  score: number;
  confidence: Confidence | string;
  provenance: string;
  location?: Location;
}

export interface SearchResponse {
  query: string;
  results: SearchResult[];
}

export interface HandoffResponse {
  handoff: Record<string, unknown>;
  markdown?: string;
}

export interface ReindexResponse {
  files: number;
  seconds: number;
}

export type ScanState = 'scanning' | 'ready' | 'error';

/** Params of the `docbridge/status` notification. */
export interface ServerStatus {
  state: ScanState;
  files: number;
  findings: number;
  message?: string;
}

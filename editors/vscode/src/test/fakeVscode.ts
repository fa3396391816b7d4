// A stand-in for the `vscode` module, complete enough to activate the bundled extension (with the real
// vscode-languageclient inside it) under plain Node and watch what it does. The parts the extension and
// the client use are implemented and recorded; anything else resolves to an inert stub.

import * as fs from 'node:fs';
import Module from 'node:module';

type Listener<T> = (event: T) => unknown;

export class EventEmitter<T> {
  private listeners: Array<Listener<T>> = [];
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    });
  };
  fire(event: T): void {
    for (const listener of [...this.listeners]) {
      listener(event);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Disposable {
  constructor(private readonly onDispose: () => unknown = () => undefined) {}
  static from(...items: Array<{ dispose(): unknown }>): Disposable {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.onDispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value);
    if (m === null) {
      throw new Error(`bad uri ${value}`);
    }
    return new Uri(m[1], m[2] ?? '', decodeURIComponent(m[3]), m[4] ?? '', m[5] ?? '');
  }
  static file(fsPath: string): Uri {
    return new Uri('file', '', fsPath, '', '');
  }
  static from(parts: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(parts.scheme, parts.authority ?? '', parts.path ?? '', parts.query ?? '', parts.fragment ?? '');
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, base.authority, [base.path.replace(/\/+$/, ''), ...segments].join('/'), '', '');
  }
  get fsPath(): string {
    return this.path;
  }
  with(change: Partial<{ scheme: string; path: string; query: string }>): Uri {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path, change.query ?? this.query, this.fragment);
  }
  toString(): string {
    const authority = this.authority !== '' || this.scheme === 'file' ? `//${this.authority}` : '';
    const path = this.path.split('/').map(encodeURIComponent).join('/');
    return `${this.scheme}:${authority}${path}${this.query ? `?${this.query}` : ''}${this.fragment ? `#${this.fragment}` : ''}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    if (typeof a === 'number') {
      this.start = new Position(a, b as number);
      this.end = new Position(c as number, d as number);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire(undefined);
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class CancellationError extends Error {}

/** Any other property: a function, a constructor and a namespace at once. */
function stub(name: string): any {
  const target = function () {
    /* stub */
  };
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === 'then') {
        return undefined;
      }
      if (prop === 'prototype') {
        return Object.prototype;
      }
      if (prop === Symbol.toPrimitive) {
        return () => name;
      }
      if (prop === 'dispose') {
        return () => undefined;
      }
      return stub(`${name}.${String(prop)}`);
    },
    apply() {
      return new Disposable();
    },
    construct(_t, args) {
      return { stub: name, args };
    },
  });
}

function withStubs<T extends object>(name: string, base: T): T {
  return new Proxy(base, {
    get(target, prop, receiver) {
      if (prop in target || typeof prop === 'symbol' || prop === 'then') {
        return Reflect.get(target, prop, receiver);
      }
      if (String(prop).startsWith('onDid') || String(prop).startsWith('onWill')) {
        return () => new Disposable();
      }
      return stub(`${name}.${String(prop)}`);
    },
  });
}

export interface Message {
  severity: 'error' | 'warning' | 'info';
  message: string;
  items: string[];
}

export interface FakeQuickPick {
  value: string;
  items: Array<Record<string, any>>;
  selectedItems: Array<Record<string, any>>;
  busy: boolean;
  visible: boolean;
  changeValue(value: string): void;
  accept(item: Record<string, any>): void;
  hide(): void;
}

export interface FakeVscode {
  api: any;
  settings: Map<string, unknown>;
  messages: Message[];
  commands: Map<string, (...args: any[]) => unknown>;
  executed: Array<{ command: string; args: unknown[] }>;
  statusItems: Array<{ text: string; tooltip?: string; command?: string }>;
  output: string[];
  quickPicks: FakeQuickPick[];
  contentProviders: Map<string, { provideTextDocumentContent(uri: Uri): string }>;
  shownDocuments: Array<{ uri: string; selection?: Range; languageId?: string }>;
  /** What the next error/warning/info message "clicks". */
  answer: (message: Message) => string | undefined;
  /** What the next showQuickPick / showInputBox calls return, in order (then undefined: dismissed). */
  prompts: Array<string | undefined>;
  /** Changes settings and fires onDidChangeConfiguration. */
  configure(changes: Record<string, unknown>): void;
  run(command: string, ...args: unknown[]): Promise<unknown>;
}

/** Defaults of every contributed setting, from package.json. */
function defaultsFrom(manifest: any): Map<string, unknown> {
  const settings = new Map<string, unknown>();
  for (const [key, schema] of Object.entries<any>(manifest.contributes.configuration.properties)) {
    settings.set(key, schema.default);
  }
  return settings;
}

export function createFakeVscode(manifestPath: string, overrides: Record<string, unknown> = {}): FakeVscode {
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const settings = defaultsFrom(manifest);
  for (const [key, value] of Object.entries(overrides)) {
    settings.set(key, value);
  }
  const configEmitter = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();

  const fake: FakeVscode = {
    api: undefined,
    settings,
    messages: [],
    prompts: [],
    commands: new Map(),
    executed: [],
    statusItems: [],
    output: [],
    quickPicks: [],
    contentProviders: new Map(),
    shownDocuments: [],
    answer: () => undefined,
    configure(changes) {
      for (const [key, value] of Object.entries(changes)) {
        settings.set(key, value);
      }
      const keys = Object.keys(changes);
      configEmitter.fire({
        affectsConfiguration: (section: string) => keys.some((key) => key === section || key.startsWith(`${section}.`)),
      });
    },
    async run(command, ...args) {
      const handler = fake.commands.get(command);
      if (handler === undefined) {
        throw new Error(`command ${command} is not registered`);
      }
      return handler(...args);
    },
  };

  const getConfiguration = (section?: string) => {
    const full = (key: string) => (section ? `${section}.${key}` : key);
    const read = (key: string): unknown => {
      const name = full(key);
      if (settings.has(name)) {
        return settings.get(name);
      }
      const nested: Record<string, any> = {};
      let found = false;
      for (const [k, v] of settings) {
        if (k.startsWith(`${name}.`)) {
          found = true;
          const parts = k.slice(name.length + 1).split('.');
          let node = nested;
          for (const part of parts.slice(0, -1)) {
            node = node[part] ??= {};
          }
          node[parts[parts.length - 1]] = v;
        }
      }
      return found ? nested : undefined;
    };
    return {
      get: (key: string, defaultValue?: unknown) => read(key) ?? defaultValue,
      has: (key: string) => read(key) !== undefined,
      inspect: (key: string) => ({ key: full(key), defaultValue: read(key) }),
      update: async () => undefined,
    };
  };

  const message =
    (severity: Message['severity']) =>
    async (text: string, ...rest: unknown[]): Promise<string | undefined> => {
      const items = rest.filter((item): item is string => typeof item === 'string');
      const entry = { severity, message: text, items };
      fake.messages.push(entry);
      return fake.answer(entry);
    };

  const window = withStubs('window', {
    activeTextEditor: undefined,
    visibleTextEditors: [],
    tabGroups: { all: [], onDidChangeTabs: () => new Disposable() },
    createOutputChannel: (name: string) => ({
      name,
      append: (text: string) => fake.output.push(text),
      appendLine: (text: string) => fake.output.push(`${text}\n`),
      replace: () => undefined,
      clear: () => undefined,
      show: () => fake.executed.push({ command: '(output.show)', args: [name] }),
      hide: () => undefined,
      dispose: () => undefined,
    }),
    createStatusBarItem: () => {
      const item = { text: '', tooltip: undefined, command: undefined, name: '', backgroundColor: undefined, show() {}, hide() {}, dispose() {} };
      fake.statusItems.push(item);
      return item;
    },
    showErrorMessage: message('error'),
    showWarningMessage: message('warning'),
    showInformationMessage: message('info'),
    withProgress: async (_options: unknown, task: (progress: unknown, token: unknown) => unknown) =>
      task({ report: () => undefined }, new CancellationTokenSource().token),
    createQuickPick: () => {
      const changeValue = new EventEmitter<string>();
      const accept = new EventEmitter<void>();
      const hide = new EventEmitter<void>();
      const pick: FakeQuickPick & Record<string, any> = {
        value: '',
        items: [],
        selectedItems: [],
        busy: false,
        visible: false,
        onDidChangeValue: changeValue.event,
        onDidAccept: accept.event,
        onDidHide: hide.event,
        show() {
          pick.visible = true;
        },
        hide() {
          pick.visible = false;
          hide.fire(undefined);
        },
        dispose() {},
        changeValue(value: string) {
          pick.value = value;
          changeValue.fire(value);
        },
        accept(item: Record<string, any>) {
          pick.selectedItems = [item];
          accept.fire(undefined);
        },
      };
      fake.quickPicks.push(pick);
      return pick;
    },
    showQuickPick: async () => fake.prompts.shift(),
    showInputBox: async () => fake.prompts.shift(),
    showTextDocument: async (target: any, options?: { selection?: Range }) => {
      const uri = target instanceof Uri ? target : target.uri;
      fake.shownDocuments.push({ uri: uri.toString(), selection: options?.selection, languageId: target.languageId });
      return { revealRange: () => undefined, document: target };
    },
  });

  const workspace = withStubs('workspace', {
    workspaceFolders: undefined as unknown,
    textDocuments: [],
    notebookDocuments: [],
    isTrusted: true,
    getConfiguration,
    onDidChangeConfiguration: configEmitter.event,
    registerTextDocumentContentProvider: (scheme: string, provider: any) => {
      fake.contentProviders.set(scheme, provider);
      return new Disposable();
    },
    openTextDocument: async (uri: Uri) => {
      const provider = fake.contentProviders.get(uri.scheme);
      const text = provider ? provider.provideTextDocumentContent(uri) : '';
      return { uri, languageId: uri.path.endsWith('.md') ? 'markdown' : 'plaintext', getText: () => text };
    },
    fs: {
      stat: async (uri: Uri) => {
        const stat = fs.statSync(uri.fsPath);
        return { type: stat.isDirectory() ? 2 : 1, size: stat.size, ctime: 0, mtime: 0 };
      },
    },
  });

  const commands = withStubs('commands', {
    registerCommand: (id: string, handler: (...args: any[]) => unknown) => {
      if (fake.commands.has(id)) {
        // VS Code refuses a second registration of the same id.
        throw new Error(`command '${id}' already exists`);
      }
      fake.commands.set(id, handler);
      return new Disposable(() => fake.commands.delete(id));
    },
    executeCommand: async (command: string, ...args: unknown[]) => {
      fake.executed.push({ command, args });
      return undefined;
    },
    getCommands: async () => [...fake.commands.keys()],
  });

  const languages = withStubs('languages', {
    match: () => 10,
    createDiagnosticCollection: () => ({ set() {}, delete() {}, clear() {}, dispose() {}, forEach() {} }),
    setTextDocumentLanguage: async (document: any, languageId: string) => ({ ...document, languageId }),
  });

  fake.api = withStubs('vscode', {
    version: '1.82.0',
    env: withStubs('env', {
      appName: 'Fake VS Code',
      language: 'en',
      machineId: 'test',
      sessionId: 'test',
      uiKind: 1,
      // Set by a test to play a remote window ('ssh-remote', 'wsl', …).
      remoteName: undefined as string | undefined,
    }),
    window,
    workspace,
    commands,
    languages,
    extensions: withStubs('extensions', { all: [], getExtension: () => undefined }),
    EventEmitter,
    Disposable,
    Uri,
    Position,
    Range,
    CancellationTokenSource,
    CancellationError,
    ThemeColor,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
    TextEditorRevealType: { Default: 0, InCenter: 1, InCenterIfOutsideViewport: 2, AtTop: 3 },
  });
  return fake;
}

let current: FakeVscode | undefined;
let hooked = false;

/** Loads a fresh copy of `modulePath` whose `require('vscode')` (now and later) returns `fake`. */
export function loadWithFake<T>(modulePath: string, fake: FakeVscode): T {
  current = fake;
  if (!hooked) {
    hooked = true;
    const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
    const original = loader._load;
    loader._load = function (request: string, ...rest: unknown[]) {
      if (request === 'vscode') {
        if (current === undefined) {
          throw new Error('no fake vscode installed');
        }
        return current.api;
      }
      return original.call(this, request, ...rest);
    };
  }
  delete require.cache[require.resolve(modulePath)];
  return require(modulePath) as T;
}

// Doc Bridge for VS Code: starts the `docbridge-lsp` language server and adds the Search, Show Handoff,
// Reindex and Show Output commands. Everything that can be computed without VS Code lives in the pure
// modules (format.ts, serverCommand.ts, async.ts) and is unit-tested there.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  ErrorAction,
  ErrorHandler,
  ErrorHandlerResult,
  Executable,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  State,
} from 'vscode-languageclient/node';

import { debounce, LatestOnly } from './async';
import {
  DisplayStatus,
  errorMessage,
  executeCommandParams,
  FolderRef,
  formatReindex,
  formatRender,
  formatStatus,
  parseDoctorGrade,
  handoffArguments,
  handoffDocumentPath,
  handoffMarkdown,
  noResultsItem,
  parseSearchResponse,
  parseStatus,
  renderArguments,
  resultTarget,
  searchArguments,
  SearchPickItem,
  searchFailedItem,
  toQuickPickItem,
  workspaceRelativePath,
} from './format';
import {
  CONFIGURATION_SECTION,
  DEFAULT_SERVER_COMMAND,
  RENDER_TEMPLATES,
  SEARCH_LIMIT,
  SearchResult,
  SERVER_COMMANDS,
  STATUS_NOTIFICATION,
} from './protocol';
import {
  crashedMessage,
  findServerExecutable,
  isExecutableFile,
  isMissingCommandError,
  missingCommandMessage,
  needsShell,
  RestartBudget,
  ServerCommand,
  serverCommandFromSettings,
  startFailedMessage,
  startFailureDetail,
  venvServerPath,
} from './serverCommand';

import {
  bundledWheel,
  findPython,
  installedWheel,
  ManagedEnvironment,
  managedEnvironment,
  MIN_PYTHON,
  noPythonMessage,
  offerMessage,
  pythonCandidates,
  RunResult,
  SET_UP_CHOICE,
  SetupError,
  setUpServer,
} from './serverSetup';

const CLIENT_ID = 'docbridge';
const CLIENT_NAME = 'Doc Bridge';
const HANDOFF_SCHEME = 'docbridge-handoff';
const LANGUAGES = ['markdown', 'mdx', 'typescript', 'typescriptreact', 'javascript', 'javascriptreact'];
const SEARCH_DEBOUNCE_MS = 150;

/** vscode-languageclient, adjusted so that a failed start is reported once, by the extension. */
class DocBridgeLanguageClient extends LanguageClient {
  /** The error of a failed `initialize`, when there was one. */
  initializeError: unknown;
  /** Set when the extension replaces or stops this client: it no longer restarts nor notifies. */
  retiring = false;

  /** The client shows its own "couldn't create connection" notification when starting fails; the
   * extension reports that failure itself (with install instructions), so that one is logged only.
   * A retiring client logs only too. */
  override error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    if (this.retiring || message.includes("couldn't create connection to server")) {
      super.error(message, data, false);
      return;
    }
    super.error(message, data, showNotification);
  }

  /** A retiring client does not start again (vscode-languageclient restarts a crashed server on its own,
   * possibly after the extension decided to replace it). */
  override start(): Promise<void> {
    if (this.retiring) {
      return Promise.reject(new Error('This Doc Bridge client was replaced.'));
    }
    return super.start();
  }

  /** After a failed `initialize` the client calls `void this.stop()`, which rejects when the client never
   * ran; mark that promise handled (callers that await stop() still see the rejection). */
  override stop(timeout?: number): Promise<void> {
    const stopping = super.stop(timeout);
    stopping.catch(() => undefined);
    return stopping;
  }

  /** vscode-languageclient's promise for the start in progress or done (undefined when stopped). */
  private get startPromise(): Promise<void> | undefined {
    return (this as unknown as { _onStart?: Promise<void> })._onStart;
  }

  /**
   * Waits (bounded) until a start in progress, e.g. vscode-languageclient restarting a crashed server,
   * has finished: the client reports Running before it registers its features, and stopping it in
   * between would leave those registrations (the server's commands) behind.
   */
  async settle(timeoutMs = 10000): Promise<void> {
    const pending = this.startPromise;
    if (pending === undefined) {
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      pending.catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * start(), resolving only once the server runs. When the server exits during start-up,
   * vscode-languageclient 9 may resolve start() anyway and leave its internal start promise rejected
   * and unobserved; that promise is observed here and a client that is not running is an error.
   */
  async startOrThrow(): Promise<void> {
    const starting = this.start();
    const internal = this.startPromise;
    internal?.catch(() => undefined);
    await starting;
    if (internal !== undefined) {
      await internal;
    }
    if (!this.isRunning()) {
      throw this.initializeError ?? new Error('the server exited while starting');
    }
  }
}

/**
 * While the client starts, a server that exits is a start failure, reported once by the extension
 * (vscode-languageclient would restart it and show a notification per attempt). Once it runs, a crash
 * restarts it within a budget; past the budget the extension says so, once, and offers a restart.
 */
class StartAwareErrorHandler implements ErrorHandler {
  running = false;
  private readonly budget = new RestartBudget();

  constructor(
    private readonly isRetiring: () => boolean,
    private readonly onGiveUp: (message: string) => void,
  ) {}

  error(_error: Error, _message: unknown, count: number | undefined): ErrorHandlerResult {
    return count !== undefined && count <= 3 ? { action: ErrorAction.Continue } : { action: ErrorAction.Shutdown };
  }

  closed(): CloseHandlerResult {
    if (!this.running || this.isRetiring()) {
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    if (this.budget.allowRestart(Date.now())) {
      return { action: CloseAction.Restart, message: 'The Doc Bridge server stopped unexpectedly; restarting it.', handled: true };
    }
    const message = crashedMessage(this.budget);
    this.onGiveUp(message);
    return { action: CloseAction.DoNotRestart, message, handled: true };
  }
}

type Problem = { kind: 'missing'; command: string } | { kind: 'failed'; command: string; message: string };

/** Read-only Markdown documents holding handoffs, under the `docbridge-handoff:` scheme. */
class HandoffDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, markdown: string): void {
    const key = uri.toString();
    this.contents.delete(key);
    this.contents.set(key, markdown);
    // Keep the most recent handoffs only.
    while (this.contents.size > 50) {
      const oldest = this.contents.keys().next().value as string;
      this.contents.delete(oldest);
    }
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return (
      this.contents.get(uri.toString()) ??
      '# Doc Bridge handoff\n\nThis handoff is no longer in memory. Run **Doc Bridge: Show Handoff** again.\n'
    );
  }

  dispose(): void {
    this.changed.dispose();
    this.contents.clear();
  }
}

function folderRefs(): FolderRef[] {
  return (vscode.workspace.workspaceFolders ?? []).map((folder) => ({ uri: folder.uri.toString(), name: folder.name }));
}

function fileFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

function firstFileFolder(): string | undefined {
  return fileFolders()[0];
}

function toRange(range: { start: { line: number; character: number }; end: { line: number; character: number } }): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

/** Runs a program without a shell; never rejects (a program that cannot start is `error`). */
function runProcess(command: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(command, args, { maxBuffer: 64 * 1024 * 1024, timeout: 20 * 60 * 1000, windowsHide: true }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      const failed = error !== null && typeof error.code !== 'number' ? errorMessage(error) : undefined;
      resolve({ code, stdout: String(stdout), stderr: String(stderr), error: failed });
    });
  });
}

/** The interpreter the Python extension selected, when it is installed and says. */
async function selectedPython(): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension('ms-python.python');
  if (extension === undefined) {
    return undefined;
  }
  try {
    const api = (extension.isActive ? extension.exports : await extension.activate()) as {
      environments?: { getActiveEnvironmentPath?: () => { path?: string } | undefined };
    };
    return api?.environments?.getActiveEnvironmentPath?.()?.path;
  } catch {
    return undefined;
  }
}

class DocBridge implements vscode.Disposable {
  private readonly output: vscode.OutputChannel;
  private readonly statusItem: vscode.StatusBarItem;
  private readonly handoffs = new HandoffDocuments();
  private client: DocBridgeLanguageClient | undefined;
  private problem: Problem | undefined;
  private shownState: DisplayStatus['state'] | undefined;
  /** The doctor grade of the running client's first folder, asked once when its first scan is ready. */
  private grade: string | undefined;
  private gradeAsked = false;
  private lastStatus: DisplayStatus | undefined;
  private lastNotified: string | undefined;
  /** Start/stop/restart run one after the other. */
  private lifecycle: Promise<void> = Promise.resolve();

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel(CLIENT_NAME);
    this.statusItem = vscode.window.createStatusBarItem('docbridge.status', vscode.StatusBarAlignment.Left, 0);
    this.statusItem.name = CLIENT_NAME;
    this.statusItem.command = 'docbridge.showOutput';
    context.subscriptions.push(
      this.output,
      this.statusItem,
      this.handoffs,
      vscode.workspace.registerTextDocumentContentProvider(HANDOFF_SCHEME, this.handoffs),
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Language client lifecycle

  private readServerCommand(): ServerCommand {
    const config = vscode.workspace.getConfiguration(CONFIGURATION_SECTION);
    const folder = firstFileFolder();
    return serverCommandFromSettings(
      { command: config.get<string>('server.command'), args: config.get<string[]>('server.args') },
      {
        workspaceFolder: folder,
        home: os.homedir(),
        exists: (candidate) => isExecutableFile(path.resolve(folder ?? process.cwd(), candidate)),
      },
    );
  }

  private setStatus(status: DisplayStatus): void {
    this.shownState = status.state;
    this.lastStatus = status;
    const view = formatStatus(status, this.grade);
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
    this.statusItem.backgroundColor =
      view.tone === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : view.tone === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.statusItem.show();
  }

  start(): Promise<void> {
    this.lifecycle = this.lifecycle.then(() => this.doStart()).catch((error) => this.log(`start: ${errorMessage(error)}`));
    return this.lifecycle;
  }

  restart(): Promise<void> {
    // Right away, not when the queue gets there: the current client must not restart itself or push
    // the configuration change that is replacing it.
    this.retireCurrent();
    this.lifecycle = this.lifecycle
      .then(async () => {
        await this.doStop();
        await this.doStart();
      })
      .catch((error) => this.log(`restart: ${errorMessage(error)}`));
    return this.lifecycle;
  }

  private log(message: string): void {
    this.output.appendLine(`[client ${new Date().toLocaleTimeString()}] ${message}`);
  }

  private async doStart(): Promise<void> {
    this.problem = undefined;
    const server = this.readServerCommand();
    const cwd = firstFileFolder();
    const folders = fileFolders();
    const found = findServerExecutable(server.command, { cwd, folders, trusted: vscode.workspace.isTrusted });
    let executable: string;
    if (found !== undefined) {
      executable = found.executable;
      if (found.fromWorkspaceVenv) {
        this.log(`${server.command} is not on PATH; using the workspace's ${executable}`);
      }
    } else {
      const managed = server.command === DEFAULT_SERVER_COMMAND ? await this.managedServer() : undefined;
      if (managed === undefined) {
        const venvs = vscode.workspace.isTrusted ? folders.map((folder) => venvServerPath(folder)) : [];
        const looked = server.command === DEFAULT_SERVER_COMMAND && venvs.length > 0 ? ` (nor ${venvs.join(', ')})` : '';
        this.log(`Language server command not found: ${server.command}${looked}`);
        if (server.command === DEFAULT_SERVER_COMMAND && this.wheel() !== undefined) {
          this.offerSetup();
        } else {
          this.reportProblem({ kind: 'missing', command: server.command }, false);
        }
        return;
      }
      executable = managed;
      this.log(`${server.command} is not on PATH; using the server this extension set up: ${executable}`);
    }

    this.log(`Starting ${[executable, ...server.args].join(' ')}${cwd ? ` in ${cwd}` : ''}`);
    // No `transport`: the server speaks LSP over stdio and is started as `<command> <args...>` exactly
    // (with TransportKind.stdio vscode-languageclient would append `--stdio`).
    const serverOptions: Executable = {
      command: executable,
      args: server.args,
      options: { cwd, shell: needsShell(executable) },
    };
    const errorHandler = new StartAwareErrorHandler(
      () => client.retiring,
      (message) => this.reportCrashes(message),
    );
    const clientOptions: LanguageClientOptions = {
      // MDX pages are served whether or not an MDX extension gives them a language of their own.
      documentSelector: [
        ...LANGUAGES.map((language) => ({ scheme: 'file', language })),
        { scheme: 'file', pattern: '**/*.mdx' },
      ],
      synchronize: { configurationSection: CONFIGURATION_SECTION },
      outputChannel: this.output,
      // Failed requests are reported by the commands that made them; no extra "Go to output" popups.
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      errorHandler,
      // A failed `initialize` is a start failure: reported once below, not as a bare popup.
      initializationFailedHandler: (error) => {
        client.initializeError = error;
        return false;
      },
      middleware: {
        workspace: {
          // A client being replaced (docbridge.server.* changed) does not push the change that replaces it.
          didChangeConfiguration: (sections, next) => (client.retiring ? Promise.resolve() : next(sections)),
        },
      },
    };
    const client = new DocBridgeLanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    client.onNotification(STATUS_NOTIFICATION, (params: unknown) => {
      const status = parseStatus(params);
      if (status !== undefined && this.client === client) {
        this.setStatus(status);
        if (status.state === 'ready' && !this.gradeAsked) {
          this.gradeAsked = true;
          void this.refreshGrade(client);
        }
      }
    });
    client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      if (event.newState === State.Stopped) {
        this.setStatus({ state: 'stopped' });
      }
    });

    this.client = client;
    this.grade = undefined;
    this.gradeAsked = false;
    this.setStatus({ state: 'starting' });
    try {
      await client.startOrThrow();
      errorHandler.running = true;
      if (this.client === client && this.shownState === 'starting') {
        this.setStatus({ state: 'running' });
      }
    } catch (error) {
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.log(`Starting the language server failed: ${errorMessage(error)}`);
      if (isMissingCommandError(error)) {
        this.reportProblem({ kind: 'missing', command: server.command }, false);
      } else {
        this.reportProblem({ kind: 'failed', command: server.command, message: startFailureDetail(errorMessage(error)) }, false);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Setting the server up when none is found (serverSetup.ts)

  /** The Doc Bridge wheel shipped in this extension's `server/` folder. */
  private wheel(): string | undefined {
    const folder = path.join(this.context.extensionPath, 'server');
    try {
      const name = bundledWheel(fs.readdirSync(folder));
      return name === undefined ? undefined : path.join(folder, name);
    } catch {
      return undefined;
    }
  }

  private environment(): ManagedEnvironment {
    return managedEnvironment(this.context.globalStorageUri.fsPath);
  }

  /** The server of the private environment when it was set up from the wheel this extension ships. */
  private async managedServer(): Promise<string | undefined> {
    const environment = this.environment();
    if (!isExecutableFile(environment.server)) {
      return undefined;
    }
    const marker = await fs.promises.readFile(environment.marker, 'utf8').catch(() => undefined);
    const installed = installedWheel(marker);
    const shipped = this.wheel();
    if (installed === undefined || (shipped !== undefined && installed !== path.basename(shipped))) {
      return undefined; // half made, or made from another version: set up again
    }
    return environment.server;
  }

  private offerSetup(): void {
    this.problem = { kind: 'missing', command: DEFAULT_SERVER_COMMAND };
    this.setStatus({ state: 'missing', command: DEFAULT_SERVER_COMMAND });
    if (this.lastNotified === 'offer') {
      return;
    }
    this.lastNotified = 'offer';
    void vscode.window.showInformationMessage(offerMessage(), SET_UP_CHOICE, 'Open Settings').then((choice) => {
      if (choice === SET_UP_CHOICE) {
        void this.setUpServer();
      } else {
        void this.onProblemChoice(choice);
      }
    });
  }

  /** Creates the private environment from the shipped wheel (with a progress notification), then starts it. */
  async setUpServer(): Promise<void> {
    const wheel = this.wheel();
    if (wheel === undefined) {
      void vscode.window.showErrorMessage(
        'Doc Bridge: this build of the extension carries no server to set up; install Doc Bridge and set docbridge.server.command.',
      );
      return;
    }
    const environment = this.environment();
    const ok = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Doc Bridge: setting up the language server' },
      async (progress) => {
        try {
          const search = await findPython(pythonCandidates(process.platform, await selectedPython()), runProcess);
          if (search.found === undefined) {
            this.log(`No Python ${MIN_PYTHON.join('.')}+ found: ${search.tried.join('; ') || 'none on PATH'}`);
            void vscode.window.showErrorMessage(noPythonMessage(search.tried), 'Show Output');
            return false;
          }
          const python = search.found;
          this.log(`Setting up the server with ${python.candidate.command} (${python.version}) from ${wheel}`);
          await setUpServer({
            python: python.candidate,
            environment,
            wheel,
            run: runProcess,
            remove: (folder) => fs.promises.rm(folder, { recursive: true, force: true }),
            writeFile: (file, text) => fs.promises.writeFile(file, text, 'utf8'),
            progress: (message) => progress.report({ message }),
            log: (message) => message.trim() !== '' && this.output.appendLine(message.trimEnd()),
          });
          this.log(`The server is set up: ${environment.server}`);
          return true;
        } catch (error) {
          const message = error instanceof SetupError ? error.message : `Doc Bridge: setting up the server failed: ${errorMessage(error)}`;
          this.log(message);
          void vscode.window.showErrorMessage(message, 'Show Output').then((choice) => {
            if (choice === 'Show Output') {
              this.output.show();
            }
          });
          return false;
        }
      },
    );
    if (ok) {
      this.lastNotified = undefined;
      await this.restart();
    }
  }

  private retireCurrent(): void {
    if (this.client instanceof DocBridgeLanguageClient) {
      this.client.retiring = true;
    }
  }

  private async doStop(): Promise<void> {
    this.retireCurrent();
    const client = this.client;
    this.client = undefined;
    if (client instanceof DocBridgeLanguageClient) {
      this.log('Stopping the language server');
      try {
        await client.settle();
        if (client.isRunning()) {
          await client.stop();
        }
      } catch (error) {
        this.log(`Stopping failed: ${errorMessage(error)}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }

  /** Shows the problem in the status bar, and as a notification unless this exact one was already shown
   * by an automatic start (a command the user runs always shows it again). */
  private reportProblem(problem: Problem, userInitiated: boolean): void {
    this.problem = problem;
    if (problem.kind === 'missing') {
      this.setStatus({ state: 'missing', command: problem.command });
    } else {
      this.setStatus({ state: 'failed', message: problem.message });
    }
    const key = JSON.stringify(problem);
    if (!userInitiated && this.lastNotified === key) {
      return;
    }
    this.lastNotified = key;
    if (problem.kind === 'missing') {
      void vscode.window
        .showErrorMessage(missingCommandMessage(problem.command, vscode.env.remoteName), 'How to install', 'Open Settings')
        .then((choice) => this.onProblemChoice(choice));
    } else {
      void vscode.window
        .showErrorMessage(startFailedMessage(problem.command, problem.message), 'Show Output', 'Open Settings')
        .then((choice) => this.onProblemChoice(choice));
    }
  }

  private async onProblemChoice(choice: string | undefined): Promise<void> {
    if (choice === 'How to install') {
      const readme = vscode.Uri.joinPath(this.context.extensionUri, 'README.md');
      try {
        await vscode.commands.executeCommand('markdown.showPreview', readme);
      } catch {
        await vscode.window.showTextDocument(readme);
      }
    } else if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'docbridge.server');
    } else if (choice === 'Show Output') {
      this.output.show();
    }
  }

  private reportCrashes(message: string): void {
    void vscode.window.showErrorMessage(message, 'Restart', 'Show Output').then((choice) => {
      if (choice === 'Restart') {
        void this.restart();
      } else if (choice === 'Show Output') {
        this.output.show();
      }
    });
  }

  /** The running client, or undefined after telling the user why there is none. */
  private async runningClient(): Promise<LanguageClient | undefined> {
    await this.lifecycle;
    const client = this.client;
    if (client !== undefined && client.isRunning()) {
      return client;
    }
    if (this.problem !== undefined) {
      this.reportProblem(this.problem, true);
      return undefined;
    }
    const choice = await vscode.window.showErrorMessage(
      'Doc Bridge: the language server is not running.',
      'Restart',
      'Show Output',
    );
    if (choice === 'Restart') {
      await this.restart();
      return this.client?.isRunning() ? this.client : undefined;
    }
    if (choice === 'Show Output') {
      this.output.show();
    }
    return undefined;
  }

  private execute(client: LanguageClient, command: string, args: unknown[], token?: vscode.CancellationToken): Promise<unknown> {
    const params = executeCommandParams(command, args);
    return token === undefined
      ? client.sendRequest(ExecuteCommandRequest.type, params)
      : client.sendRequest(ExecuteCommandRequest.type, params, token);
  }

  /** Ask the server for the doctor grade (without opening the report) and show it in the status bar. */
  private async refreshGrade(client: LanguageClient): Promise<void> {
    try {
      const grade = parseDoctorGrade(await this.execute(client, SERVER_COMMANDS.doctor, [{ show: false }]));
      if (this.client === client && grade !== undefined) {
        this.grade = grade;
        if (this.lastStatus !== undefined && this.lastStatus.state === 'ready') {
          this.setStatus(this.lastStatus);
        }
      }
    } catch (error) {
      this.log(`doctor: ${errorMessage(error)}`);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Commands

  showOutput(): void {
    this.output.show();
  }

  async search(): Promise<void> {
    const client = await this.runningClient();
    if (client === undefined) {
      return;
    }
    const picker = vscode.window.createQuickPick<SearchPickItem>();
    picker.title = 'Doc Bridge: Search';
    picker.placeholder = 'Search docs, modules, areas, packages, intents and changes';
    picker.matchOnDescription = true;
    picker.matchOnDetail = true;

    const latest = new LatestOnly();
    let cancellation: vscode.CancellationTokenSource | undefined;
    const run = async (value: string): Promise<void> => {
      cancellation?.cancel();
      cancellation?.dispose();
      cancellation = undefined;
      const ticket = latest.next();
      if (value.trim() === '') {
        picker.items = [];
        picker.busy = false;
        return;
      }
      const source = new vscode.CancellationTokenSource();
      cancellation = source;
      picker.busy = true;
      try {
        const response = await this.execute(client, SERVER_COMMANDS.search, searchArguments(value, SEARCH_LIMIT), source.token);
        if (!latest.isLatest(ticket)) {
          return;
        }
        const results = parseSearchResponse(response);
        picker.items = results.length > 0 ? results.map(toQuickPickItem) : [noResultsItem(value)];
      } catch (error) {
        if (latest.isLatest(ticket) && !source.token.isCancellationRequested) {
          this.log(`Search failed: ${errorMessage(error)}`);
          picker.items = [searchFailedItem(error)];
        }
      } finally {
        if (latest.isLatest(ticket)) {
          picker.busy = false;
        }
      }
    };
    const debounced = debounce((value: string) => void run(value), SEARCH_DEBOUNCE_MS);

    picker.onDidChangeValue((value) => debounced(value));
    picker.onDidAccept(() => {
      const result = picker.selectedItems[0]?.result;
      if (result !== undefined) {
        picker.hide();
        void this.openResult(result);
      }
    });
    picker.onDidHide(() => {
      debounced.cancel();
      latest.invalidate();
      cancellation?.cancel();
      cancellation?.dispose();
      picker.dispose();
    });

    // Start from the selected text, if any (one line).
    const editor = vscode.window.activeTextEditor;
    const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection).trim() : '';
    picker.show();
    if (selected !== '' && !selected.includes('\n') && selected.length <= 200) {
      picker.value = selected;
      void run(selected);
    }
  }

  private async openResult(result: SearchResult): Promise<void> {
    const target = resultTarget(result, folderRefs());
    if (target === undefined) {
      void vscode.window.showInformationMessage(`Doc Bridge: "${result.title || result.id}" has no file to open.`);
      return;
    }
    const uri = vscode.Uri.parse(target.uri);
    let stat: vscode.FileStat;
    try {
      stat = await vscode.workspace.fs.stat(uri);
    } catch {
      void vscode.window.showWarningMessage(`Doc Bridge: ${uri.scheme === 'file' ? uri.fsPath : uri.toString()} does not exist.`);
      return;
    }
    if (stat.type & vscode.FileType.Directory) {
      await vscode.commands.executeCommand('revealInExplorer', uri);
      return;
    }
    const selection = target.range === undefined ? undefined : toRange(target.range);
    const editor = await vscode.window.showTextDocument(uri, { selection, preview: false });
    if (selection !== undefined) {
      editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }

  async showHandoff(arg?: unknown): Promise<void> {
    let ref: string | undefined;
    if (typeof arg === 'string' && arg.trim() !== '') {
      ref = arg.trim();
    } else if (arg instanceof vscode.Uri) {
      ref = workspaceRelativePath(arg.toString(), folderRefs());
    }
    if (ref === undefined) {
      ref = await this.pickHandoffRef();
    }
    const args = ref === undefined ? undefined : handoffArguments(ref);
    if (ref === undefined || args === undefined) {
      return;
    }
    const client = await this.runningClient();
    if (client === undefined) {
      return;
    }
    let response: unknown;
    try {
      response = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Doc Bridge: handoff for ${ref}` },
        () => this.execute(client, SERVER_COMMANDS.handoff, args),
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`Doc Bridge: ${errorMessage(error)}`);
      return;
    }
    const uri = vscode.Uri.from({ scheme: HANDOFF_SCHEME, path: handoffDocumentPath(ref) });
    this.handoffs.set(uri, handoffMarkdown(response, ref));
    let document = await vscode.workspace.openTextDocument(uri);
    if (document.languageId !== 'markdown') {
      document = await vscode.languages.setTextDocumentLanguage(document, 'markdown');
    }
    await vscode.window.showTextDocument(document, { preview: false });
    void vscode.window
      .showInformationMessage(`Doc Bridge: handoff for ${ref}`, 'Open Preview')
      .then((choice) => (choice === 'Open Preview' ? vscode.commands.executeCommand('markdown.showPreview', uri) : undefined));
  }

  private async pickHandoffRef(): Promise<string | undefined> {
    const editor = vscode.window.activeTextEditor;
    const active =
      editor !== undefined && editor.document.uri.scheme === 'file'
        ? workspaceRelativePath(editor.document.uri.toString(), folderRefs())
        : undefined;
    if (active !== undefined) {
      const items: Array<vscode.QuickPickItem & { ref?: string }> = [
        { label: `$(file) ${active}`, description: 'active file', ref: active },
        { label: '$(edit) Enter a reference…', description: 'entity id, ownership id, alias or path' },
      ];
      const picked = await vscode.window.showQuickPick(items, { title: 'Doc Bridge: Show Handoff', placeHolder: 'Show the handoff for…' });
      if (picked === undefined) {
        return undefined;
      }
      if (picked.ref !== undefined) {
        return picked.ref;
      }
    }
    const value = await vscode.window.showInputBox({
      title: 'Doc Bridge: Show Handoff',
      prompt: 'An entity id, ownership id, alias or repository-relative path',
      placeHolder: 'src/billing/invoice.ts',
      value: active ?? '',
      ignoreFocusOut: true,
      validateInput: (text) => (text.trim() === '' ? 'Enter a reference' : undefined),
    });
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  async reindex(): Promise<void> {
    const client = await this.runningClient();
    if (client === undefined) {
      return;
    }
    try {
      const response = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Doc Bridge: reindexing…' },
        () => this.execute(client, SERVER_COMMANDS.reindex, []),
      );
      void vscode.window.showInformationMessage(formatReindex(response));
    } catch (error) {
      void vscode.window.showErrorMessage(`Doc Bridge: reindex failed: ${errorMessage(error)}`);
    }
  }

  /** Pick a template (and, for area or ownership, optionally one page), then write the pages the server renders. */
  async render(): Promise<void> {
    const client = await this.runningClient();
    if (client === undefined) {
      return;
    }
    const template = await vscode.window.showQuickPick([...RENDER_TEMPLATES], {
      title: 'Doc Bridge: Render Documentation',
      placeHolder: 'Template to render',
    });
    if (template === undefined) {
      return;
    }
    let key: string | undefined;
    if (template === 'area' || template === 'ownership') {
      key = await vscode.window.showInputBox({
        title: `Doc Bridge: Render ${template}`,
        prompt: template === 'area' ? 'Area path (empty: every area)' : 'Ownership record id (empty: every record)',
      });
      if (key === undefined) {
        return;
      }
    }
    try {
      const response = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Doc Bridge: rendering ${template}…` },
        () => this.execute(client, SERVER_COMMANDS.render, renderArguments(template, key)),
      );
      void vscode.window.showInformationMessage(formatRender(response));
    } catch (error) {
      void vscode.window.showErrorMessage(`Doc Bridge: render failed: ${errorMessage(error)}`);
    }
  }

  async dispose(): Promise<void> {
    await this.lifecycle;
    await this.doStop();
  }
}

let instance: DocBridge | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const docBridge = new DocBridge(context);
  instance = docBridge;
  context.subscriptions.push(
    vscode.commands.registerCommand('docbridge.searchWorkspace', () => docBridge.search()),
    vscode.commands.registerCommand('docbridge.showHandoff', (arg?: unknown) => docBridge.showHandoff(arg)),
    vscode.commands.registerCommand('docbridge.reindexWorkspace', () => docBridge.reindex()),
    vscode.commands.registerCommand('docbridge.showOutput', () => docBridge.showOutput()),
    vscode.commands.registerCommand('docbridge.renderDocumentation', () => docBridge.render()),
    vscode.commands.registerCommand('docbridge.setUpServer', () => docBridge.setUpServer()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('docbridge.server')) {
        void docBridge.restart();
      }
    }),
    // Workspace settings for the server command apply only once the workspace is trusted.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void docBridge.restart()),
  );
  void docBridge.start();
}

export function deactivate(): Promise<void> | undefined {
  const docBridge = instance;
  instance = undefined;
  return docBridge?.dispose();
}

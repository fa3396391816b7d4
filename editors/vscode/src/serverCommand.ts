// How the language server is started: the command and arguments from the settings, finding the
// executable on PATH, and recognising "command not found". Pure module: no `vscode` import.

import * as fs from 'fs';
import * as path from 'path';

import { DEFAULT_SERVER_COMMAND } from './protocol';

export interface ServerCommand {
  command: string;
  args: string[];
}

export interface ServerSettings {
  /** `docbridge.server.command` as read from the configuration (any type: settings are user-edited JSON). */
  command?: unknown;
  /** `docbridge.server.args`. */
  args?: unknown;
}

export interface CommandContext {
  /** True when the path names an existing file; used to keep a path with spaces whole. */
  exists?: (candidate: string) => boolean;
  /** Replaces `${workspaceFolder}`; left as is when undefined. */
  workspaceFolder?: string;
  /** Replaces a leading `~`; left as is when undefined. */
  home?: string;
}

/**
 * Splits a command line into words the way a POSIX shell would for the simple cases: whitespace
 * separates words, single and double quotes group, a backslash escapes the next character outside
 * single quotes (except before a character that is not special, so Windows paths survive).
 * Returns undefined when a quote is not closed.
 */
export function splitCommandLine(line: string): string[] | undefined {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote !== undefined) {
      if (ch === quote) {
        quote = undefined;
      } else if (ch === '\\' && quote === '"' && (line[i + 1] === '"' || line[i + 1] === '\\')) {
        current += line[++i];
      } else {
        current += ch;
      }
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) {
        words.push(current);
        current = '';
        inWord = false;
      }
    } else if (ch === '\\' && i + 1 < line.length && /[\s"'\\]/.test(line[i + 1])) {
      current += line[++i];
      inWord = true;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote !== undefined) {
    return undefined;
  }
  if (inWord) {
    words.push(current);
  }
  return words;
}

/** Expands `${workspaceFolder}`, `${userHome}` and a leading `~` / `~/`. */
export function expandVariables(value: string, context: CommandContext): string {
  let result = value;
  if (context.workspaceFolder !== undefined) {
    result = result.split('${workspaceFolder}').join(context.workspaceFolder);
  }
  if (context.home !== undefined) {
    result = result.split('${userHome}').join(context.home);
    if (result === '~') {
      result = context.home;
    } else if (result.startsWith('~/') || result.startsWith('~\\')) {
      result = path.join(context.home, result.slice(2));
    }
  }
  return result;
}

/**
 * The server command and arguments from `docbridge.server.command` / `docbridge.server.args`.
 *
 * - The command is trimmed; a missing, non-string or blank value means `docbridge-lsp`.
 * - `args` keeps only strings; anything else means no arguments.
 * - When `args` is empty and the command contains whitespace, it is split into command and
 *   arguments (quotes group words: `"/opt/my tools/docbridge-lsp" --flag`), unless the whole value
 *   names an existing file (an unquoted path with spaces keeps working) or a quote is left open.
 *   When `args` is given the command is never split: it is taken verbatim as the executable.
 * - `${workspaceFolder}`, `${userHome}` and a leading `~` are expanded in the command and the args.
 */
export function serverCommandFromSettings(settings: ServerSettings, context: CommandContext = {}): ServerCommand {
  const raw = typeof settings.command === 'string' ? settings.command.trim() : '';
  let command = raw === '' ? DEFAULT_SERVER_COMMAND : raw;
  let args = Array.isArray(settings.args) ? settings.args.filter((arg): arg is string => typeof arg === 'string') : [];

  if (args.length === 0 && /\s/.test(command)) {
    const exists = context.exists ?? (() => false);
    if (!exists(expandVariables(command, context))) {
      const words = splitCommandLine(command);
      if (words !== undefined && words.length > 0 && words[0] !== '') {
        command = words[0];
        args = words.slice(1);
      }
    }
  } else if (/^(["']).*\1$/.test(command)) {
    // A command quoted as a whole ("C:\Program Files\...\docbridge-lsp.exe") loses its quotes.
    command = command.slice(1, -1);
  }

  return {
    command: expandVariables(command, context),
    args: args.map((arg) => expandVariables(arg, context)),
  };
}

export interface ResolveOptions {
  /** PATH to search; defaults to process.env.PATH. */
  pathEnv?: string;
  /** Windows executable extensions; defaults to process.env.PATHEXT or `.EXE;.CMD;.BAT;.COM`. */
  pathExt?: string;
  platform?: NodeJS.Platform;
  /** Directory a relative path (`.venv/bin/docbridge-lsp`) is resolved against. */
  cwd?: string;
  /** Test hook: is this an executable file? */
  isExecutable?: (candidate: string) => boolean;
}

export function isExecutableFile(candidate: string, platform: NodeJS.Platform = process.platform): boolean {
  try {
    const stat = fs.statSync(candidate);
    if (!stat.isFile()) {
      return false;
    }
    if (platform === 'win32') {
      return true;
    }
    fs.accessSync(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The absolute path of the executable `command` names, or undefined when there is none: a command
 * containing a path separator is taken relative to `cwd`, a bare name is searched on PATH (with the
 * PATHEXT extensions on Windows).
 */
export function resolveExecutable(command: string, options: ResolveOptions = {}): string | undefined {
  const platform = options.platform ?? process.platform;
  const pathApi = platform === 'win32' ? path.win32 : path.posix;
  const isExecutable = options.isExecutable ?? ((candidate: string) => isExecutableFile(candidate, platform));
  const extensions =
    platform === 'win32'
      ? ['', ...(options.pathExt ?? process.env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((ext) => ext !== '')]
      : [''];
  const withExtensions = (base: string): string | undefined => {
    for (const ext of extensions) {
      const candidate = base + ext;
      if (isExecutable(candidate)) {
        return candidate;
      }
    }
    return undefined;
  };

  if (command === '') {
    return undefined;
  }
  const hasSeparator = command.includes('/') || (platform === 'win32' && command.includes('\\'));
  if (hasSeparator || pathApi.isAbsolute(command)) {
    const absolute = pathApi.isAbsolute(command) ? command : pathApi.resolve(options.cwd ?? process.cwd(), command);
    return withExtensions(absolute);
  }
  const pathEnv = options.pathEnv ?? process.env.PATH ?? '';
  for (const dir of pathEnv.split(pathApi.delimiter)) {
    if (dir === '') {
      continue;
    }
    const found = withExtensions(pathApi.join(dir, command));
    if (found !== undefined) {
      return found;
    }
  }
  return undefined;
}

/** Where a workspace folder's own virtual environment keeps the server (`python -m venv .venv` and
 * `pip install` there): `.venv/bin/docbridge-lsp`, on Windows `.venv\Scripts\docbridge-lsp` (with the
 * PATHEXT extensions tried by resolveExecutable). */
export function venvServerPath(folder: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32'
    ? path.win32.join(folder, '.venv', 'Scripts', DEFAULT_SERVER_COMMAND)
    : path.posix.join(folder, '.venv', 'bin', DEFAULT_SERVER_COMMAND);
}

export interface FindServerOptions extends ResolveOptions {
  /** File-system paths of the workspace folders, in order. */
  folders?: string[];
  /** Whether the workspace is trusted: an untrusted workspace's own files are never run. */
  trusted?: boolean;
}

export interface FoundServer {
  executable: string;
  /** True when the configured command was not found and the workspace's `.venv` had the server. */
  fromWorkspaceVenv: boolean;
}

/**
 * The executable that starts the server: the configured command (a path, or a name on PATH); when that is
 * the default `docbridge-lsp` and PATH does not have it, the first workspace folder whose `.venv` has it,
 * provided the workspace is trusted. A command the user set explicitly is never replaced.
 */
export function findServerExecutable(command: string, options: FindServerOptions = {}): FoundServer | undefined {
  const configured = resolveExecutable(command, options);
  if (configured !== undefined) {
    return { executable: configured, fromWorkspaceVenv: false };
  }
  if (command !== DEFAULT_SERVER_COMMAND || options.trusted !== true) {
    return undefined;
  }
  for (const folder of options.folders ?? []) {
    const found = resolveExecutable(venvServerPath(folder, options.platform ?? process.platform), options);
    if (found !== undefined) {
      return { executable: found, fromWorkspaceVenv: true };
    }
  }
  return undefined;
}

/**
 * True when an error says the executable does not exist: a spawn error with code ENOENT, or the
 * string vscode-languageclient rejects with (`Launching server using command X failed. Error: spawn X ENOENT`).
 */
export function isMissingCommandError(error: unknown): boolean {
  if (error === null || error === undefined) {
    return false;
  }
  if (typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') {
      return true;
    }
    const message = (error as { message?: unknown }).message;
    return typeof message === 'string' && /\bENOENT\b/.test(message);
  }
  return typeof error === 'string' && /\bENOENT\b/.test(error);
}

/**
 * The "not found" notification. `remoteName` is `vscode.env.remoteName`: in a remote window (SSH, WSL, a
 * dev container, Codespaces, code-server) the extension runs on the remote machine, and
 * `docbridge.server.command` (a machine-overridable setting) is not read from the local User settings, so
 * a path set there is silently ignored; the message says where it has to go instead.
 */
export function missingCommandMessage(command: string, remoteName?: string): string {
  const message =
    `Doc Bridge: the language server command \`${command}\` was not found. ` +
    'Install Doc Bridge (`pip install -e .` in its repository) or set docbridge.server.command to its path.';
  if (remoteName === undefined || remoteName === '') {
    return message;
  }
  return (
    `${message} This is a remote window (${remoteName}): set it in the Remote settings ` +
    '(Preferences: Open Remote Settings) or the workspace settings; your User settings do not apply here.'
  );
}

/** A readable reason for a failed start: JSON-RPC's words for a closed connection mean the process exited. */
export function startFailureDetail(error: string): string {
  if (/connection got disposed|connection is closed|connection is disposed|stream was destroyed|EPIPE/i.test(error)) {
    return 'it exited during start-up';
  }
  return error;
}

export function startFailedMessage(command: string, detail: string): string {
  const reason = detail.trim() === '' ? '' : `: ${detail.trim().replace(/\s+/g, ' ')}`;
  return `Doc Bridge: the language server \`${command}\` could not be started${reason}. See Doc Bridge: Show Output.`;
}

/** Windows batch files need a shell to run; everything else is spawned directly. */
export function needsShell(executable: string, platform: NodeJS.Platform = process.platform): boolean {
  return platform === 'win32' && /\.(cmd|bat)$/i.test(executable);
}

/**
 * How often a server that crashed after a successful start is restarted: at most `maxRestarts` times
 * within `windowMs` (vscode-languageclient's default policy: 4 restarts in 3 minutes).
 */
export class RestartBudget {
  private readonly crashes: number[] = [];

  constructor(
    readonly maxRestarts = 4,
    readonly windowMs = 3 * 60 * 1000,
  ) {}

  /** Records a crash at `now` and tells whether to restart. */
  allowRestart(now: number): boolean {
    this.crashes.push(now);
    while (this.crashes.length > 0 && now - this.crashes[0] > this.windowMs) {
      this.crashes.shift();
    }
    return this.crashes.length <= this.maxRestarts;
  }
}

export function crashedMessage(budget: RestartBudget): string {
  const minutes = Math.round(budget.windowMs / 60000);
  return (
    `Doc Bridge: the language server crashed ${budget.maxRestarts + 1} times in ${minutes} minutes ` +
    'and will not be restarted. See Doc Bridge: Show Output.'
  );
}

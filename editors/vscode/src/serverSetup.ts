// Setting the server up when none is configured or found: the Doc Bridge wheel shipped inside the .vsix
// (server/docbridge-*.whl) is installed into a private virtual environment in the extension's global storage,
// created with a Python 3.11 or newer found on the machine (the one the Python extension selected first). Its
// dependencies come from the package index pip is configured with. Everything here is pure or takes the
// process runner as an argument, so that it is unit-tested without VS Code.

import * as path from 'path';

export const MIN_PYTHON: readonly [number, number] = [3, 11];
export const INSTALLED_MARKER = 'installed.json';
const VERSION_PROBE = 'import sys; print("%d.%d.%d" % sys.version_info[:3])';
const SHOWN_OUTPUT_LINES = 12;

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the process could not be started at all (ENOENT, say). */
  error?: string;
}

export type Runner = (command: string, args: string[]) => Promise<RunResult>;

export interface PythonCandidate {
  command: string;
  args: string[];
}

export interface ManagedEnvironment {
  /** The virtual environment's folder. */
  root: string;
  python: string;
  server: string;
  marker: string;
}

/** The private environment kept in the extension's global storage. */
export function managedEnvironment(storage: string, platform: NodeJS.Platform = process.platform): ManagedEnvironment {
  const api = platform === 'win32' ? path.win32 : path.posix;
  const root = api.join(storage, 'server-env');
  const bin = platform === 'win32' ? api.join(root, 'Scripts') : api.join(root, 'bin');
  const exe = platform === 'win32' ? '.exe' : '';
  return {
    root,
    python: api.join(bin, `python${exe}`),
    server: api.join(bin, `docbridge-lsp${exe}`),
    marker: api.join(root, INSTALLED_MARKER),
  };
}

/** The newest Doc Bridge wheel among the names of the extension's `server/` folder, if any. */
export function bundledWheel(names: readonly string[]): string | undefined {
  const wheels = names.filter((name) => /^docbridge-[^-]+-.*\.whl$/.test(name));
  wheels.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return wheels.at(-1);
}

/** Pythons to try, in order: the one the Python extension selected, then the versioned names, then the plain. */
export function pythonCandidates(platform: NodeJS.Platform = process.platform, selected?: string): PythonCandidate[] {
  const out: PythonCandidate[] = [];
  if (selected !== undefined && selected.trim() !== '') {
    out.push({ command: selected, args: [] });
  }
  if (platform === 'win32') {
    out.push({ command: 'py', args: ['-3'] }, { command: 'python', args: [] }, { command: 'python3', args: [] });
  } else {
    for (const minor of [14, 13, 12, 11]) {
      out.push({ command: `python3.${minor}`, args: [] });
    }
    out.push({ command: 'python3', args: [] }, { command: 'python', args: [] });
  }
  return out;
}

/** `[major, minor, patch]` from the version probe's output, undefined when it is not a version. */
export function parseVersion(output: string): [number, number, number] | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)\s*$/.exec(output.trim());
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3])];
}

export function isSuitable(version: readonly number[]): boolean {
  return version[0] > MIN_PYTHON[0] || (version[0] === MIN_PYTHON[0] && version[1] >= MIN_PYTHON[1]);
}

export interface FoundPython {
  candidate: PythonCandidate;
  version: string;
}

export interface PythonSearch {
  found?: FoundPython;
  /** What each candidate that was not taken turned out to be (`python3: 3.9.2`, `python3.12: not found`). */
  tried: string[];
}

export async function findPython(candidates: readonly PythonCandidate[], run: Runner): Promise<PythonSearch> {
  const tried: string[] = [];
  for (const candidate of candidates) {
    const label = [candidate.command, ...candidate.args].join(' ');
    const result = await run(candidate.command, [...candidate.args, '-c', VERSION_PROBE]);
    const version = result.code === 0 ? parseVersion(result.stdout) : undefined;
    if (version === undefined) {
      if (result.error === undefined || !/ENOENT/.test(result.error)) {
        tried.push(`${label}: did not run (${(result.error ?? lastLines(result.stderr, 1)) || `exit ${result.code}`})`);
      }
      continue;
    }
    if (isSuitable(version)) {
      return { found: { candidate, version: version.join('.') }, tried };
    }
    tried.push(`${label}: ${version.join('.')}`);
  }
  return { tried };
}

export function noPythonMessage(tried: readonly string[]): string {
  const seen = tried.length > 0 ? ` Found: ${tried.join('; ')}.` : ' None was found on PATH.';
  return (
    `Doc Bridge: setting up the language server needs Python ${MIN_PYTHON.join('.')} or newer.${seen} ` +
    'Install one (or select it with the Python extension), or set docbridge.server.command to a Doc Bridge server.'
  );
}

export class SetupError extends Error {}

/** The last `count` non-empty lines of a process's output, joined by spaces. */
export function lastLines(text: string, count: number = SHOWN_OUTPUT_LINES): string {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(-count)
    .join(' ');
}

export interface SetupSteps {
  python: PythonCandidate;
  environment: ManagedEnvironment;
  wheel: string;
  run: Runner;
  /** Removes a folder and everything in it (an earlier, half-made environment). */
  remove: (folder: string) => Promise<void>;
  writeFile: (file: string, text: string) => Promise<void>;
  progress: (message: string) => void;
  log: (message: string) => void;
}

/** Creates the environment afresh and installs the wheel with its dependencies; the marker is written last,
 * so that an interrupted set-up is never taken for a finished one. */
export async function setUpServer(steps: SetupSteps): Promise<void> {
  const { python, environment, wheel, run } = steps;
  steps.progress('creating a private Python environment');
  await steps.remove(environment.root);
  const venv = await run(python.command, [...python.args, '-m', 'venv', environment.root]);
  steps.log(`${[python.command, ...python.args].join(' ')} -m venv ${environment.root}: exit ${venv.code}`);
  if (venv.code !== 0) {
    const detail = lastLines(venv.error ?? venv.stderr, 3);
    const hint = /ensurepip|venv/i.test(detail) ? ' (on Debian and Ubuntu the python3-venv package provides it)' : '';
    throw new SetupError(`Doc Bridge: creating a Python environment with ${python.command} failed: ${detail}${hint}.`);
  }
  steps.progress('installing Doc Bridge and its dependencies');
  const pip = await run(environment.python, [
    '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', wheel,
  ]);
  steps.log(pip.stdout);
  steps.log(pip.stderr);
  if (pip.code !== 0) {
    throw new SetupError(
      `Doc Bridge: installing the language server failed (pip exit ${pip.code}): ${lastLines(pip.error ?? pip.stderr, 3)} ` +
        'See Doc Bridge: Show Output for pip\'s whole output.',
    );
  }
  await steps.writeFile(environment.marker, JSON.stringify({ wheel: path.basename(wheel) }) + '\n');
}

/** Whether the environment holds the given wheel's server (the marker names the wheel it was made from). */
export function installedWheel(markerText: string | undefined): string | undefined {
  if (markerText === undefined) {
    return undefined;
  }
  try {
    const parsed = JSON.parse(markerText) as { wheel?: unknown };
    return typeof parsed.wheel === 'string' ? parsed.wheel : undefined;
  } catch {
    return undefined;
  }
}

export const SET_UP_CHOICE = 'Set Up';

export function offerMessage(): string {
  return (
    'Doc Bridge: no language server was found. Set one up in a private environment for this extension? ' +
    `It needs Python ${MIN_PYTHON.join('.')} or newer and downloads Doc Bridge's dependencies.`
  );
}

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  bundledWheel,
  findPython,
  installedWheel,
  isSuitable,
  managedEnvironment,
  noPythonMessage,
  parseVersion,
  pythonCandidates,
  RunResult,
  SetupError,
  setUpServer,
} from '../serverSetup';

/** A runner that answers from a table keyed by the command line, and records what it ran. */
function runner(answers: Record<string, Partial<RunResult>>): { run: (c: string, a: string[]) => Promise<RunResult>; ran: string[] } {
  const ran: string[] = [];
  return {
    ran,
    run: async (command, args) => {
      const line = [command, ...args].join(' ');
      ran.push(line);
      const key = Object.keys(answers).find((prefix) => line.startsWith(prefix));
      if (key === undefined) {
        return { code: null, stdout: '', stderr: '', error: `spawn ${command} ENOENT` };
      }
      return { code: 0, stdout: '', stderr: '', ...answers[key] };
    },
  };
}

describe('the private environment', () => {
  test('lives in the global storage, with the server beside its python', () => {
    assert.deepEqual(managedEnvironment('/store', 'linux'), {
      root: '/store/server-env',
      python: '/store/server-env/bin/python',
      server: '/store/server-env/bin/docbridge-lsp',
      marker: '/store/server-env/installed.json',
    });
    assert.equal(managedEnvironment('C:\\store', 'win32').server, 'C:\\store\\server-env\\Scripts\\docbridge-lsp.exe');
  });

  test('the newest shipped wheel is taken, by version and not by letters', () => {
    assert.equal(bundledWheel(['README.md', 'docbridge-0.9.0-py3-none-any.whl', 'docbridge-0.10.0-py3-none-any.whl']),
      'docbridge-0.10.0-py3-none-any.whl');
    assert.equal(bundledWheel(['other-1.0-py3-none-any.whl']), undefined);
    assert.equal(bundledWheel([]), undefined);
  });

  test('the marker names the wheel; anything else is a half-made environment', () => {
    assert.equal(installedWheel('{"wheel": "docbridge-0.1.0-py3-none-any.whl"}\n'), 'docbridge-0.1.0-py3-none-any.whl');
    assert.equal(installedWheel('{"wheel": 3}'), undefined);
    assert.equal(installedWheel('{not json'), undefined);
    assert.equal(installedWheel(undefined), undefined);
  });
});

describe('finding a Python', () => {
  test('the selected interpreter first, then the newest versioned names, then the plain ones', () => {
    assert.deepEqual(pythonCandidates('linux', '/opt/py/bin/python').map((c) => c.command),
      ['/opt/py/bin/python', 'python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3', 'python']);
    assert.deepEqual(pythonCandidates('win32').map((c) => [c.command, ...c.args].join(' ')), ['py -3', 'python', 'python3']);
  });

  test('versions are read strictly and 3.11 is the floor', () => {
    assert.deepEqual(parseVersion('3.12.4\n'), [3, 12, 4]);
    assert.equal(parseVersion('Python 3.12.4'), undefined);
    assert.ok(isSuitable([3, 11, 0]) && isSuitable([4, 0, 0]) && !isSuitable([3, 10, 14]) && !isSuitable([2, 7, 18]));
  });

  test('a missing name is skipped quietly; an old or broken one is named in the message', async () => {
    const { run, ran } = runner({
      'python3.12 ': { stdout: '3.12.1\n' },
      'python3 ': { stdout: '3.9.2\n' },
      'python3.13 ': { code: 1, stderr: 'Traceback\nSyntaxError: bad\n' },
    });
    const found = await findPython(pythonCandidates('linux'), run);
    assert.deepEqual(found.found, { candidate: { command: 'python3.12', args: [] }, version: '3.12.1' });
    assert.deepEqual(found.tried, ['python3.13: did not run (SyntaxError: bad)']);
    assert.equal(ran.length, 3); // python3.14 (missing), python3.13 (broken), python3.12 (taken)
    const none = await findPython(pythonCandidates('linux'), runner({ 'python3 ': { stdout: '3.9.2' } }).run);
    assert.equal(none.found, undefined);
    assert.equal(noPythonMessage(none.tried),
      'Doc Bridge: setting up the language server needs Python 3.11 or newer. Found: python3: 3.9.2. Install one ' +
        '(or select it with the Python extension), or set docbridge.server.command to a Doc Bridge server.');
    assert.match(noPythonMessage([]), /None was found on PATH\./);
  });
});

describe('setting up', () => {
  const environment = managedEnvironment('/store', 'linux');

  async function attempt(answers: Record<string, Partial<RunResult>>): Promise<{ error?: unknown; ran: string[]; written: string[]; removed: string[] }> {
    const { run, ran } = runner(answers);
    const written: string[] = [];
    const removed: string[] = [];
    try {
      await setUpServer({
        python: { command: 'python3', args: [] },
        environment,
        wheel: '/ext/server/docbridge-0.1.0-py3-none-any.whl',
        run,
        remove: async (folder) => void removed.push(folder),
        writeFile: async (file, text) => void written.push(`${file}: ${text}`),
        progress: () => undefined,
        log: () => undefined,
      });
      return { ran, written, removed };
    } catch (error) {
      return { error, ran, written, removed };
    }
  }

  test('a fresh environment, the wheel with its dependencies, then the marker', async () => {
    const done = await attempt({ 'python3 -m venv': {}, '/store/server-env/bin/python -m pip': { stdout: 'Successfully installed' } });
    assert.equal(done.error, undefined);
    assert.deepEqual(done.removed, ['/store/server-env']);
    assert.deepEqual(done.ran, [
      'python3 -m venv /store/server-env',
      '/store/server-env/bin/python -m pip install --disable-pip-version-check --no-input /ext/server/docbridge-0.1.0-py3-none-any.whl',
    ]);
    assert.deepEqual(done.written, ['/store/server-env/installed.json: {"wheel":"docbridge-0.1.0-py3-none-any.whl"}\n']);
  });

  test('a failed step is a sentence with the end of its output, and no marker is written', async () => {
    const venv = await attempt({ 'python3 -m venv': { code: 1, stderr: 'The virtual environment was not created successfully because ensurepip is not available.' } });
    assert.ok(venv.error instanceof SetupError);
    assert.match(String((venv.error as Error).message), /creating a Python environment with python3 failed: The virtual environment was not created successfully because ensurepip is not available\. \(on Debian and Ubuntu the python3-venv package provides it\)\./);
    assert.deepEqual(venv.written, []);
    const pip = await attempt({
      'python3 -m venv': {},
      '/store/server-env/bin/python -m pip': { code: 1, stderr: 'Collecting pydantic\nERROR: Could not find a version that satisfies the requirement pydantic>=2.14.4\nERROR: No matching distribution found for pydantic>=2.14.4\n' },
    });
    assert.ok(pip.error instanceof SetupError);
    assert.match(String((pip.error as Error).message), /installing the language server failed \(pip exit 1\): Collecting pydantic .*No matching distribution found for pydantic>=2\.14\.4 See Doc Bridge: Show Output/);
    assert.deepEqual(pip.written, []);
  });
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  expandVariables,
  findServerExecutable,
  isExecutableFile,
  isMissingCommandError,
  missingCommandMessage,
  needsShell,
  resolveExecutable,
  serverCommandFromSettings,
  splitCommandLine,
  RestartBudget,
  crashedMessage,
  startFailedMessage,
  startFailureDetail,
  venvServerPath,
} from '../serverCommand';

describe('serverCommandFromSettings', () => {
  test('defaults to docbridge-lsp with no arguments', () => {
    assert.deepEqual(serverCommandFromSettings({}), { command: 'docbridge-lsp', args: [] });
    assert.deepEqual(serverCommandFromSettings({ command: '   ', args: [] }), { command: 'docbridge-lsp', args: [] });
    assert.deepEqual(serverCommandFromSettings({ command: 42, args: 'nope' }), { command: 'docbridge-lsp', args: [] });
  });

  test('trims the command and keeps only string arguments', () => {
    assert.deepEqual(serverCommandFromSettings({ command: '  /opt/bin/docbridge-lsp\n', args: ['--log', 3, 'debug', null] }), {
      command: '/opt/bin/docbridge-lsp',
      args: ['--log', 'debug'],
    });
  });

  test('splits a command line when args is empty', () => {
    assert.deepEqual(serverCommandFromSettings({ command: 'python3 -m docbridge.lsp.server', args: [] }), {
      command: 'python3',
      args: ['-m', 'docbridge.lsp.server'],
    });
  });

  test('quotes keep a path with spaces together when splitting', () => {
    assert.deepEqual(serverCommandFromSettings({ command: '"/opt/my tools/docbridge-lsp" --verbose' }), {
      command: '/opt/my tools/docbridge-lsp',
      args: ['--verbose'],
    });
  });

  test('does not split when args is given: the command is the executable, verbatim', () => {
    assert.deepEqual(serverCommandFromSettings({ command: '/opt/my tools/docbridge-lsp', args: ['--x'] }), {
      command: '/opt/my tools/docbridge-lsp',
      args: ['--x'],
    });
    assert.deepEqual(serverCommandFromSettings({ command: '"C:\\Program Files\\db\\docbridge-lsp.exe"', args: ['-v'] }), {
      command: 'C:\\Program Files\\db\\docbridge-lsp.exe',
      args: ['-v'],
    });
  });

  test('does not split a value that names an existing file', () => {
    const exists = (candidate: string) => candidate === '/Users/Jane Doe/.venv/bin/docbridge-lsp';
    assert.deepEqual(serverCommandFromSettings({ command: '/Users/Jane Doe/.venv/bin/docbridge-lsp' }, { exists }), {
      command: '/Users/Jane Doe/.venv/bin/docbridge-lsp',
      args: [],
    });
  });

  test('an unclosed quote is not split', () => {
    assert.deepEqual(serverCommandFromSettings({ command: '"/opt/a b/docbridge-lsp' }), {
      command: '"/opt/a b/docbridge-lsp',
      args: [],
    });
  });

  test('expands ${workspaceFolder} and ~ in the command and the arguments', () => {
    const context = { workspaceFolder: '/work/acme', home: '/home/me' };
    assert.deepEqual(
      serverCommandFromSettings({ command: '${workspaceFolder}/.venv/bin/docbridge-lsp', args: ['--root', '${workspaceFolder}'] }, context),
      { command: '/work/acme/.venv/bin/docbridge-lsp', args: ['--root', '/work/acme'] },
    );
    assert.deepEqual(serverCommandFromSettings({ command: '~/.local/bin/docbridge-lsp' }, context), {
      command: path.join('/home/me', '.local/bin/docbridge-lsp'),
      args: [],
    });
  });
});

describe('splitCommandLine / expandVariables', () => {
  test('whitespace, quotes and escapes', () => {
    assert.deepEqual(splitCommandLine('  a   b\tc '), ['a', 'b', 'c']);
    assert.deepEqual(splitCommandLine(`a 'b c' "d \\"e\\"" f\\ g`), ['a', 'b c', 'd "e"', 'f g']);
    assert.deepEqual(splitCommandLine('""'), ['']);
    assert.deepEqual(splitCommandLine(''), []);
    assert.equal(splitCommandLine("a 'b"), undefined);
  });
  test('Windows paths keep their backslashes', () => {
    assert.deepEqual(splitCommandLine('C:\\tools\\docbridge-lsp.exe --x'), ['C:\\tools\\docbridge-lsp.exe', '--x']);
  });
  test('variables are left alone when unknown', () => {
    assert.equal(expandVariables('${workspaceFolder}/x', {}), '${workspaceFolder}/x');
    assert.equal(expandVariables('~', { home: '/h' }), '/h');
    assert.equal(expandVariables('a~b', { home: '/h' }), 'a~b');
    assert.equal(expandVariables('${userHome}/bin', { home: '/h' }), '/h/bin');
  });
});

describe('resolveExecutable (real files)', () => {
  let dir: string;
  let bin: string;
  let tool: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docbridge-vscode-'));
    bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    tool = path.join(bin, 'docbridge-lsp');
    fs.writeFileSync(tool, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'not-executable'), 'x', { mode: 0o644 });
    fs.mkdirSync(path.join(bin, 'a-directory'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('finds a bare name on PATH', { skip: process.platform === 'win32' }, () => {
    assert.equal(resolveExecutable('docbridge-lsp', { pathEnv: ['/nonexistent', bin].join(path.delimiter) }), tool);
  });
  test('a name not on PATH is not found', () => {
    assert.equal(resolveExecutable('docbridge-lsp', { pathEnv: '/nonexistent' }), undefined);
    assert.equal(resolveExecutable('docbridge-lsp', { pathEnv: '' }), undefined);
    assert.equal(resolveExecutable('', { pathEnv: bin }), undefined);
  });
  test('files without an execute bit do not count', { skip: process.platform === 'win32' }, () => {
    assert.equal(resolveExecutable('not-executable', { pathEnv: bin }), undefined);
  });
  test('directories do not count', () => {
    assert.equal(resolveExecutable('a-directory', { pathEnv: bin }), undefined);
    assert.equal(isExecutableFile(bin), false);
  });
  test('absolute and relative paths skip PATH; relative ones resolve against cwd', { skip: process.platform === 'win32' }, () => {
    assert.equal(resolveExecutable(tool, { pathEnv: '' }), tool);
    assert.equal(resolveExecutable('bin/docbridge-lsp', { pathEnv: '', cwd: dir }), tool);
    assert.equal(resolveExecutable('./bin/docbridge-lsp', { pathEnv: bin, cwd: '/' }), undefined);
  });
  test('Windows: PATHEXT extensions are tried', () => {
    const seen: string[] = [];
    const found = resolveExecutable('docbridge-lsp', {
      platform: 'win32',
      pathEnv: 'C:\\Python\\Scripts;C:\\other',
      pathExt: '.COM;.EXE',
      isExecutable: (candidate) => {
        seen.push(candidate);
        return candidate === 'C:\\other\\docbridge-lsp.EXE';
      },
    });
    assert.equal(found, 'C:\\other\\docbridge-lsp.EXE');
    assert.deepEqual(seen.slice(0, 3), ['C:\\Python\\Scripts\\docbridge-lsp', 'C:\\Python\\Scripts\\docbridge-lsp.COM', 'C:\\Python\\Scripts\\docbridge-lsp.EXE']);
  });
  test('Windows: a backslash path is a path, not a PATH lookup', () => {
    const found = resolveExecutable('.venv\\Scripts\\docbridge-lsp.exe', {
      platform: 'win32',
      cwd: 'C:\\repo',
      pathExt: '.EXE',
      isExecutable: (candidate) => candidate === 'C:\\repo\\.venv\\Scripts\\docbridge-lsp.exe',
    });
    assert.equal(found, 'C:\\repo\\.venv\\Scripts\\docbridge-lsp.exe');
  });
});

describe("findServerExecutable: the workspace's .venv", () => {
  let dir: string;
  let withVenv: string;
  let withoutVenv: string;
  let venvServer: string;
  let onPath: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docbridge-venv-'));
    withoutVenv = path.join(dir, 'plain');
    withVenv = path.join(dir, 'project');
    fs.mkdirSync(withoutVenv);
    fs.mkdirSync(path.join(withVenv, '.venv', 'bin'), { recursive: true });
    venvServer = path.join(withVenv, '.venv', 'bin', 'docbridge-lsp');
    fs.writeFileSync(venvServer, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    onPath = path.join(dir, 'path-bin');
    fs.mkdirSync(onPath);
    fs.writeFileSync(path.join(onPath, 'docbridge-lsp'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('where a virtual environment keeps the server', () => {
    assert.equal(venvServerPath('/work/acme', 'linux'), '/work/acme/.venv/bin/docbridge-lsp');
    assert.equal(venvServerPath('/work/acme', 'darwin'), '/work/acme/.venv/bin/docbridge-lsp');
    assert.equal(venvServerPath('C:\\work\\acme', 'win32'), 'C:\\work\\acme\\.venv\\Scripts\\docbridge-lsp');
  });

  test('the default command, not on PATH, is found in the first folder whose .venv has it', { skip: process.platform === 'win32' }, () => {
    assert.deepEqual(findServerExecutable('docbridge-lsp', { pathEnv: '/nonexistent', folders: [withoutVenv, withVenv], trusted: true }), {
      executable: venvServer,
      fromWorkspaceVenv: true,
    });
  });

  test('PATH comes first', { skip: process.platform === 'win32' }, () => {
    assert.deepEqual(findServerExecutable('docbridge-lsp', { pathEnv: onPath, folders: [withVenv], trusted: true }), {
      executable: path.join(onPath, 'docbridge-lsp'),
      fromWorkspaceVenv: false,
    });
  });

  test('an untrusted workspace, a folder without .venv, or no folder: not found', () => {
    assert.equal(findServerExecutable('docbridge-lsp', { pathEnv: '/nonexistent', folders: [withVenv], trusted: false }), undefined);
    assert.equal(findServerExecutable('docbridge-lsp', { pathEnv: '/nonexistent', folders: [withVenv] }), undefined);
    assert.equal(findServerExecutable('docbridge-lsp', { pathEnv: '/nonexistent', folders: [withoutVenv], trusted: true }), undefined);
    assert.equal(findServerExecutable('docbridge-lsp', { pathEnv: '/nonexistent', folders: [], trusted: true }), undefined);
  });

  test('a command the user set is never replaced by the .venv', () => {
    const missing = path.join(dir, 'elsewhere', 'docbridge-lsp');
    assert.equal(findServerExecutable(missing, { pathEnv: '/nonexistent', folders: [withVenv], trusted: true }), undefined);
    assert.equal(findServerExecutable('my-docbridge', { pathEnv: '/nonexistent', folders: [withVenv], trusted: true }), undefined);
  });

  test('Windows: .venv\\Scripts with the PATHEXT extensions', () => {
    const found = findServerExecutable('docbridge-lsp', {
      platform: 'win32',
      pathEnv: 'C:\\Python\\Scripts',
      pathExt: '.EXE',
      folders: ['C:\\repo'],
      trusted: true,
      isExecutable: (candidate) => candidate === 'C:\\repo\\.venv\\Scripts\\docbridge-lsp.EXE',
    });
    assert.deepEqual(found, { executable: 'C:\\repo\\.venv\\Scripts\\docbridge-lsp.EXE', fromWorkspaceVenv: true });
  });
});

describe('isMissingCommandError', () => {
  test('a real spawn of a missing command is recognised', async () => {
    const error = await new Promise<unknown>((resolve) => {
      const child = spawn('docbridge-lsp-that-does-not-exist-7f3a', []);
      child.on('error', resolve);
      child.on('exit', () => resolve(undefined));
    });
    assert.ok(error, 'spawn fails');
    assert.equal(isMissingCommandError(error), true);
  });
  test("vscode-languageclient's rejection string is recognised", () => {
    assert.equal(
      isMissingCommandError('Launching server using command docbridge-lsp failed. Error: spawn docbridge-lsp ENOENT'),
      true,
    );
    assert.equal(isMissingCommandError(new Error('spawn docbridge-lsp ENOENT')), true);
    assert.equal(isMissingCommandError({ code: 'ENOENT' }), true);
  });
  test('other failures are not', () => {
    assert.equal(isMissingCommandError({ code: 'EACCES', message: 'spawn x EACCES' }), false);
    assert.equal(isMissingCommandError(new Error('Connection closed')), false);
    assert.equal(isMissingCommandError('Launching server using command docbridge-lsp failed.'), false);
    assert.equal(isMissingCommandError(undefined), false);
    assert.equal(isMissingCommandError(null), false);
    assert.equal(isMissingCommandError('NOENTRY'), false);
  });
});

describe('messages', () => {
  test('the missing-command notification text', () => {
    assert.equal(
      missingCommandMessage('docbridge-lsp'),
      'Doc Bridge: the language server command `docbridge-lsp` was not found. Install Doc Bridge (`pip install -e .` in its repository) or set docbridge.server.command to its path.',
    );
  });
  test('in a remote window it says where the setting has to go', () => {
    const local = missingCommandMessage('docbridge-lsp');
    for (const remote of [undefined, '']) {
      assert.equal(missingCommandMessage('docbridge-lsp', remote), local);
    }
    assert.equal(
      missingCommandMessage('docbridge-lsp', 'ssh-remote'),
      `${local} This is a remote window (ssh-remote): set it in the Remote settings (Preferences: Open Remote Settings) ` +
        'or the workspace settings; your User settings do not apply here.',
    );
  });
  test('the start-failure notification text', () => {
    assert.equal(
      startFailedMessage('docbridge-lsp', 'Connection\n closed '),
      'Doc Bridge: the language server `docbridge-lsp` could not be started: Connection closed. See Doc Bridge: Show Output.',
    );
    assert.match(startFailedMessage('x', ''), /could not be started\. See/);
  });
  test('a closed connection during start-up reads as an exit', () => {
    assert.equal(startFailureDetail('Pending response rejected since connection got disposed'), 'it exited during start-up');
    assert.equal(startFailureDetail('Connection is closed.'), 'it exited during start-up');
    assert.equal(startFailureDetail('spawn x EACCES'), 'spawn x EACCES');
  });
  test('the crash notification text', () => {
    assert.equal(
      crashedMessage(new RestartBudget()),
      'Doc Bridge: the language server crashed 5 times in 3 minutes and will not be restarted. See Doc Bridge: Show Output.',
    );
  });
  test('needsShell only for Windows batch files', () => {
    assert.equal(needsShell('C:\\x\\docbridge-lsp.cmd', 'win32'), true);
    assert.equal(needsShell('C:\\x\\docbridge-lsp.exe', 'win32'), false);
    assert.equal(needsShell('/usr/bin/docbridge-lsp.cmd', 'linux'), false);
  });
});

describe('RestartBudget', () => {
  test('allows four restarts within three minutes, then refuses', () => {
    const budget = new RestartBudget();
    const t0 = 1_000_000;
    assert.deepEqual([0, 1, 2, 3].map((i) => budget.allowRestart(t0 + i * 1000)), [true, true, true, true]);
    assert.equal(budget.allowRestart(t0 + 5000), false);
  });
  test('crashes older than the window are forgotten', () => {
    const budget = new RestartBudget(2, 1000);
    assert.equal(budget.allowRestart(0), true);
    assert.equal(budget.allowRestart(10), true);
    assert.equal(budget.allowRestart(20), false);
    assert.equal(budget.allowRestart(2000), true);
  });
});

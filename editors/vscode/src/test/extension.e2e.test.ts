// End to end without VS Code: the bundled extension (out/extension.js, vscode-languageclient inside)
// runs against a fake `vscode` module and a fake language server spoken to over real stdio.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';

import { missingCommandMessage } from '../serverCommand';
import { managedEnvironment, noPythonMessage, offerMessage } from '../serverSetup';
import { createFakeVscode, FakeVscode, loadWithFake, Uri } from './fakeVscode';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const BUNDLE = path.join(ROOT, 'out', 'extension.js');
const MANIFEST = path.join(ROOT, 'package.json');
const FAKE_SERVER = path.join(__dirname, 'fakeServer.js');
const OUR_COMMANDS = [
  'docbridge.reindexWorkspace',
  'docbridge.renderDocumentation',
  'docbridge.searchWorkspace',
  'docbridge.setUpServer',
  'docbridge.showHandoff',
  'docbridge.showOutput',
];
const SERVER_COMMANDS = ['docbridge.explain', 'docbridge.handoff', 'docbridge.lookup', 'docbridge.reindex', 'docbridge.render', 'docbridge.search'];

interface Extension {
  activate(context: unknown): void;
  deactivate(): Promise<void> | undefined;
}

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await sleep(20);
  }
}

interface Context {
  subscriptions: Array<{ dispose(): unknown }>;
  extensionUri: Uri;
  extensionPath: string;
  globalStorageUri: Uri;
}

/** The contexts' empty folders, removed when the file's tests are done. */
const scratches: string[] = [];
after(() => {
  for (const scratch of scratches) {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

/** The extension's context: its README from the repository; its install folder (where a build keeps the wheel
 * it sets the server up from) and its global storage are empty folders unless a test says otherwise. */
function context(installed?: string, storage?: string): Context {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'docbridge-ext-e2e-'));
  scratches.push(scratch);
  return {
    subscriptions: [],
    extensionUri: Uri.file(ROOT),
    extensionPath: installed ?? scratch,
    globalStorageUri: Uri.file(storage ?? path.join(scratch, 'storage')),
  };
}

function statusText(fake: FakeVscode): string {
  return fake.statusItems[0]?.text ?? '';
}

/** The fake server's log, one JSON object a line; a line the server is still writing (no newline yet) is
 * left for the next read. */
function serverLog(file: string): any[] {
  if (!fs.existsSync(file)) {
    return [];
  }
  const text = fs.readFileSync(file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

test('the bundle exists (npm test runs npm run build first)', () => {
  assert.ok(fs.existsSync(BUNDLE), `${BUNDLE} is missing: run npm run build`);
});

describe('when the server command is missing', () => {
  let fake: FakeVscode;
  let ext: Extension;
  const ctx = context();

  before(async () => {
    fake = createFakeVscode(MANIFEST, { 'docbridge.server.command': 'docbridge-lsp-missing-e2e' });
    ext = loadWithFake<Extension>(BUNDLE, fake);
    ext.activate(ctx);
    await waitFor('the error notification', () => fake.messages.length > 0);
    await sleep(100);
  });
  after(async () => {
    await ext.deactivate();
  });

  test('exactly one error notification, with the two buttons', () => {
    assert.deepEqual(fake.messages, [
      { severity: 'error', message: missingCommandMessage('docbridge-lsp-missing-e2e'), items: ['How to install', 'Open Settings'] },
    ]);
  });

  test('the status bar says so and opens the output', () => {
    assert.equal(statusText(fake), '$(warning) Doc Bridge: server not found');
    assert.equal(fake.statusItems[0].command, 'docbridge.showOutput');
    assert.match(fake.output.join(''), /command not found: docbridge-lsp-missing-e2e/);
  });

  test('only the palette commands are registered', () => {
    assert.deepEqual([...fake.commands.keys()].sort(), OUR_COMMANDS);
  });

  test('a command run by the user shows the error again; the buttons work', async () => {
    fake.answer = () => 'Open Settings';
    await fake.run('docbridge.reindexWorkspace');
    assert.equal(fake.messages.length, 2);
    await waitFor('open settings', () => fake.executed.some((e) => e.command === 'workbench.action.openSettings'));
    assert.deepEqual(fake.executed.find((e) => e.command === 'workbench.action.openSettings')?.args, ['docbridge.server']);

    fake.answer = () => 'How to install';
    await fake.run('docbridge.searchWorkspace');
    await waitFor('readme preview', () => fake.executed.some((e) => e.command === 'markdown.showPreview'));
    const readme = fake.executed.find((e) => e.command === 'markdown.showPreview')?.args[0] as Uri;
    assert.equal(readme.fsPath, path.join(ROOT, 'README.md'));
    assert.equal(fake.quickPicks.length, 0, 'no quick pick without a server');
  });

  test('Show Output reveals the channel', async () => {
    await fake.run('docbridge.showOutput');
    assert.ok(fake.executed.some((e) => e.command === '(output.show)' && e.args[0] === 'Doc Bridge'));
  });
});

describe('when the server command is missing in a remote window', () => {
  let fake: FakeVscode;
  let ext: Extension;

  before(async () => {
    fake = createFakeVscode(MANIFEST, { 'docbridge.server.command': 'docbridge-lsp-missing-e2e' });
    fake.api.env.remoteName = 'ssh-remote';
    ext = loadWithFake<Extension>(BUNDLE, fake);
    ext.activate(context());
    await waitFor('the error notification', () => fake.messages.length > 0);
  });
  after(async () => {
    await ext.deactivate();
  });

  test('the notification says the setting belongs in the Remote or workspace settings', () => {
    assert.equal(fake.messages.length, 1, JSON.stringify(fake.messages));
    assert.equal(fake.messages[0].message, missingCommandMessage('docbridge-lsp-missing-e2e', 'ssh-remote'));
    assert.match(fake.messages[0].message, /remote window \(ssh-remote\).*Remote settings.*workspace settings/);
  });
});

describe("the default command, not on PATH, from the workspace's .venv", { skip: process.platform === 'win32' }, () => {
  let dir: string;
  let workspace: string;
  let logFile: string;
  let venvServer: string;
  const savedPath = process.env.PATH;
  const extensions: Extension[] = [];

  /** A fake VS Code with default settings and `workspace` open; PATH has no docbridge-lsp. */
  async function activate(trusted: boolean): Promise<FakeVscode> {
    const fake = createFakeVscode(MANIFEST);
    fake.api.workspace.workspaceFolders = [{ uri: Uri.file(workspace), name: 'ws', index: 0 }];
    fake.api.workspace.isTrusted = trusted;
    const ext = loadWithFake<Extension>(BUNDLE, fake);
    extensions.push(ext);
    ext.activate(context());
    return fake;
  }

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docbridge-venv-e2e-'));
    workspace = path.join(dir, 'ws');
    fs.mkdirSync(path.join(workspace, '.venv', 'bin'), { recursive: true });
    logFile = path.join(dir, 'server.log');
    venvServer = path.join(workspace, '.venv', 'bin', 'docbridge-lsp');
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    fs.writeFileSync(venvServer, `#!/bin/sh\nexec ${[process.execPath, FAKE_SERVER, logFile, workspace].map(quote).join(' ')}\n`, {
      mode: 0o755,
    });
    process.env.PATH = path.join(dir, 'empty-bin');
  });
  after(async () => {
    process.env.PATH = savedPath;
    for (const ext of extensions) {
      await ext.deactivate();
    }
    await removeDir(dir);
  });

  test('a trusted workspace: the server starts from .venv/bin/docbridge-lsp, and the output says so', async () => {
    const fake = await activate(true);
    await waitFor('the ready status', () => statusText(fake) === '$(book) Doc Bridge: 2 findings');
    assert.deepEqual(serverLog(logFile).filter((entry) => entry.started !== undefined)[0].started, [workspace]);
    assert.match(fake.output.join(''), new RegExp(`docbridge-lsp is not on PATH; using the workspace's ${venvServer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.deepEqual(fake.messages, []);
    await extensions.pop()?.deactivate();
  });

  test('an untrusted workspace: its .venv is not run, and the server is reported missing', async () => {
    const starts = serverLog(logFile).filter((entry) => entry.started !== undefined).length;
    const fake = await activate(false);
    await waitFor('the error notification', () => fake.messages.length > 0);
    assert.equal(fake.messages[0].message, missingCommandMessage('docbridge-lsp'));
    assert.equal(statusText(fake), '$(warning) Doc Bridge: server not found');
    assert.equal(serverLog(logFile).filter((entry) => entry.started !== undefined).length, starts);
  });
});

describe('when the server exits at once', () => {
  let fake: FakeVscode;
  let ext: Extension;

  before(async () => {
    fake = createFakeVscode(MANIFEST, {
      'docbridge.server.command': process.execPath,
      'docbridge.server.args': ['-e', 'process.stderr.write("Traceback: boom\\n"); process.exit(3)'],
    });
    ext = loadWithFake<Extension>(BUNDLE, fake);
    ext.activate(context());
    await waitFor('the error notification', () => fake.messages.length > 0);
    await sleep(300);
  });
  after(async () => {
    await ext.deactivate();
  });

  test('exactly one error notification, pointing at the output', () => {
    assert.equal(fake.messages.length, 1, JSON.stringify(fake.messages));
    assert.equal(fake.messages[0].severity, 'error');
    assert.equal(
      fake.messages[0].message,
      `Doc Bridge: the language server \`${process.execPath}\` could not be started: it exited during start-up. See Doc Bridge: Show Output.`,
    );
    assert.deepEqual(fake.messages[0].items, ['Show Output', 'Open Settings']);
  });

  test('the status bar shows the failure and the output has the server stderr', async () => {
    assert.equal(statusText(fake), '$(error) Doc Bridge: server failed');
    await waitFor('stderr in the output', () => fake.output.join('').includes('Traceback: boom'));
  });
});

/** Remove a directory that an exiting server may still write its last log line into: each attempt deletes
 * everything again (node's own retries only retry the final rmdir, not the files that reappeared). */
async function removeDir(dir: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || attempt >= 20) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('with a running server', () => {
  let fake: FakeVscode;
  let ext: Extension;
  let dir: string;
  let workspace: string;
  let logFile: string;
  const ctx = context();
  const started = () => serverLog(logFile).filter((entry) => entry.started !== undefined);
  const received = (method: string) => serverLog(logFile).filter((entry) => entry.method === method);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docbridge-e2e-'));
    workspace = path.join(dir, 'ws');
    fs.mkdirSync(path.join(workspace, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'docs', 'billing.md'), '# Billing\n\nInvoices.\n');
    logFile = path.join(dir, 'server.log');
    fake = createFakeVscode(MANIFEST, {
      'docbridge.server.command': process.execPath,
      'docbridge.server.args': [FAKE_SERVER, logFile, workspace],
    });
    ext = loadWithFake<Extension>(BUNDLE, fake);
    ext.activate(ctx);
    await waitFor('the ready status', () => statusText(fake) === '$(book) Doc Bridge: 2 findings');
  });
  after(async () => {
    await ext.deactivate();
    await removeDir(dir);
  });

  test('the server was started as <command> <args...> with nothing added', () => {
    assert.deepEqual(started()[0].started, [workspace]);
  });

  test('the client registered the server commands next to the palette commands', () => {
    assert.deepEqual([...fake.commands.keys()].sort(), [...OUR_COMMANDS, ...SERVER_COMMANDS].sort());
  });

  test('settings reach the server: pulled for section docbridge and pushed on start', async () => {
    await waitFor('configuration answer', () => serverLog(logFile).some((entry) => entry.id === 1000 && entry.result));
    const [section] = serverLog(logFile).find((entry) => entry.id === 1000).result;
    assert.equal(section.diagnostics.enabled, true);
    assert.equal(section.diagnostics.debounceMs, 200);
    assert.deepEqual(section.diagnostics.severity, {});
    assert.equal(section.completion.maxItems, 50);
    assert.equal(section.search.warmAfterMs, 2000);
    assert.equal(section.log.level, 'info');
    const pushed = received('workspace/didChangeConfiguration');
    assert.ok(pushed.length >= 1);
    assert.equal(pushed[0].params.settings.docbridge.codeLens.enabled, true);
  });

  test('Render Documentation asks for a template and an area, then reports the pages written', async () => {
    fake.prompts.push('area', 'src/billing');
    await fake.run('docbridge.renderDocumentation');
    assert.deepEqual(received('workspace/executeCommand').pop().params, {
      command: 'docbridge.render',
      arguments: ['area', { area: 'src/billing' }],
    });
    assert.deepEqual(fake.messages.pop(), {
      severity: 'info',
      message: 'Doc Bridge rendered area: 1 page written, 0 unchanged (docs/areas/src-billing.md)',
      items: [],
    });
    fake.prompts.push('area', 'src/nowhere');
    await fake.run('docbridge.renderDocumentation');
    const failed = fake.messages.pop();
    assert.equal(failed?.severity, 'error');
    assert.match(String(failed?.message), /^Doc Bridge: render failed: .*There is no area 'src\/nowhere'/);
  });

  test('Reindex reports files and seconds', async () => {
    await fake.run('docbridge.reindexWorkspace');
    assert.deepEqual(fake.messages.pop(), { severity: 'info', message: 'Doc Bridge reindexed 3 files in 0.5 s', items: [] });
    assert.deepEqual(received('workspace/executeCommand').pop().params, { command: 'docbridge.reindex', arguments: [] });
  });

  test("Show Handoff opens the server's Markdown in a docbridge-handoff: document and offers the preview", async () => {
    fake.answer = (m) => (m.items.includes('Open Preview') ? 'Open Preview' : undefined);
    await fake.run('docbridge.showHandoff', 'src/app.ts');
    const shown = fake.shownDocuments.pop();
    assert.equal(shown?.uri, 'docbridge-handoff:/Handoff/src/app.ts.md');
    assert.equal(shown?.languageId, 'markdown');
    const provider = fake.contentProviders.get('docbridge-handoff');
    assert.equal(provider?.provideTextDocumentContent(Uri.parse(shown.uri)), '# Handoff for src/app.ts\n');
    assert.deepEqual(received('workspace/executeCommand').pop().params, { command: 'docbridge.handoff', arguments: ['src/app.ts'] });
    await waitFor('preview', () => fake.executed.some((e) => e.command === 'markdown.showPreview'));
    fake.answer = () => undefined;
  });

  test('Show Handoff renders a card when the server sends no markdown', async () => {
    await fake.run('docbridge.showHandoff', 'no-markdown');
    const shown = fake.shownDocuments.pop();
    const text = fake.contentProviders.get('docbridge-handoff')?.provideTextDocumentContent(Uri.parse(shown!.uri));
    assert.match(text ?? '', /^# Handoff: no-markdown\n\n## Start here\n\n- `docs\/billing.md`/);
  });

  test("an unknown reference shows the server's message, once", async () => {
    const before = fake.messages.length;
    await fake.run('docbridge.showHandoff', 'nowhere');
    const errors = fake.messages.slice(before).filter((m) => m.severity === 'error');
    assert.deepEqual(errors.map((m) => m.message), [
      'Doc Bridge: Unknown reference "nowhere". Closest: src/app.ts, docs/billing.md',
    ]);
  });

  test('Search asks once per pause in typing and opens the chosen result at its range', async () => {
    const searchesBefore = received('workspace/executeCommand').filter((e) => e.params.command === 'docbridge.search').length;
    await fake.run('docbridge.searchWorkspace');
    const pick = fake.quickPicks[fake.quickPicks.length - 1];
    pick.changeValue('b');
    pick.changeValue('bi');
    pick.changeValue('bill');
    await waitFor('results', () => pick.items.length > 0 && !pick.busy);
    const searches = received('workspace/executeCommand').filter((e) => e.params.command === 'docbridge.search');
    assert.equal(searches.length - searchesBefore, 1, 'debounced to one request');
    assert.deepEqual(searches.pop().params.arguments, ['bill', 20]);
    assert.equal(pick.items[0].label, '$(book) Billing');
    assert.equal(pick.items[0].description, 'docs/billing.md');
    assert.equal(pick.items[0].detail, 'document · observed · How invoices are created.');

    pick.accept(pick.items[0]);
    await waitFor('the file to open', () => fake.shownDocuments.some((d) => d.uri.endsWith('/docs/billing.md')));
    const opened = fake.shownDocuments.find((d) => d.uri.endsWith('/docs/billing.md'));
    assert.equal(opened?.selection?.start.line, 2);
    assert.equal(opened?.selection?.end.character, 7);
    assert.equal(pick.visible, false);
  });

  test('Search with no hits says so', async () => {
    await fake.run('docbridge.searchWorkspace');
    const pick = fake.quickPicks[fake.quickPicks.length - 1];
    pick.changeValue('zzz');
    await waitFor('the empty answer', () => pick.items.length > 0);
    assert.equal(pick.items[0].label, 'No Doc Bridge results for "zzz"');
    assert.equal(pick.items[0].result, undefined);
    pick.hide();
  });

  test('a docbridge.* setting change is pushed without a restart', async () => {
    const pushes = received('workspace/didChangeConfiguration').length;
    fake.configure({ 'docbridge.codeLens.enabled': false });
    await waitFor('the push', () => received('workspace/didChangeConfiguration').length > pushes);
    assert.equal(received('workspace/didChangeConfiguration').pop().params.settings.docbridge.codeLens.enabled, false);
    await sleep(100);
    assert.equal(started().length, 1);
  });

  test('a server that crashes while running is restarted quietly', async () => {
    const before = started().length;
    const messages = fake.messages.length;
    await fake.run('docbridge.lookup', 'crash'); // vscode-languageclient swallows the lost request
    await waitFor('the restarted server', () => started().length === before + 1 && fake.commands.has('docbridge.lookup'));
    assert.deepEqual(await fake.run('docbridge.lookup', 'src/app.ts'), { ref: 'src/app.ts' });
    assert.equal(statusText(fake), '$(book) Doc Bridge: 2 findings');
    assert.equal(fake.messages.length, messages, 'no notification for one crash');
  });

  test('a settings change right after a crash leaves exactly one new server', async () => {
    const before = started().length;
    const messages = fake.messages.length;
    await fake.run('docbridge.lookup', 'crash');
    fake.configure({ 'docbridge.server.args': [FAKE_SERVER, logFile, workspace, 'after-crash'] });
    await waitFor('the new server', () => started().some((s) => s.started.includes('after-crash')) && fake.commands.has('docbridge.lookup'));
    await sleep(300);
    assert.deepEqual(await fake.run('docbridge.lookup', 'x'), { ref: 'x' });
    const latest = started().slice(before);
    assert.ok(latest.length <= 2, `at most a crash restart and the new server: ${JSON.stringify(latest)}`);
    assert.deepEqual(latest[latest.length - 1].started, [workspace, 'after-crash']);
    assert.deepEqual([...fake.commands.keys()].sort(), [...OUR_COMMANDS, ...SERVER_COMMANDS].sort());
    assert.equal(fake.messages.length, messages, JSON.stringify(fake.messages.slice(messages)));
    assert.ok(!fake.output.join('').includes('didChangeConfiguration failed'));
  });

  test('changing docbridge.server.* restarts the server', async () => {
    const before = started().length;
    fake.configure({ 'docbridge.server.args': [FAKE_SERVER, logFile, workspace, 'second'] });
    await waitFor('the new server', () => started().length === before + 1);
    assert.deepEqual(started()[before].started, [workspace, 'second']);
    assert.ok(received('shutdown').length >= 1, 'the first server was shut down');
    await waitFor('ready again', () => statusText(fake) === '$(book) Doc Bridge: 2 findings');
    // The server commands were re-registered by the new client without clashing.
    assert.deepEqual([...fake.commands.keys()].sort(), [...OUR_COMMANDS, ...SERVER_COMMANDS].sort());
  });

  test('no unexpected notifications along the way', () => {
    const unexpected = fake.messages.filter((m) => m.severity !== 'info' && !m.message.includes('nowhere'));
    assert.deepEqual(unexpected, []);
  });

  test('deactivate shuts the server down', async () => {
    const shutdowns = received('shutdown').length;
    await ext.deactivate();
    await waitFor('exit', () => received('shutdown').length > shutdowns && received('exit').length >= 2);
  });
});

describe('no server configured or found: the extension sets one up from the wheel it ships', { skip: process.platform === 'win32' }, () => {
  let dir: string;
  let workspace: string;
  let logFile: string;
  let installed: string;
  let storage: string;
  let bin: string;
  const savedPath = process.env.PATH;
  const extensions: Extension[] = [];
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

  /** A `python3` on PATH that reports `version`, makes a "virtual environment" (a copy of itself in bin/) and
   * "installs" the wheel by writing a docbridge-lsp beside itself that runs the fake server. */
  function fakePython(version: string): void {
    const server = `#!/bin/sh\nexec ${[process.execPath, FAKE_SERVER, logFile, workspace].map(quote).join(' ')}\n`;
    const script = [
      '#!/bin/sh',
      'PATH=/usr/bin:/bin',
      'case "$1 $2" in',
      `  "-c "*) echo ${version} ;;`,
      '  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;',
      `  "-m pip") printf %s ${quote(server)} > "$(dirname "$0")/docbridge-lsp" && chmod +x "$(dirname "$0")/docbridge-lsp" && echo "pip install $6" ;;`,
      '  *) exit 3 ;;',
      'esac',
    ].join('\n');
    fs.writeFileSync(path.join(bin, 'python3'), script + '\n', { mode: 0o755 });
  }

  function activate(answer: string | undefined): FakeVscode {
    const fake = createFakeVscode(MANIFEST);
    fake.api.workspace.workspaceFolders = [{ uri: Uri.file(workspace), name: 'ws', index: 0 }];
    fake.api.workspace.isTrusted = true;
    fake.answer = (message) => (answer !== undefined && message.items.includes(answer) ? answer : undefined);
    const ext = loadWithFake<Extension>(BUNDLE, fake);
    extensions.push(ext);
    ext.activate(context(installed, storage));
    return fake;
  }

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docbridge-setup-e2e-'));
    workspace = path.join(dir, 'ws');
    fs.mkdirSync(workspace);
    logFile = path.join(dir, 'server.log');
    installed = path.join(dir, 'extension');
    fs.mkdirSync(path.join(installed, 'server'), { recursive: true });
    fs.writeFileSync(path.join(installed, 'server', 'docbridge-0.1.0-py3-none-any.whl'), 'a wheel');
    storage = path.join(dir, 'storage');
    bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    process.env.PATH = bin;
  });
  after(async () => {
    process.env.PATH = savedPath;
    for (const ext of extensions) {
      await ext.deactivate();
    }
    await removeDir(dir);
  });

  test('with no Python 3.11 or newer, the set-up says which Pythons it found', async () => {
    fakePython('3.9.2');
    const fake = activate('Set Up');
    await waitFor('the no-Python error', () => fake.messages.some((m) => m.severity === 'error'));
    assert.deepEqual(fake.messages[0], { severity: 'info', message: offerMessage(), items: ['Set Up', 'Open Settings'] });
    assert.equal(fake.messages[1].message, noPythonMessage(['python3: 3.9.2']));
    assert.equal(statusText(fake), '$(warning) Doc Bridge: server not found');
    assert.equal(fs.existsSync(managedEnvironment(storage).server), false);
    await extensions.pop()?.deactivate();
  });

  test('declined, nothing is installed; accepted, the server is set up and started with no setting', async () => {
    fakePython('3.12.4');
    const declined = activate(undefined);
    await waitFor('the offer', () => declined.messages.length > 0);
    await sleep(200);
    assert.deepEqual(declined.messages, [{ severity: 'info', message: offerMessage(), items: ['Set Up', 'Open Settings'] }]);
    assert.equal(fs.existsSync(managedEnvironment(storage).root), false);
    await extensions.pop()?.deactivate();

    const fake = activate('Set Up');
    await waitFor('the ready status', () => statusText(fake) === '$(book) Doc Bridge: 2 findings').catch((error) => {
      throw new Error(`${error.message}; status ${statusText(fake)}; output:\n${fake.output.join('')}`);
    });
    const environment = managedEnvironment(storage);
    assert.deepEqual(JSON.parse(fs.readFileSync(environment.marker, 'utf8')), { wheel: 'docbridge-0.1.0-py3-none-any.whl' });
    const output = fake.output.join('');
    assert.match(output, /Setting up the server with python3 \(3\.12\.4\)/);
    assert.match(output, new RegExp(`pip install ${path.join(installed, 'server', 'docbridge-0.1.0-py3-none-any.whl').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.ok(output.includes(`using the server this extension set up: ${environment.server}`), output);
    assert.deepEqual(fake.messages.map((m) => m.message), [offerMessage()]);
    await extensions.pop()?.deactivate();

    // the next start (a window reload) uses it at once, and asks nothing
    fs.rmSync(path.join(bin, 'python3'));
    const again = activate(undefined);
    await waitFor('the ready status', () => statusText(again) === '$(book) Doc Bridge: 2 findings');
    assert.deepEqual(again.messages, []);
    await extensions.pop()?.deactivate();
  });
});

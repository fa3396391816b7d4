// package.json against the contract and against the sources: every command the code registers is
// contributed and vice versa, every setting it reads is declared, and the settings match the server's.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { SERVER_COMMANDS } from '../protocol';
import {
  contributedCommands,
  contributedSettings,
  Manifest,
  manifestProblems,
  readExtensionSources,
  scanSources,
} from './sourceScan';

// Compiled to out/test/test/: the extension's folder is three levels up.
const ROOT = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Manifest & Record<string, any>;
const sources = readExtensionSources(ROOT);
const serverIds = Object.values(SERVER_COMMANDS);

const SEVERITIES = ['error', 'warning', 'info', 'hint', 'off'];
const FINDING_CODES = [
  'LINK_BROKEN',
  'LINK_ANCHOR_MISSING',
  'MENTION_UNRESOLVED',
  'SYMBOL_AMBIGUOUS',
  'COVERS_TARGET_MISSING',
  'DOCBRIDGE_BLOCK_INVALID',
  'AREA_UNDOCUMENTED',
  'RELATION_UNDOCUMENTED',
  'OWNERSHIP_PATH_UNOBSERVED',
  'IMPORT_CYCLE',
  'GENERATED_REGION_EDITED',
  'GENERATED_REGION_STALE',
  'RELATION_CONFIRMED',
  'DECLARED_RELATION_STALE',
  'RELATION_NOT_ANALYZED',
  'CONFLICTING_DECLARATIONS',
  'UNRESOLVED_ENTITY_REFERENCE',
];

/** The settings of the server contract: key → [type, default]. */
const CONTRACT_SETTINGS: Record<string, [string, unknown]> = {
  'docbridge.server.command': ['string', 'docbridge-lsp'],
  'docbridge.server.args': ['array', []],
  'docbridge.diagnostics.enabled': ['boolean', true],
  'docbridge.diagnostics.debounceMs': ['number', 200],
  'docbridge.diagnostics.severity': ['object', {}],
  'docbridge.codeLens.enabled': ['boolean', true],
  'docbridge.completion.maxItems': ['number', 50],
  'docbridge.search.warmAfterMs': ['number', 2000],
  'docbridge.log.level': ['string', 'info'],
  'docbridge.approver': ['string', ''],
  'docbridge.trace.server': ['string', 'off'],
};

const CONTRACT_COMMANDS: Record<string, string> = {
  'docbridge.searchWorkspace': 'Doc Bridge: Search',
  'docbridge.showHandoff': 'Doc Bridge: Show Handoff',
  'docbridge.reindexWorkspace': 'Doc Bridge: Reindex',
  'docbridge.showOutput': 'Doc Bridge: Show Output',
  'docbridge.renderDocumentation': 'Doc Bridge: Render Documentation',
  'docbridge.setUpServer': 'Doc Bridge: Set Up the Language Server',
};

function properties(): Record<string, any> {
  return (manifest.contributes as any).configuration.properties;
}

describe('sources against package.json', () => {
  test('the extension sources are found and scanned', () => {
    const names = sources.map((s) => path.basename(s.fileName));
    assert.ok(names.includes('extension.ts'), `sources: ${names.join(', ')}`);
    assert.ok(!names.some((n) => n.endsWith('.test.ts')), 'tests are not extension sources');
  });

  test('registered commands and contributed commands are the same set, none owned by the server', () => {
    const scan = scanSources(sources);
    assert.deepEqual(manifestProblems(manifest, scan, serverIds), []);
    assert.deepEqual(
      [...new Set(scan.registeredCommands.map((c) => c.value))].sort(),
      Object.keys(CONTRACT_COMMANDS).sort(),
    );
  });

  test('every docbridge.* setting the code reads is declared', () => {
    const scan = scanSources(sources);
    const read = scan.settingsRead.map((s) => s.value);
    // The client itself reads the server command settings; the server pulls the rest.
    assert.ok(read.includes('docbridge.server.command'), `read: ${read.join(', ')}`);
    assert.ok(read.includes('docbridge.server.args'), `read: ${read.join(', ')}`);
    const declared = contributedSettings(manifest);
    for (const key of read) {
      assert.ok(declared.includes(key), `${key} is read but not declared`);
    }
    assert.ok(scan.settingPrefixes.some((p) => p.value === 'docbridge.server'), 'restarts on docbridge.server.* changes');
  });
});

describe('the scanner catches drift', () => {
  const base = [
    { fileName: 'ids.ts', text: "export const IDS = { search: 'docbridge.searchWorkspace' } as const;\nexport const SECTION = 'docbridge';" },
  ];
  const mini: Manifest = {
    contributes: {
      commands: [{ command: 'docbridge.searchWorkspace' }, { command: 'docbridge.showOutput' }],
      configuration: { properties: { 'docbridge.server.command': {}, 'docbridge.server.args': {} } },
    },
  };

  test('accepts registrations through literals and constants', () => {
    const scan = scanSources([
      ...base,
      {
        fileName: 'ok.ts',
        text: [
          "vscode.commands.registerCommand(IDS.search, () => 1);",
          "vscode.commands.registerCommand('docbridge.showOutput', () => 1);",
          'const config = vscode.workspace.getConfiguration(SECTION);',
          "config.get<string>('server.command');",
          "vscode.workspace.getConfiguration('docbridge').get('server.args');",
          "event.affectsConfiguration('docbridge.server');",
          "new Map<string, string>().get('not.a.setting');",
        ].join('\n'),
      },
    ]);
    assert.deepEqual(manifestProblems(mini, scan, serverIds), []);
    assert.deepEqual(scan.settingsRead.map((s) => s.value), ['docbridge.server.command', 'docbridge.server.args']);
  });

  test('reports an undeclared command, an unregistered contribution and a server-owned id', () => {
    const scan = scanSources([
      ...base,
      {
        fileName: 'bad.ts',
        text: [
          "vscode.commands.registerCommand(IDS.search, () => 1);",
          "vscode.commands.registerCommand('docbridge.undeclared', () => 1);",
          "vscode.commands.registerCommand('docbridge.search', () => 1);",
        ].join('\n'),
      },
    ]);
    const problems = manifestProblems(mini, scan, serverIds);
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems[0], /bad\.ts:2: registers docbridge\.undeclared, which package\.json does not contribute/);
    assert.match(problems[1], /bad\.ts:3: registers docbridge\.search, which the language server owns/);
    assert.match(problems[2], /contributes docbridge\.showOutput, which the extension never registers/);
  });

  test('reports undeclared settings, unknown prefixes and ids it cannot read', () => {
    const scan = scanSources([
      ...base,
      {
        fileName: 'bad.ts',
        text: [
          "vscode.commands.registerCommand(IDS.search, () => 1);",
          "vscode.commands.registerCommand('docbridge.showOutput', () => 1);",
          "const cfg = vscode.workspace.getConfiguration('docbridge');",
          "cfg.get('server.timeout');",
          "vscode.workspace.getConfiguration().get('docbridge.nope');",
          "e.affectsConfiguration('docbridge.serverx');",
          'vscode.commands.registerCommand(makeId(), () => 1);',
          'cfg.get(key);',
        ].join('\n'),
      },
    ]);
    const problems = manifestProblems(mini, scan, serverIds);
    assert.equal(problems.length, 5, problems.join('\n'));
    assert.ok(problems.some((p) => /bad\.ts:7: registerCommand\(\) id is not a string constant/.test(p)));
    assert.ok(problems.some((p) => /bad\.ts:8: configuration \.get\(\) key is not a string constant/.test(p)));
    assert.ok(problems.some((p) => /reads docbridge\.server\.timeout/.test(p)));
    assert.ok(problems.some((p) => /reads docbridge\.nope/.test(p)));
    assert.ok(problems.some((p) => /affectsConfiguration\(docbridge\.serverx\) matches no declared setting/.test(p)));
  });
});

describe('package.json', () => {
  test('identity, engine, entry point', () => {
    assert.equal(manifest.name, 'docbridge');
    assert.equal(manifest.displayName, 'Doc Bridge');
    assert.equal(manifest.publisher, 'docbridge');
    assert.equal(manifest.version, '0.1.0');
    assert.equal(manifest.license, 'MIT');
    assert.equal(manifest.engines.vscode, '^1.82.0');
    assert.equal(manifest.main, './out/extension.js');
    // no repository field: `npm run package` passes --allow-missing-repository so vsce does not prompt
    assert.match(String(manifest.scripts.package), /--allow-missing-repository/);
    assert.ok(fs.existsSync(path.join(ROOT, 'LICENSE')), 'LICENSE ships so vsce does not prompt');
  });

  test('@types/vscode does not exceed the engine (vsce refuses to package otherwise)', () => {
    const types = String(manifest.devDependencies['@types/vscode']).replace(/^[~^]/, '');
    assert.equal(types, '1.82.0');
    assert.match(String(manifest.dependencies['vscode-languageclient']), /^\^9\./);
  });

  test('activation events', () => {
    assert.deepEqual(manifest.activationEvents, [
      'onLanguage:markdown',
      'onLanguage:mdx',
      'onLanguage:typescript',
      'onLanguage:typescriptreact',
      'onLanguage:javascript',
      'onLanguage:javascriptreact',
      'workspaceContains:doc-bridge.config.json',
    ]);
  });

  test('palette commands and their titles', () => {
    assert.deepEqual(contributedCommands(manifest).sort(), Object.keys(CONTRACT_COMMANDS).sort());
    for (const command of manifest.contributes?.commands ?? []) {
      assert.equal(`${command.category}: ${command.title}`, CONTRACT_COMMANDS[command.command]);
      assert.ok(!serverIds.includes(command.command as never), `${command.command} collides with a server command`);
    }
  });

  test('settings: exactly the contract, with types and defaults', () => {
    const props = properties();
    assert.deepEqual(Object.keys(props).sort(), Object.keys(CONTRACT_SETTINGS).sort());
    for (const [key, [type, defaultValue]] of Object.entries(CONTRACT_SETTINGS)) {
      assert.equal(props[key].type, type, `${key} type`);
      assert.deepEqual(props[key].default, defaultValue, `${key} default`);
      assert.ok(props[key].description || props[key].markdownDescription, `${key} has a description`);
    }
    assert.equal(props['docbridge.server.args'].items.type, 'string');
    assert.equal(props['docbridge.diagnostics.debounceMs'].minimum, 0);
    assert.deepEqual(props['docbridge.log.level'].enum, ['error', 'warning', 'info', 'debug']);
    assert.deepEqual(props['docbridge.trace.server'].enum, ['off', 'messages', 'verbose']);
  });

  test('diagnostics.severity offers every finding code with the five severities', () => {
    const severity = properties()['docbridge.diagnostics.severity'];
    assert.deepEqual(Object.keys(severity.properties).sort(), [...FINDING_CODES].sort());
    for (const code of FINDING_CODES) {
      assert.deepEqual(severity.properties[code].enum, SEVERITIES, code);
      assert.ok(severity.properties[code].description, `${code} has a description`);
    }
    assert.deepEqual(severity.additionalProperties.enum, SEVERITIES);
  });

  test('scripts CI runs exist and the package script is non-interactive', () => {
    for (const script of ['build', 'lint', 'test', 'package']) {
      assert.ok(manifest.scripts[script], `script ${script}`);
    }
    assert.match(manifest.scripts.package, /vsce package .*--no-dependencies/);
    assert.match(manifest.scripts.build, /--external:vscode/);
    assert.match(manifest.scripts.build, /--outfile=out\/extension\.js/);
  });

  test('.vscodeignore keeps sources, tests and node_modules out of the vsix', () => {
    const ignore = fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8').split(/\r?\n/).map((l) => l.trim());
    for (const pattern of ['src/**', 'node_modules/**', 'out/test/**']) {
      assert.ok(ignore.includes(pattern), `.vscodeignore has ${pattern}`);
    }
  });
});

describe('README', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

  test('documents every command and setting', () => {
    for (const title of Object.values(CONTRACT_COMMANDS)) {
      assert.ok(readme.includes(title), `README mentions ${title}`);
    }
    for (const key of Object.keys(CONTRACT_SETTINGS)) {
      assert.ok(readme.includes(`\`${key}\``), `README documents ${key}`);
    }
    assert.ok(readme.includes('code --install-extension docbridge.vsix'));
  });

  test('has no relative links (vsce would rewrite them against the repository URL)', () => {
    const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]);
    for (const link of links) {
      assert.match(link, /^(https?:|#)/, `link ${link}`);
    }
  });
});

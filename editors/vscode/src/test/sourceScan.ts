// Reads the extension's TypeScript sources with the TypeScript parser and lists the command ids they
// register and the `docbridge.*` settings they read, so a test can compare them with package.json.

import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

export interface Found {
  value: string;
  where: string;
}

export interface SourceScan {
  /** First arguments of `registerCommand` / `registerTextEditorCommand`. */
  registeredCommands: Found[];
  /** Full keys (`docbridge.server.command`) read with `getConfiguration(section).get(key)` and friends. */
  settingsRead: Found[];
  /** Arguments of `affectsConfiguration(...)`: a setting or a prefix of settings. */
  settingPrefixes: Found[];
  /** Calls the scanner cannot check (an id or key that is not a string constant). */
  problems: string[];
}

const REGISTER_CALLS = new Set(['registerCommand', 'registerTextEditorCommand']);
const CONFIG_READS = new Set(['get', 'inspect', 'has', 'update']);

/** String constants visible to the scanner: `const X = '...'` and `const O = { k: '...' }` in any file. */
export class Constants {
  readonly strings = new Map<string, string>();
  readonly objects = new Map<string, Map<string, string>>();

  add(sourceFile: ts.SourceFile): void {
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
        let init: ts.Expression = node.initializer;
        while (ts.isAsExpression(init) || ts.isParenthesizedExpression(init)) {
          init = init.expression;
        }
        if (ts.isStringLiteralLike(init)) {
          this.strings.set(node.name.text, init.text);
        } else if (ts.isObjectLiteralExpression(init)) {
          const members = new Map<string, string>();
          for (const prop of init.properties) {
            if (ts.isPropertyAssignment(prop) && ts.isIdentifier(prop.name) && ts.isStringLiteralLike(prop.initializer)) {
              members.set(prop.name.text, prop.initializer.text);
            }
          }
          this.objects.set(node.name.text, members);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sourceFile);
  }

  resolve(expr: ts.Expression | undefined): string | undefined {
    if (expr === undefined) {
      return undefined;
    }
    if (ts.isStringLiteralLike(expr)) {
      return expr.text;
    }
    if (ts.isIdentifier(expr)) {
      return this.strings.get(expr.text);
    }
    if (ts.isPropertyAccessExpression(expr) && ts.isIdentifier(expr.expression)) {
      return this.objects.get(expr.expression.text)?.get(expr.name.text);
    }
    return undefined;
  }
}

export function parse(fileName: string, text: string): ts.SourceFile {
  return ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

function calleeName(call: ts.CallExpression): string | undefined {
  const callee = call.expression;
  if (ts.isPropertyAccessExpression(callee)) {
    return callee.name.text;
  }
  if (ts.isIdentifier(callee)) {
    return callee.text;
  }
  return undefined;
}

export function scanSourceFile(sourceFile: ts.SourceFile, constants: Constants): SourceScan {
  const scan: SourceScan = { registeredCommands: [], settingsRead: [], settingPrefixes: [], problems: [] };
  const where = (node: ts.Node): string => {
    const { line } = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile));
    return `${path.basename(sourceFile.fileName)}:${line + 1}`;
  };
  /** Variables holding a configuration object: name → section. */
  const configVars = new Map<string, string>();

  /** The section of `getConfiguration(section)`, '' for `getConfiguration()`, undefined if not such a call. */
  const sectionOf = (expr: ts.Expression): string | undefined => {
    if (!ts.isCallExpression(expr) || calleeName(expr) !== 'getConfiguration') {
      return undefined;
    }
    if (expr.arguments.length === 0) {
      return '';
    }
    const section = constants.resolve(expr.arguments[0]);
    if (section === undefined) {
      scan.problems.push(`${where(expr)}: getConfiguration() section is not a string constant`);
      return '';
    }
    return section;
  };

  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
      const section = sectionOf(node.initializer);
      if (section !== undefined) {
        configVars.set(node.name.text, section);
      }
    }
    if (ts.isCallExpression(node)) {
      const name = calleeName(node);
      if (name !== undefined && REGISTER_CALLS.has(name)) {
        const id = constants.resolve(node.arguments[0]);
        if (id === undefined) {
          scan.problems.push(`${where(node)}: ${name}() id is not a string constant`);
        } else {
          scan.registeredCommands.push({ value: id, where: where(node) });
        }
      } else if (name === 'affectsConfiguration') {
        const key = constants.resolve(node.arguments[0]);
        if (key === undefined) {
          scan.problems.push(`${where(node)}: affectsConfiguration() argument is not a string constant`);
        } else {
          scan.settingPrefixes.push({ value: key, where: where(node) });
        }
      } else if (name !== undefined && CONFIG_READS.has(name) && ts.isPropertyAccessExpression(node.expression)) {
        const receiver = node.expression.expression;
        const section = ts.isIdentifier(receiver) ? configVars.get(receiver.text) : sectionOf(receiver);
        if (section !== undefined) {
          const key = constants.resolve(node.arguments[0]);
          if (key === undefined) {
            scan.problems.push(`${where(node)}: configuration .${name}() key is not a string constant`);
          } else {
            scan.settingsRead.push({ value: section === '' ? key : `${section}.${key}`, where: where(node) });
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return scan;
}

/** Scans several sources together (constants defined in one file resolve in the others). */
export function scanSources(sources: ReadonlyArray<{ fileName: string; text: string }>): SourceScan {
  const files = sources.map((source) => parse(source.fileName, source.text));
  const constants = new Constants();
  files.forEach((file) => constants.add(file));
  const total: SourceScan = { registeredCommands: [], settingsRead: [], settingPrefixes: [], problems: [] };
  for (const file of files) {
    const scan = scanSourceFile(file, constants);
    total.registeredCommands.push(...scan.registeredCommands);
    total.settingsRead.push(...scan.settingsRead);
    total.settingPrefixes.push(...scan.settingPrefixes);
    total.problems.push(...scan.problems);
  }
  return total;
}

/** The extension's sources: every `.ts` file under `src/` except the tests. */
export function readExtensionSources(root: string): Array<{ fileName: string; text: string }> {
  const srcDir = path.join(root, 'src');
  const out: Array<{ fileName: string; text: string }> = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (full !== path.join(srcDir, 'test')) {
          walk(full);
        }
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        out.push({ fileName: full, text: fs.readFileSync(full, 'utf8') });
      }
    }
  };
  walk(srcDir);
  return out.sort((a, b) => a.fileName.localeCompare(b.fileName));
}

export interface Manifest {
  contributes?: {
    commands?: Array<{ command: string; title?: string; category?: string }>;
    configuration?: { properties?: Record<string, unknown> } | Array<{ properties?: Record<string, unknown> }>;
  };
}

export function contributedCommands(manifest: Manifest): string[] {
  return (manifest.contributes?.commands ?? []).map((c) => c.command);
}

export function contributedSettings(manifest: Manifest): string[] {
  const configuration = manifest.contributes?.configuration;
  const sections = Array.isArray(configuration) ? configuration : configuration === undefined ? [] : [configuration];
  return sections.flatMap((section) => Object.keys(section.properties ?? {}));
}

/**
 * Everything that disagrees between the sources and the manifest: commands registered but not
 * contributed, contributed but not registered, ids that belong to the server, settings read but not
 * declared, `affectsConfiguration` arguments that match no setting, and unscannable calls.
 */
export function manifestProblems(manifest: Manifest, scan: SourceScan, serverCommandIds: readonly string[]): string[] {
  const problems = [...scan.problems];
  const contributed = new Set(contributedCommands(manifest));
  const registered = new Set(scan.registeredCommands.map((c) => c.value));
  const settings = contributedSettings(manifest);
  for (const command of scan.registeredCommands) {
    if (serverCommandIds.includes(command.value)) {
      problems.push(`${command.where}: registers ${command.value}, which the language server owns (vscode-languageclient registers it)`);
    } else if (!contributed.has(command.value)) {
      problems.push(`${command.where}: registers ${command.value}, which package.json does not contribute`);
    }
  }
  for (const command of contributed) {
    if (!registered.has(command)) {
      problems.push(`package.json contributes ${command}, which the extension never registers`);
    }
  }
  for (const setting of scan.settingsRead) {
    if (setting.value.startsWith('docbridge.') && !settings.includes(setting.value)) {
      problems.push(`${setting.where}: reads ${setting.value}, which package.json does not declare`);
    }
  }
  for (const prefix of scan.settingPrefixes) {
    if (prefix.value.startsWith('docbridge') && !settings.some((s) => s === prefix.value || s.startsWith(`${prefix.value}.`))) {
      problems.push(`${prefix.where}: affectsConfiguration(${prefix.value}) matches no declared setting`);
    }
  }
  return problems;
}

// A tiny language server speaking LSP over stdio, standing in for `docbridge-lsp` in the end-to-end
// test. It answers the Doc Bridge commands with canned data and logs what it receives (one JSON object
// a line) to the file named by its first argument.

import * as fs from 'node:fs';

const logFile = process.argv[2];
const log = (entry: unknown) => fs.appendFileSync(logFile, `${JSON.stringify(entry)}\n`);
log({ started: process.argv.slice(3), cwd: process.cwd() });
// Never outlive a test run that went wrong.
setTimeout(() => process.exit(0), 60_000);

let nextId = 1000;
function send(message: Record<string, unknown>): void {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8');
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

const RESULTS = [
  {
    id: 'doc:docs/billing.md',
    kind: 'document',
    path: 'docs/billing.md',
    title: 'Billing',
    summary: 'How invoices are created.',
    score: 3.5,
    confidence: 'observed',
    provenance: 'markdown',
    location: { uri: `file://${process.argv[3] ?? '/tmp'}/docs/billing.md`, range: { start: { line: 2, character: 0 }, end: { line: 2, character: 7 } } },
  },
];

function executeCommand(id: number, command: string, args: unknown[]): void {
  switch (command) {
    case 'docbridge.search':
      send({ id, result: { query: args[0], results: String(args[0]).includes('bill') ? RESULTS : [] } });
      return;
    case 'docbridge.handoff':
      if (args[0] === 'nowhere') {
        send({ id, error: { code: -32602, message: 'Unknown reference "nowhere". Closest: src/app.ts, docs/billing.md' } });
      } else if (args[0] === 'no-markdown') {
        send({ id, result: { handoff: { target: 'no-markdown', startHere: ['docs/billing.md'] } } });
      } else {
        send({ id, result: { handoff: { target: args[0] }, markdown: `# Handoff for ${String(args[0])}\n` } });
      }
      return;
    case 'docbridge.lookup':
      if (args[0] === 'crash') {
        process.exit(1);
      }
      send({ id, result: { ref: args[0] } });
      return;
    case 'docbridge.reindex':
      send({ id, result: { files: 3, seconds: 0.5 } });
      return;
    case 'docbridge.render':
      if ((args[1] as { area?: string } | undefined)?.area === 'src/nowhere') {
        send({ id, error: { code: -32602, message: "There is no area 'src/nowhere'." } });
      } else {
        send({ id, result: { template: args[0], source: 'working tree', pages: [{ path: 'docs/areas/src-billing.md', hash: 'h', status: 'written' }] } });
      }
      return;
    default:
      send({ id, error: { code: -32601, message: `unknown command ${command}` } });
  }
}

function handle(message: any): void {
  log({ method: message.method, params: message.params, id: message.id, result: message.result });
  if (message.method === undefined) {
    return; // a response to one of our requests
  }
  switch (message.method) {
    case 'initialize':
      send({
        id: message.id,
        result: {
          capabilities: {
            executeCommandProvider: {
              commands: ['docbridge.search', 'docbridge.handoff', 'docbridge.lookup', 'docbridge.explain', 'docbridge.reindex', 'docbridge.render'],
            },
          },
          serverInfo: { name: 'fake-docbridge', version: '0' },
        },
      });
      return;
    case 'initialized':
      send({ id: nextId++, method: 'workspace/configuration', params: { items: [{ section: 'docbridge' }] } });
      send({ method: 'docbridge/status', params: { state: 'scanning', files: 0, findings: 0 } });
      send({ method: 'docbridge/status', params: { state: 'ready', files: 3, findings: 2 } });
      return;
    case 'workspace/executeCommand':
      executeCommand(message.id, message.params.command, message.params.arguments ?? []);
      return;
    case 'shutdown':
      send({ id: message.id, result: null });
      return;
    case 'exit':
      process.exit(0);
      return;
    default:
      if (message.id !== undefined) {
        send({ id: message.id, error: { code: -32601, message: `unhandled ${message.method}` } });
      }
  }
}

let buffer = Buffer.alloc(0);
process.stdin.on('data', (chunk: Buffer) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const headerEnd = buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) {
      return;
    }
    const match = /Content-Length: (\d+)/i.exec(buffer.subarray(0, headerEnd).toString('ascii'));
    const length = match ? Number(match[1]) : 0;
    if (buffer.length < headerEnd + 4 + length) {
      return;
    }
    const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
    buffer = buffer.subarray(headerEnd + 4 + length);
    handle(JSON.parse(body));
  }
});
process.stdin.on('end', () => process.exit(0));

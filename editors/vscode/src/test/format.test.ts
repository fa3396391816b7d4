import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  errorMessage,
  executeCommandParams,
  folderForUri,
  formatReindex,
  formatRender,
  formatStatus,
  parseDoctorGrade,
  handoffArguments,
  handoffDocumentPath,
  handoffMarkdown,
  joinUriPath,
  noResultsItem,
  oneLine,
  parseSearchResponse,
  parseStatus,
  renderArguments,
  renderHandoffFallback,
  resultTarget,
  searchArguments,
  searchFailedItem,
  settingKey,
  toQuickPickItem,
  workspaceRelativePath,
} from '../format';
import { SearchResult } from '../protocol';

const RESULT: SearchResult = {
  id: 'doc:docs/billing.md',
  kind: 'document',
  path: 'docs/billing.md',
  title: 'Billing',
  summary: 'How invoices\n  are created and paid.',
  score: 12.5,
  confidence: 'observed',
  provenance: 'markdown',
  location: {
    uri: 'file:///work/acme/docs/billing.md',
    range: { start: { line: 3, character: 0 }, end: { line: 3, character: 9 } },
  },
};

describe('searchArguments / handoffArguments / executeCommandParams', () => {
  test('search sends [query, limit] with the query trimmed', () => {
    assert.deepEqual(searchArguments('  invoice  ', 20), ['invoice', 20]);
  });
  test('search defaults the limit to 20 and rejects nonsense limits', () => {
    assert.deepEqual(searchArguments('x'), ['x', 20]);
    assert.deepEqual(searchArguments('x', 0), ['x', 20]);
    assert.deepEqual(searchArguments('x', 2.5), ['x', 20]);
    assert.deepEqual(searchArguments('x', -3), ['x', 20]);
  });
  test('search adds kinds only when given', () => {
    assert.deepEqual(searchArguments('x', 5, []), ['x', 5]);
    assert.deepEqual(searchArguments('x', 5, ['module', 'area']), ['x', 5, ['module', 'area']]);
  });
  test('handoff sends [ref], nothing for a blank ref', () => {
    assert.deepEqual(handoffArguments(' src/app.ts '), ['src/app.ts']);
    assert.equal(handoffArguments('   '), undefined);
  });
  test('executeCommand params', () => {
    assert.deepEqual(executeCommandParams('docbridge.reindex', []), { command: 'docbridge.reindex', arguments: [] });
  });
});

describe('parseSearchResponse / toQuickPickItem', () => {
  test('keeps well-formed results and drops junk', () => {
    const results = parseSearchResponse({
      query: 'bill',
      results: [RESULT, null, 42, {}, { id: '', path: '', title: '' }, { title: 'Only a title' }],
    });
    assert.equal(results.length, 2);
    assert.deepEqual(results[0], RESULT);
    assert.equal(results[1].title, 'Only a title');
    assert.equal(results[1].location, undefined);
  });
  test('a response without results is empty, not an exception', () => {
    assert.deepEqual(parseSearchResponse(null), []);
    assert.deepEqual(parseSearchResponse({ query: 'x' }), []);
    assert.deepEqual(parseSearchResponse('nope'), []);
  });
  test('drops a location without a uri and a malformed range', () => {
    const [noUri, badRange] = parseSearchResponse({
      results: [
        { ...RESULT, location: { range: RESULT.location?.range } },
        { ...RESULT, location: { uri: 'file:///a.md', range: { start: { line: 1 } } } },
      ],
    });
    assert.equal(noUri.location, undefined);
    assert.deepEqual(badRange.location, { uri: 'file:///a.md' });
  });
  test('label = icon + title, description = path, detail = kind · confidence · summary', () => {
    const item = toQuickPickItem(RESULT);
    assert.equal(item.label, '$(book) Billing');
    assert.equal(item.description, 'docs/billing.md');
    assert.equal(item.detail, 'document · observed · How invoices are created and paid.');
    assert.equal(item.alwaysShow, true);
    assert.equal(item.result, RESULT);
  });
  test('icons per kind, title falls back to path then id, no summary no trailing dot', () => {
    const area = toQuickPickItem({ ...RESULT, kind: 'area', title: '', summary: undefined, path: 'src/billing' });
    assert.equal(area.label, '$(folder) src/billing');
    assert.equal(area.detail, 'area · observed');
    const intent = toQuickPickItem({ ...RESULT, kind: 'intent', title: '', path: '', id: 'intent:refunds' });
    assert.equal(intent.label, '$(lightbulb) intent:refunds');
    assert.equal(intent.description, undefined);
    assert.match(toQuickPickItem({ ...RESULT, kind: 'weird' }).label, /^\$\(search\) /);
  });
  test('long summaries are cut', () => {
    const item = toQuickPickItem({ ...RESULT, summary: 'word '.repeat(100) });
    assert.ok((item.detail ?? '').length < 200);
    assert.ok((item.detail ?? '').endsWith('…'));
  });
  test('placeholder items carry no result', () => {
    assert.equal(noResultsItem('zzz').result, undefined);
    assert.match(noResultsItem('zzz').label, /zzz/);
    const failed = searchFailedItem(new Error('boom'));
    assert.equal(failed.result, undefined);
    assert.equal(failed.detail, 'boom');
  });
});

describe('parseStatus / formatStatus', () => {
  test('parses the docbridge/status params', () => {
    assert.deepEqual(parseStatus({ state: 'ready', files: 12, findings: 3 }), { state: 'ready', files: 12, findings: 3 });
    assert.deepEqual(parseStatus({ state: 'error', files: 0, findings: 0, message: 'bad config' }), {
      state: 'error',
      files: 0,
      findings: 0,
      message: 'bad config',
    });
    assert.deepEqual(parseStatus({ state: 'scanning', files: -1, findings: 'x' }), { state: 'scanning', files: 0, findings: 0 });
  });
  test('rejects unknown states', () => {
    assert.equal(parseStatus({ state: 'done', files: 1, findings: 1 }), undefined);
    assert.equal(parseStatus(undefined), undefined);
    assert.equal(parseStatus([]), undefined);
  });
  test('scanning spins', () => {
    const view = formatStatus({ state: 'scanning', files: 40, findings: 0 });
    assert.equal(view.text, '$(sync~spin) Doc Bridge: scanning…');
    assert.match(view.tooltip, /40 files/);
    assert.equal(view.tone, 'normal');
  });
  test('ready shows the number of findings, singular for one', () => {
    assert.equal(formatStatus({ state: 'ready', files: 10, findings: 7 }).text, '$(book) Doc Bridge: 7 findings');
    assert.equal(formatStatus({ state: 'ready', files: 10, findings: 1 }).text, '$(book) Doc Bridge: 1 finding');
    assert.equal(formatStatus({ state: 'ready', files: 10, findings: 0 }).text, '$(book) Doc Bridge: 0 findings');
    assert.match(formatStatus({ state: 'ready', files: 1, findings: 0 }).tooltip, /indexed 1 file and/);
  });
  test('ready with a doctor grade shows it', () => {
    const view = formatStatus({ state: 'ready', files: 10, findings: 7 }, 'B');
    assert.equal(view.text, '$(book) Doc Bridge: 7 findings · grade B');
    assert.match(view.tooltip, /Doctor grade B/);
    assert.equal(parseDoctorGrade([{ root: 'file:///r', grade: 'A', score: 95.1 }]), 'A');
    assert.equal(parseDoctorGrade([{ grade: 'excellent' }]), undefined);
    assert.equal(parseDoctorGrade({ grade: 'A' }), undefined);
    assert.equal(parseDoctorGrade([]), undefined);
  });
  test('error, missing server and failed start are flagged', () => {
    const error = formatStatus({ state: 'error', files: 0, findings: 0, message: 'config invalid' });
    assert.equal(error.tone, 'error');
    assert.match(error.tooltip, /config invalid/);
    const missing = formatStatus({ state: 'missing', command: 'docbridge-lsp' });
    assert.equal(missing.tone, 'warning');
    assert.match(missing.tooltip, /`docbridge-lsp` was not found/);
    assert.equal(formatStatus({ state: 'failed', message: 'exit 1' }).tone, 'error');
  });
  test('client states', () => {
    assert.equal(formatStatus({ state: 'starting' }).text, '$(sync~spin) Doc Bridge: starting…');
    assert.equal(formatStatus({ state: 'running' }).text, '$(book) Doc Bridge');
    assert.match(formatStatus({ state: 'stopped' }).text, /stopped/);
  });
  test('every tooltip says the click shows the output', () => {
    for (const state of ['starting', 'running', 'stopped'] as const) {
      assert.match(formatStatus({ state }).tooltip, /show the Doc Bridge output/);
    }
  });
});

describe('formatReindex', () => {
  test('formats files and seconds', () => {
    assert.equal(formatReindex({ files: 120, seconds: 2.345 }), 'Doc Bridge reindexed 120 files in 2.3 s');
    assert.equal(formatReindex({ files: 1, seconds: 0.25 }), 'Doc Bridge reindexed 1 file in 0.25 s');
    assert.equal(formatReindex({ files: 5000, seconds: 14.6 }), 'Doc Bridge reindexed 5000 files in 15 s');
    assert.equal(formatReindex({ files: 3, seconds: 1 }), 'Doc Bridge reindexed 3 files in 1 s');
  });
  test('a malformed response still gives a sentence', () => {
    assert.equal(formatReindex(null), 'Doc Bridge reindexed 0 files in 0 s');
    assert.equal(formatReindex({ files: 'many' }), 'Doc Bridge reindexed 0 files in 0 s');
  });
});

describe('render', () => {
  test('arguments: the template, and one page when asked for', () => {
    assert.deepEqual(renderArguments('llms.txt'), ['llms.txt']);
    assert.deepEqual(renderArguments('area', '  '), ['area']);
    assert.deepEqual(renderArguments('area', 'src/billing/'), ['area', { area: 'src/billing' }]);
    assert.deepEqual(renderArguments('ownership', 'acme-billing'), ['ownership', { record: 'acme-billing' }]);
  });
  test('the message counts written and unchanged pages', () => {
    const pages = [
      { path: 'docs/areas/src-api.md', hash: 'a', status: 'written' },
      { path: 'docs/areas/src-auth.md', hash: 'b', status: 'unchanged' },
    ];
    assert.equal(formatRender({ template: 'area', pages }), 'Doc Bridge rendered area: 1 page written, 1 unchanged');
    assert.equal(
      formatRender({ template: 'area', pages: pages.slice(0, 1) }),
      'Doc Bridge rendered area: 1 page written, 0 unchanged (docs/areas/src-api.md)',
    );
    assert.equal(formatRender(null), 'Doc Bridge rendered template: 0 pages written, 0 unchanged');
  });
});

describe('handoff', () => {
  const handoff = {
    target: { id: 'area:billing', path: 'src/billing', title: 'Billing', summary: 'Invoices and payments.' },
    startHere: [{ path: 'docs/billing.md', reason: 'covers src/billing' }, 'src/billing/index.ts'],
    readBeforeEditing: [{ path: 'docs/api.md', why: 'documents the endpoints' }],
    editRoots: ['src/billing/'],
    checks: [{ command: 'npm test -- billing', why: 'unit tests' }],
    related: [{ title: 'Payments', path: 'src/payments' }],
    explain: 'Chosen because docs/billing.md declares it covers src/billing.',
    evidence: [{ kind: 'covers', source: 'docs/billing.md' }],
    metadata: { generatedAt: 'now', version: 1 },
    owners: ['@team-billing'],
  };

  test("uses the server's markdown when present", () => {
    assert.equal(handoffMarkdown({ handoff, markdown: '# Server card\n' }, 'src/billing'), '# Server card\n');
  });

  test('falls back to a rendered card when markdown is missing or blank', () => {
    const md = handoffMarkdown({ handoff, markdown: '  ' }, 'src/billing');
    assert.equal(md, renderHandoffFallback(handoff, 'src/billing'));
  });

  test('the fallback card has the sections in order', () => {
    const md = renderHandoffFallback(handoff, 'src/billing');
    assert.ok(md.startsWith('# Handoff: Billing (src/billing)\n\nInvoices and payments.\n'));
    const order = ['## Start here', '## Read before editing', '## Edit roots', '## Checks', '## Related', '## Why these', '## Owners', '## Evidence', '## Metadata'];
    let last = -1;
    for (const heading of order) {
      const at = md.indexOf(heading);
      assert.ok(at > last, `${heading} after the previous section`);
      last = at;
    }
    assert.ok(md.includes('- `docs/billing.md` — covers src/billing'));
    assert.ok(md.includes('- `src/billing/index.ts`'));
    assert.ok(md.includes('- `docs/api.md` — documents the endpoints'));
    assert.ok(md.includes('- `npm test -- billing` — unit tests'));
    assert.ok(md.includes('- `src/payments` — Payments'));
    assert.ok(md.includes('Chosen because docs/billing.md declares it covers src/billing.'));
    assert.ok(md.includes('"generatedAt": "now"'));
    assert.ok(md.endsWith('\n'));
  });

  test('empty sections are left out; an empty handoff says so', () => {
    const md = renderHandoffFallback({ target: 'src/app.ts', startHere: [], checks: null }, 'x');
    assert.equal(md, '# Handoff: src/app.ts\n\n_The server returned an empty handoff._\n');
    assert.match(handoffMarkdown(undefined, 'src/app.ts'), /^# Handoff: src\/app\.ts/);
  });

  test('strings with spaces are prose, objects without a label are inline JSON, backticks survive', () => {
    const md = renderHandoffFallback({ target: 't', startHere: ['read the intro first', { weight: 2 }, 'a`b'] });
    assert.ok(md.includes('- read the intro first'));
    assert.ok(md.includes('- `{"weight":2}`'));
    assert.ok(md.includes('- `` a`b ``'));
  });

  test('virtual document path ends in .md and keeps the reference readable', () => {
    assert.equal(handoffDocumentPath('src/billing/index.ts'), '/Handoff/src/billing/index.ts.md');
    assert.equal(handoffDocumentPath('area:billing'), '/Handoff/area:billing.md');
    assert.equal(handoffDocumentPath('\\\\win\\path?#'), '/Handoff/win/path__.md');
    assert.equal(handoffDocumentPath('  '), '/Handoff/handoff.md');
  });
});

describe('workspaceRelativePath / folderForUri / joinUriPath / resultTarget', () => {
  const folders = [
    { uri: 'file:///work/acme', name: 'acme' },
    { uri: 'file:///work/acme/packages/web', name: 'web' },
    { uri: 'file:///c%3A/Users/me/repo', name: 'win' },
  ];

  test('path relative to the containing folder', () => {
    assert.equal(workspaceRelativePath('file:///work/acme/src/app.ts', folders), 'src/app.ts');
  });
  test('the deepest folder wins for nested folders', () => {
    assert.equal(workspaceRelativePath('file:///work/acme/packages/web/src/main.tsx', folders), 'src/main.tsx');
    assert.equal(folderForUri('file:///work/acme/packages/web/src/main.tsx', folders)?.folder.name, 'web');
  });
  test('percent-encoding is decoded', () => {
    assert.equal(workspaceRelativePath('file:///work/acme/docs/my%20notes.md', folders), 'docs/my notes.md');
  });
  test('Windows drive letters compare case-insensitively', () => {
    assert.equal(workspaceRelativePath('file:///C%3A/Users/me/repo/src/a.ts', folders), 'src/a.ts');
  });
  test('outside every folder, a sibling with a common prefix, another scheme, a folder itself: undefined', () => {
    assert.equal(workspaceRelativePath('file:///tmp/x.ts', folders), undefined);
    assert.equal(workspaceRelativePath('file:///work/acme-other/x.ts', folders), undefined);
    assert.equal(workspaceRelativePath('untitled:Untitled-1', folders), undefined);
    assert.equal(workspaceRelativePath('file:///work/acme', folders), undefined);
    assert.equal(workspaceRelativePath('file:///work/acme/x.ts', []), undefined);
  });
  test('joinUriPath encodes segments and ignores slashes', () => {
    assert.equal(joinUriPath('file:///work/acme/', 'docs/my notes.md'), 'file:///work/acme/docs/my%20notes.md');
    assert.equal(joinUriPath('file:///work/acme', './src\\a.ts'), 'file:///work/acme/src/a.ts');
    assert.equal(joinUriPath('file:///work/acme', ''), 'file:///work/acme');
  });
  test('resultTarget prefers the location, else the path in the first folder', () => {
    assert.deepEqual(resultTarget(RESULT, folders), { uri: RESULT.location?.uri, range: RESULT.location?.range });
    assert.deepEqual(resultTarget({ ...RESULT, location: { uri: 'file:///x.md' } }, folders), { uri: 'file:///x.md' });
    assert.deepEqual(resultTarget({ ...RESULT, location: undefined, path: 'src/billing' }, folders), {
      uri: 'file:///work/acme/src/billing',
    });
    assert.equal(resultTarget({ ...RESULT, location: undefined, path: '' }, folders), undefined);
    assert.equal(resultTarget({ ...RESULT, location: undefined }, []), undefined);
  });
});

describe('small helpers', () => {
  test('errorMessage', () => {
    assert.equal(errorMessage(new Error('boom')), 'boom');
    assert.equal(errorMessage('plain'), 'plain');
    assert.equal(errorMessage({ code: -32602, message: 'Unknown ref "x". Closest: a, b' }), 'Unknown ref "x". Closest: a, b');
    assert.equal(errorMessage({ code: 1 }), '{"code":1}');
    assert.equal(errorMessage(undefined), 'undefined');
  });
  test('oneLine', () => {
    assert.equal(oneLine(' a\n\tb  c '), 'a b c');
    assert.equal(oneLine('abcdef', 4), 'abc…');
  });
  test('settingKey', () => {
    assert.equal(settingKey('server.command'), 'docbridge.server.command');
  });
});

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';

import { debounce, LatestOnly } from '../async';

describe('debounce', () => {
  test('calls once, with the last arguments, after the quiet period', async () => {
    const calls: string[] = [];
    const fn = debounce((value: string) => calls.push(value), 30);
    fn('i');
    fn('in');
    fn('inv');
    assert.deepEqual(calls, []);
    await sleep(80);
    assert.deepEqual(calls, ['inv']);
  });

  test('separate bursts call separately', async () => {
    const calls: string[] = [];
    const fn = debounce((value: string) => calls.push(value), 20);
    fn('a');
    await sleep(60);
    fn('b');
    await sleep(60);
    assert.deepEqual(calls, ['a', 'b']);
  });

  test('cancel drops the pending call', async () => {
    const calls: string[] = [];
    const fn = debounce((value: string) => calls.push(value), 20);
    fn('a');
    fn.cancel();
    fn.cancel();
    await sleep(60);
    assert.deepEqual(calls, []);
  });
});

describe('LatestOnly', () => {
  test('only the newest ticket is current', () => {
    const latest = new LatestOnly();
    const first = latest.next();
    assert.equal(latest.isLatest(first), true);
    const second = latest.next();
    assert.equal(latest.isLatest(first), false);
    assert.equal(latest.isLatest(second), true);
  });

  test('a slow answer to an older query does not win', async () => {
    const latest = new LatestOnly();
    const shown: string[] = [];
    const query = async (text: string, delayMs: number) => {
      const ticket = latest.next();
      await sleep(delayMs);
      if (latest.isLatest(ticket)) {
        shown.push(text);
      }
    };
    await Promise.all([query('slow old', 50), query('fast new', 5)]);
    assert.deepEqual(shown, ['fast new']);
  });

  test('invalidate makes every ticket stale', () => {
    const latest = new LatestOnly();
    const ticket = latest.next();
    latest.invalidate();
    assert.equal(latest.isLatest(ticket), false);
  });
});

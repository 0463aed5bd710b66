import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { didYouMean, MAX_GUESSABLE_LENGTH } from '../../src/cli/index.js';
import { MAX_LISTED_UNKNOWN_KEYS } from '../../src/config/rc-source.js';
import { MAX_QUOTED_CHARS } from '../../src/config/shorten.js';
import { rcSandbox } from './support.js';

const sandbox = rcSandbox({ beforeEach, afterEach });
const { write, resolveIn } = sandbox;
const codes = (r: { errors: { code: string }[] }) => r.errors.map((e) => e.code);

describe('rc files that are not files', () => {
  it('names a named pipe found by the search instead of blocking on it', async () => {
    execFileSync('mkfifo', [path.join(sandbox.dir(), '.routerrc')]);
    const r = await resolveIn();
    expect(codes(r)).toEqual(['RCTL_E_PARSE_RC_NOT_FOUND']);
    expect(r.errors[0]!.message).toBe('cannot read .routerrc: it is a named pipe, not a file; remove it or pass --config');
  });

  it('names a named pipe given with --config', async () => {
    execFileSync('mkfifo', [path.join(sandbox.dir(), 'pipe')]);
    const r = await resolveIn('.', 'pipe');
    expect(r.errors.map((e) => e.message)).toEqual(['cannot read --config pipe: it is a named pipe, not a file']);
  });

  it('names a directory given with --config', async () => {
    await mkdir(path.join(sandbox.dir(), 'conf.d'));
    const r = await resolveIn('.', 'conf.d');
    expect(r.errors.map((e) => e.message)).toEqual(['cannot read --config conf.d: it is a directory']);
  });

  it('passes over a directory at a search place, as cosmiconfig does', async () => {
    await mkdir(path.join(sandbox.dir(), 'app', '.routerrc'), { recursive: true });
    await write('.routerrc', 'worker-queue-limit: 5\n');
    const r = await resolveIn('app');
    expect(r.errors).toEqual([]);
    expect(r.config.workerQueueLimit).toBe(5);
  });
});

describe('rc files that load to nothing usable', () => {
  it('refuses a null rc where it stands instead of searching past it', async () => {
    await write('.routerrc', 'worker-queue-limit: 5\n');
    await write('app/.routerrc', 'null\n');
    const r = await resolveIn('app');
    expect(r.errors.map((e) => [e.code, e.message])).toEqual([
      ['RCTL_E_PARSE_RC_SHAPE', '.routerrc must hold a mapping of settings to values, found null'],
    ]);
    expect(r.config.workerQueueLimit).toBeNull();
  });

  it('refuses a JavaScript config whose default export is null', async () => {
    await write('routerctl.config.mjs', 'export default null;\n');
    const r = await resolveIn();
    expect(r.errors.map((e) => e.message)).toEqual(['routerctl.config.mjs must hold a mapping of settings to values, found null']);
  });

  it('gives up on a config module that never finishes loading, and names it', async () => {
    await write('routerctl.config.mjs', 'await new Promise((r) => setTimeout(r, 60_000));\nexport default {};\n');
    const r = await resolveIn();
    expect(r.errors.map((e) => [e.code, e.message])).toEqual([
      ['RCTL_E_PARSE_RC_TIMEOUT', 'loading routerctl.config.mjs did not finish within 2 s; a config module must not wait on anything'],
    ]);
  });
});

describe('rc files too large to list', () => {
  it('lists the first unknown keys one by one and counts the rest in one line', async () => {
    const data: Record<string, number> = {};
    for (let i = 0; i < 200_000; i++) data[`key${i}`] = i;
    await write('.routerrc.json', JSON.stringify(data));
    const r = await resolveIn();
    expect(r.errors).toHaveLength(MAX_LISTED_UNKNOWN_KEYS + 1);
    expect(r.errors.at(-1)).toMatchObject({
      code: 'RCTL_E_PARSE_TOO_MANY_UNKNOWN_KEYS',
      message: `.routerrc.json has ${200_000 - MAX_LISTED_UNKNOWN_KEYS} more unknown keys (200000 in all); is it a routerctl rc file?`,
    });
  });

  it('quotes a 4 MiB value back in one short line, without a suggestion', async () => {
    await write('.routerrc.json', JSON.stringify({ policy: 'x'.repeat(4 << 20), 'worker-queue-limit': 'y'.repeat(1 << 20) }));
    const r = await resolveIn();
    expect(codes(r)).toEqual(['RCTL_E_PARSE_INVALID_CHOICE', 'RCTL_E_PARSE_NOT_A_NUMBER']);
    for (const e of r.errors) {
      expect(e.message.length).toBeLessThan(MAX_QUOTED_CHARS + 200);
      expect(e.message).not.toContain('did you mean');
      expect(e.message).toMatch(/… \(\d+ characters\)/);
    }
  });

  it('an unknown key of a megabyte is shortened too', async () => {
    await write('.routerrc.json', JSON.stringify({ ['k'.repeat(1 << 20)]: 1 }));
    const r = await resolveIn();
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]!.message.length).toBeLessThan(MAX_QUOTED_CHARS + 200);
  });
});

describe('did you mean', () => {
  it.each([
    ['worker-queue-limt', 'worker-queue-limit'],
    ['cache_awrae', 'cache_aware'],
    ['x'.repeat(MAX_GUESSABLE_LENGTH + 1), undefined],
    ['worker-queue-limit'.repeat(4), undefined],
  ])('%s → %s', (typed, expected) => {
    expect(didYouMean(typed, ['worker-queue-limit', 'cache_aware', 'round_robin'])).toBe(expected);
  });
});

import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, repoRoot, runCli } from './support.js';

// serve is another area's command; these parity checks start once it is registered.
const serveExists = existsSync(path.join(repoRoot, 'commands/serve.ts'));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function portIsFree(port: number): Promise<boolean> {
  const s = createServer();
  return new Promise((resolve) => {
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'routerctl-serve-config-'));
});
afterEach(async () => rm(root, { recursive: true, force: true }));

describe.skipIf(!serveExists)('serve refuses an invalid configuration exactly as check-config reports it', () => {
  beforeAll(() => assertBuilt());

  it.each([
    ['a value error under another policy', ['--policy', 'round_robin', '--worker-queue-limit', '0'], null],
    ['a policy error', ['--policy', 'round_robin', '--worker-queue-limit', '4'], null],
    ['a parse error', ['--worker-queue-limt', '4'], null],
    ['an rc value', [], 'saturation-queue-floor: 5\nworker-queue-limit: 4\n'],
    ['a broken rc file', [], 'policy: cache_aware\n  worker-queue-limit: 4\n'],
  ] as [string, string[], string | null][])('%s', async (_name, args, rcText) => {
    if (rcText !== null) await writeFile(path.join(root, '.routerrc'), rcText);
    const check = await runCli(['check-config', ...args], { cwd: root, home: root });
    expect(check.code).toBe(1);
    const expected = check.stdout.split('\n')[0]!;
    expect(expected).toMatch(/^error RCTL_E_/);

    const port = await freePort();
    const serve = await runCli(['serve', '--no-tui', '--port', String(port), ...args], { cwd: root, home: root, timeoutMs: 15_000 });
    expect(serve.code).not.toBe(0);
    expect(serve.code).not.toBe(-1);
    expect(serve.stderr.split('\n')[0]).toBe(expected);
    expect(`${serve.stdout}${serve.stderr}`).not.toMatch(/listening/i);
    expect(await portIsFree(port)).toBe(true);
  });
});

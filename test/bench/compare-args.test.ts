import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import bench from '../../commands/bench.js';
import { OPTIONS } from '../../src/config/index.js';

/** Parse a bench command line in-process, without running the benchmark. */
async function parseBench(args: string[]): Promise<Record<string, unknown>> {
  let parsed: Record<string, unknown> = {};
  await yargs(args)
    .command({ ...bench, handler: (argv) => void (parsed = argv as Record<string, unknown>) })
    .strict()
    .exitProcess(false)
    .fail((msg, err) => {
      throw err ?? new Error(msg);
    })
    .parseAsync();
  return parsed;
}

const reserved = new Set(['worker-urls', 'sim-workers', 'sim-rate', 'port', 'host', 'tui']);

describe('--compare values', () => {
  it.each(OPTIONS.map((o) => o.flag).filter((f) => !reserved.has(f)))(
    '"--%s …" stays one configuration, not a bench flag',
    async (flag) => {
      const argv = await parseBench(['bench', '--compare', `--${flag} 1`, `--${flag}=2`, `--${flag}`, '--json']);
      expect(argv.compare).toEqual([`--${flag} 1`, `--${flag}=2`, `--${flag}`]);
      expect(argv.json).toBe(true);
    },
  );

  it('an empty configuration means the defaults', async () => {
    expect((await parseBench(['bench', '--compare', '', '--policy round_robin'])).compare).toEqual(['', '--policy round_robin']);
  });
});

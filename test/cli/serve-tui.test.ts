import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../helpers/cli.js';
import { describeWithPeers } from '../helpers/peers.js';

/**
 * `routerctl serve` in a real terminal, driven through tmux: the console must come up
 * on the embedded default, show it working, and leave nothing behind on q. Each test
 * has its own tmux server (-L), killed afterwards whatever happens.
 */
let servers: string[] = [];

afterEach(() => {
  for (const s of servers) spawnSync('tmux', ['-L', s, 'kill-server']);
  servers = [];
});

function tmux(server: string, ...args: string[]): string {
  return execFileSync('tmux', ['-L', server, ...args], { encoding: 'utf8' });
}

function startInTmux(args: string[], size = { x: 120, y: 40 }): { server: string; capture(): string; panePid(): number } {
  const server = `rctl-${process.pid}-${servers.length}-${Date.now()}`;
  servers.push(server);
  // As an operator's terminal: React's production build (vitest sets NODE_ENV=test) and
  // no CI variable (Ink then draws only the last frame). A shell that outlives routerctl
  // so its exit status can be read off the screen.
  const cmd = `env -u NODE_ENV -u CI NO_COLOR=1 ${process.execPath} ${BIN} ${args.join(' ')}; echo EXIT=$?; sleep 60`;
  tmux(server, 'new-session', '-d', '-s', 'main', '-x', String(size.x), '-y', String(size.y), cmd);
  return {
    server,
    capture: () => tmux(server, 'capture-pane', '-p', '-t', 'main'),
    panePid: () => Number(tmux(server, 'list-panes', '-t', 'main', '-F', '#{pane_pid}').trim()),
  };
}

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs: number, last: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${last()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Every process below `pid` (the pane's shell), deepest last. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const kids = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);
  for (const k of kids) out.push(k, ...descendants(k));
  return out;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
};

describeWithPeers(['tmux'], 'routerctl serve on a terminal', () => {
  it('shows live queues, gate rejections and the diverted histogram on the embedded default; q drains, exits 0, leaves no process', async () => {
    const t = startInTmux(['serve', '--worker-queue-limit', '6', '--port', '0']);
    const queueRows = (s: string): string[] => s.split('\n').filter((l) => /^127\.0\.0\.1:\d+ .* \d+\/6 /.test(l));
    await until('four live worker rows', () => queueRows(t.capture()).length === 4, 15_000, t.capture);
    const screen = t.capture();
    expect(screen).toMatch(
      /^routerctl serve\s+SIMULATED\s+cache_aware\s+limit 6\s+floor –\s+up \S+\s+sim-llama-3\.1-8b\s+min-load 2\s+127\.0\.0\.1:\d+/,
    );
    expect(screen).toContain('source admin API');

    // Gate rejections show as GATED rows or a non-zero REJ/s; the embedded default's
    // shape diverts in every burst (docs/simulator.md §The embedded default), so the
    // histogram of the overlap the diversions gave up fills within the first minute.
    let rejected = false;
    await until(
      'a gate rejection and diversions in the diverted-overlap histogram',
      () => {
        const s = t.capture();
        if (queueRows(s).some((l) => / GATED /.test(l) || /\s(?!0\s)\d+(\.\d)?\s+(closed|open|half)\s*$/.test(l))) rejected = true;
        const panel = /DIVERTED OVERLAP\s+[1-9]\d* diversions?/.test(s) && /≤\d+\s+blk ≈[\d.]+k?\s+tok █/.test(s);
        return rejected && panel;
      },
      75_000,
      t.capture,
    );

    const procs = descendants(t.panePid()).filter((p) => cmdline(p).includes('node'));
    expect(procs.length).toBeGreaterThanOrEqual(3); // console, router, simulated fleet
    tmux(t.server, 'send-keys', '-t', 'main', 'q');
    await until('exit status 0', () => t.capture().includes('EXIT=0'), 30_000, t.capture);
    await until(
      'no routerctl process left',
      () => procs.every((p) => !alive(p)),
      5000,
      () => procs.filter(alive).map(cmdline).join('\n'),
    );
  }, 150_000);

  it('at 80×24 for 20 s: every element, no line wider than the terminal, the frame one row short of it, latency and an event line, no escape codes under NO_COLOR', async () => {
    const size = { x: 80, y: 24 };
    const t = startInTmux(['serve', '--worker-queue-limit', '6', '--port', '0'], size);
    const queueRows = (s: string): string[] => s.split('\n').filter((l) => /^127\.0\.0\.1:\d+ .* \d+\/6 /.test(l));
    await until('four live worker rows', () => queueRows(t.capture()).length === 4, 15_000, t.capture);
    const started = Date.now();
    const seen = { latency: false, event: false, diverted: false, rejections: false };
    let frames = 0;
    // 20 s of frames at least; on a loaded machine the first latency figure may need longer.
    const allSeen = (): boolean => seen.latency && seen.event && seen.diverted;
    while (Date.now() - started < 20_000 || (!allSeen() && Date.now() - started < 45_000)) {
      // -J joins a line the terminal wrapped, so a line drawn too wide shows as one longer line; -e keeps escape codes.
      const joined = tmux(t.server, 'capture-pane', '-p', '-J', '-t', 'main');
      const raw = tmux(t.server, 'capture-pane', '-p', '-e', '-t', 'main');
      const lines = joined.replace(/\n$/, '').split('\n');
      frames++;
      for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(size.x);
      expect(lines.length).toBeLessThanOrEqual(size.y);
      // The frame is rows - 1 tall: the last row stays empty.
      expect(lines[size.y - 1]?.trim() ?? '').toBe('');
      expect(raw).not.toMatch(/\x1b\[/);
      // Every required element, every frame: the header with the limit, the worker table with its queues and gate column, the decisions, the footer's keys.
      const screen = lines.join('\n');
      expect(screen).toMatch(/^routerctl serve .*limit 6/);
      expect(screen).toMatch(/WORKER .*WAIT.*REJ\/s/);
      expect(queueRows(screen)).toHaveLength(4);
      expect(screen).toMatch(/decisions\/s\s+hit /);
      expect(screen).toMatch(/q (quit|stop)/);
      // Once a request has finished, the header always says something of the window's
      // latency: its figures, or that none finished in it (the embedded default's bursts
      // hold every decode behind prefill for tens of seconds at a time).
      const latency = /e2e( p50 (> )?[\d.]+ ?(ms|s) p99|: none finished in 5s)/.test(screen);
      if (seen.latency) expect(latency, screen).toBe(true);
      if (latency) seen.latency = true;
      if (/^EVENT \d\d:\d\d:\d\d\s+\S/m.test(screen)) seen.event = true;
      if (/DIVERTED OVERLAP/.test(screen)) seen.diverted = true;
      if (queueRows(screen).some((l) => / GATED /.test(l) || /\s(?!0\s)\d+(\.\d)?\s+(closed|open|half)\s*$/.test(l)))
        seen.rejections = true;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(frames).toBeGreaterThan(20);
    expect(seen).toMatchObject({ latency: true, event: true, diverted: true });
    tmux(t.server, 'send-keys', '-t', 'main', 'q');
    await until('exit status 0', () => t.capture().includes('EXIT=0'), 30_000, t.capture);
  }, 120_000);

  it('a router that dies is reported in the console with its exit status and log, and q then exits 1', async () => {
    const t = startInTmux(['serve', '--port', '0'], { x: 100, y: 30 });
    await until('the console', () => /^127\.0\.0\.1:\d+ /m.test(t.capture()), 15_000, t.capture);
    const procs = descendants(t.panePid());
    const child = procs.find((p) => cmdline(p).includes('router-child.js'));
    expect(child).toBeDefined();
    process.kill(child!, 'SIGKILL');
    await until('the crash panel', () => /ROUTER EXITED .*signal SIGKILL/.test(t.capture()), 10_000, t.capture);
    expect(t.capture()).toContain('router listening');
    tmux(t.server, 'send-keys', '-t', 'main', 'q');
    await until('exit status 1', () => t.capture().includes('EXIT=1'), 10_000, t.capture);
    await until(
      'no routerctl process left',
      () => procs.filter((p) => cmdline(p).includes('node')).every((p) => !alive(p)),
      10_000,
      t.capture,
    );
  }, 60_000);

  it('--no-tui on a terminal prints the URL and log lines, no console', async () => {
    // No synthetic traffic: with --shutdown-drain-secs 0, requests in flight would be cut and Ctrl-C would exit 130.
    const t = startInTmux(['serve', '--no-tui', '--port', '0', '--shutdown-drain-secs', '0', '--sim-rate', '0'], { x: 120, y: 30 });
    await until('the URL', () => /^http:\/\/127\.0\.0\.1:\d+$/m.test(t.capture()), 15_000, t.capture);
    await until('a log line', () => /INFO\s+router listening/.test(t.capture()), 5000, t.capture);
    expect(t.capture()).not.toContain('WORKER');
    tmux(t.server, 'send-keys', '-t', 'main', 'C-c');
    await until('exit status 0', () => t.capture().includes('EXIT=0'), 45_000, t.capture);
  }, 60_000);
});

describe('routerctl serve without a terminal', () => {
  it('draws nothing: the URL on stdout first, logs on stderr, no escape codes', async () => {
    const cli = startCli(['serve', '--port', '0', '--shutdown-drain-secs', '0', '--sim-rate', '0']);
    try {
      const [url] = await cli.waitFor(/^http:\/\/127\.0\.0\.1:\d+\n/, 15_000);
      expect(cli.stdout().startsWith(url)).toBe(true);
      expect(cli.stdout() + cli.stderr()).not.toMatch(/\u001b/);
    } finally {
      cli.child.kill('SIGINT');
      await cli.exited(40_000);
    }
  }, 60_000);
});

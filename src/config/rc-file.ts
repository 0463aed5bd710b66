import { access, readFile, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cosmiconfig, defaultLoaders } from 'cosmiconfig';
import type { Loader } from 'cosmiconfig';
import { locateJsonError } from './json-error-position.js';
import type { Origin } from './origin.js';
import { problem } from './problem.js';
import type { ConfigProblem } from './problem.js';

/**
 * Search order inside one folder; the first that exists wins. rc files come before
 * package.json because a `routerctl` key in package.json would otherwise shadow a
 * `.routerrc` next to it (docs/dependencies.md §Rc files before package.json). No
 * `.ts`: cosmiconfig compiles it by writing a file next to it, and check-config
 * promises never to write files.
 */
export const RC_SEARCH_PLACES = [
  '.routerrc',
  '.routerrc.json',
  '.routerrc.yaml',
  '.routerrc.yml',
  'routerctl.config.js',
  'routerctl.config.mjs',
  'routerctl.config.cjs',
  'package.json',
] as const;

export const PACKAGE_PROP = 'routerctl';

export type RcResult =
  | { kind: 'none' }
  | {
      kind: 'loaded';
      file: string;
      /** Relative to the cwd when that is shorter; what origins and messages show. */
      display: string;
      /** `routerctl.` inside package.json, so an origin reads `package.json:routerctl.policy`. */
      keyPrefix: string;
      data: Record<string, unknown>;
      /** Other rc candidates in the same folder, shadowed by `file`. */
      shadowed: string[];
    }
  | { kind: 'failed'; problem: ConfigProblem };

class RcSyntaxError extends Error {
  constructor(
    readonly reason: string,
    readonly line: number | null,
    readonly column: number | null,
  ) {
    super(reason);
  }
}

const loadJson: Loader = (_filepath, content) => {
  try {
    return JSON.parse(content) as unknown;
  } catch (err) {
    const at = locateJsonError(content);
    if (at) throw new RcSyntaxError(at.reason, at.line, at.column);
    throw new RcSyntaxError(firstLine(err), null, null);
  }
};

/** A file that loads to nothing usable at the top: `null` in YAML or JSON, `export default null`. */
class RcShapeError extends Error {}

/**
 * cosmiconfig takes a loader's null to mean "no config here" and keeps searching
 * upward, so a `.routerrc` holding `null` would silently hand the run to some other
 * folder's rc file. Refuse it where it stands instead.
 */
function refuseNull(loader: Loader): Loader {
  return async (filepath, content) => {
    const value = (await loader(filepath, content)) as unknown;
    if (value === null) throw new RcShapeError('null');
    return value;
  };
}

/**
 * A config module can await forever (a top-level await on a server, a pipe). Loading
 * is given this long; check-config must answer within a second or two whatever the
 * file does.
 */
export const RC_LOAD_TIMEOUT_MS = 2000;

const refuseTypeScript: Loader = () => {
  throw new RcSyntaxError('TypeScript config files are not supported; use routerctl.config.js, .mjs or .cjs', null, null);
};

const loadYaml = defaultLoaders['.yaml'];

/**
 * cosmiconfig's JS loader retries a failed import() with require(), which replaces a
 * config's own syntax error with an unrelated "Cannot require() ES Module"; import()
 * alone loads ESM and CommonJS alike and keeps the real error. The mtime in the URL
 * lets a long-lived process see an edited file instead of the module cache.
 */
const loadJs: Loader = async (filepath) => {
  const real = await realpath(filepath);
  const { mtimeMs } = await stat(real);
  const module = (await import(`${pathToFileURL(real).href}?mtime=${mtimeMs}`)) as { default?: unknown };
  return module.default;
};

/**
 * Find and read the rc file: the explicit `--config` path, or a search from `cwd`
 * upward (through the home folder, then `~/.config/routerctl/config*`). Never throws
 * for a user's mistake: a missing, unreadable or malformed file comes back as one
 * parse-class problem whose message names the file and, when known, the position.
 */
export async function loadRcFile(options: { cwd: string; configPath?: string; configOrigin?: Origin }): Promise<RcResult> {
  const { cwd, configPath } = options;
  let file: string | null = configPath === undefined ? null : path.resolve(cwd, configPath);
  let result: { config: unknown; filepath: string; isEmpty?: boolean } | null;
  try {
    // Inside the try: cosmiconfig reads the cwd's package.json for its own settings
    // as soon as it is created, and a broken one must be a problem, not a crash.
    const explorer = makeExplorer();
    if (file !== null) {
      let why: string | null;
      try {
        await access(file);
        why = notARegularFile(await stat(file));
      } catch (err) {
        why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : firstLine(err);
      }
      if (why !== null) {
        return {
          kind: 'failed',
          problem: problem('PARSE_RC_NOT_FOUND', `cannot read --config ${displayPath(cwd, file)}: ${why}`, {
            flag: '--config',
            origin: options.configOrigin?.label ?? 'flag',
          }),
        };
      }
      const explicit = file;
      result = await withinTimeout(explorer.load(explicit), explicit);
    } else {
      const first = await firstSearchPlace(cwd);
      if (first?.why) {
        return {
          kind: 'failed',
          problem: problem('PARSE_RC_NOT_FOUND', `cannot read ${displayPath(cwd, first.file)}: ${first.why}; remove it or pass --config`, {
            origin: displayPath(cwd, first.file),
          }),
        };
      }
      result = await withinTimeout(explorer.search(cwd), first?.file ?? null);
    }
  } catch (err) {
    const failed = (err as { filepath?: unknown }).filepath;
    if (typeof failed === 'string') file = failed;
    if (err instanceof RcTimeoutError) {
      const where = err.file ?? file;
      const display = where === null ? 'the config file' : displayPath(cwd, where);
      return {
        kind: 'failed',
        problem: problem(
          'PARSE_RC_TIMEOUT',
          `loading ${display} did not finish within ${RC_LOAD_TIMEOUT_MS / 1000} s; a config module must not wait on anything`,
          { origin: where === null ? null : display },
        ),
      };
    }
    if (err instanceof RcShapeError) {
      const display = file === null ? 'the config file' : displayPath(cwd, file);
      return {
        kind: 'failed',
        problem: problem('PARSE_RC_SHAPE', `${display} must hold a mapping of settings to values, found null`, { origin: display }),
      };
    }
    return { kind: 'failed', problem: syntaxProblem(cwd, file, err) };
  }
  if (result === null) {
    if (file === null) return { kind: 'none' };
    // An explicit package.json without a `routerctl` key: say so rather than run on defaults.
    const display = displayPath(cwd, file);
    return {
      kind: 'failed',
      problem: problem('PARSE_RC_SHAPE', `${display} has no "${PACKAGE_PROP}" key`, { flag: '--config', origin: display }),
    };
  }

  const found = result.filepath;
  const display = displayPath(cwd, found);
  const keyPrefix = path.basename(found) === 'package.json' ? `${PACKAGE_PROP}.` : '';
  const data = result.isEmpty ? {} : result.config;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    const got = Array.isArray(data) ? 'a list' : data === null ? 'null' : typeof data;
    return {
      kind: 'failed',
      problem: problem('PARSE_RC_SHAPE', `${display} must hold a mapping of settings to values, found ${got}`, { origin: display }),
    };
  }
  const shadowed = configPath === undefined ? await shadowedCandidates(found) : [];
  return { kind: 'loaded', file: found, display, keyPrefix, data: data as Record<string, unknown>, shadowed };
}

function makeExplorer(): ReturnType<typeof cosmiconfig> {
  return cosmiconfig('routerctl', {
    searchPlaces: [...RC_SEARCH_PLACES],
    packageProp: PACKAGE_PROP,
    searchStrategy: 'global',
    cache: false,
    loaders: {
      '.json': refuseNull(loadJson),
      '.yaml': refuseNull(loadYaml),
      '.yml': refuseNull(loadYaml),
      noExt: refuseNull(loadYaml),
      // `.routerrc.example` and other hand-named files: YAML, which also reads JSON.
      default: refuseNull(loadYaml),
      '.js': refuseNull(loadJs),
      '.mjs': refuseNull(loadJs),
      '.cjs': refuseNull(loadJs),
      '.ts': refuseTypeScript,
      '.mts': refuseTypeScript,
      '.cts': refuseTypeScript,
    },
  });
}

class RcTimeoutError extends Error {
  constructor(readonly file: string | null) {
    super('rc file load timed out');
  }
}

/** The load, or an RcTimeoutError after RC_LOAD_TIMEOUT_MS; the timer never holds the process. */
async function withinTimeout<T>(load: Promise<T>, file: string | null): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RcTimeoutError(file)), RC_LOAD_TIMEOUT_MS);
  });
  try {
    return await Promise.race([load, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why a path that exists cannot be an rc file, or null when it is a regular file. */
function notARegularFile(st: Stats): string | null {
  if (st.isFile()) return null;
  if (st.isDirectory()) return 'it is a directory';
  if (st.isFIFO()) return 'it is a named pipe, not a file';
  if (st.isSocket()) return 'it is a socket, not a file';
  return 'it is a device, not a file';
}

/**
 * cosmiconfig skips a directory at a search place but reads anything else, and
 * reading a named pipe or a device blocks for ever. Walk the places it would walk
 * (the cwd up to the home folder, or to the root outside it), in its order, to the
 * first thing that is not a directory: the file it will read (`why` absent), or one
 * it must not try to (`why` says what it is).
 */
async function firstSearchPlace(cwd: string): Promise<{ file: string; why?: string } | null> {
  const home = os.homedir();
  const underHome = home !== '' && (cwd === home || cwd.startsWith(home + path.sep));
  let dir = path.resolve(cwd);
  for (;;) {
    for (const place of RC_SEARCH_PLACES) {
      const file = path.join(dir, place);
      let st: Stats;
      try {
        st = await stat(file);
      } catch {
        continue;
      }
      if (st.isDirectory()) continue;
      const why = notARegularFile(st);
      // A package.json without our key is read and passed over: keep walking.
      if (why === null && place === 'package.json') continue;
      return why === null ? { file } : { file, why };
    }
    const parent = path.dirname(dir);
    if (parent === dir || (underHome && dir === home)) return null;
    dir = parent;
  }
}

/** What an operator would type: `.routerrc`, `../.routerrc`, or an absolute path. */
export function displayPath(cwd: string, file: string): string {
  const relative = path.relative(cwd, file);
  return relative !== '' && relative.length <= file.length ? relative : file;
}

async function shadowedCandidates(found: string): Promise<string[]> {
  const dir = path.dirname(found);
  const name = path.basename(found);
  if (!(RC_SEARCH_PLACES as readonly string[]).includes(name)) return [];
  const others: string[] = [];
  for (const place of RC_SEARCH_PLACES) {
    if (place === name) continue;
    const candidate = path.join(dir, place);
    if (place === 'package.json') {
      try {
        const pkg = JSON.parse(await readFile(candidate, 'utf8')) as Record<string, unknown>;
        if (pkg[PACKAGE_PROP] !== undefined) others.push(`${place}#${PACKAGE_PROP}`);
      } catch {
        // no package.json, or one we cannot read: it cannot shadow anything
      }
      continue;
    }
    try {
      await access(candidate);
      others.push(place);
    } catch {
      // absent
    }
  }
  return others;
}

/** A parser's reason is kept to this: YAML's can quote a whole line of the file, however long. */
const MAX_REASON_CHARS = 300;

function syntaxProblem(cwd: string, file: string | null, err: unknown): ConfigProblem {
  const where = file === null ? 'the config file' : displayPath(cwd, file);
  const { reason, line, column } = describeLoadError(err, file);
  const at = line === null ? '' : column === null ? ` (line ${line})` : ` (line ${line}, column ${column})`;
  const verb = file !== null && /\.[cm]?js$/.test(file) ? 'load' : 'parse';
  // A parser may quote the offending input whole: one bounded line, whatever the file holds.
  const said = reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS)}… (${reason.length} characters)` : reason;
  return problem('PARSE_RC_SYNTAX', `cannot ${verb} ${where}: ${said}${at}`, { origin: file === null ? null : where });
}

/** Reduce YAML, JSON and JS loader errors to a reason plus a position, one line. */
function describeLoadError(err: unknown, file: string | null): { reason: string; line: number | null; column: number | null } {
  if (err instanceof RcSyntaxError) return { reason: err.reason, line: err.line, column: err.column };
  if (file !== null && file.endsWith('.json')) {
    try {
      const at = locateJsonError(readFileSync(file, 'utf8'));
      if (at) return { reason: at.reason, line: at.line, column: at.column };
    } catch {
      // unreadable now: fall back to the loader's own words
    }
  }
  const e = err as { name?: unknown; reason?: unknown; mark?: { line?: unknown; column?: unknown }; stack?: unknown };
  if (e.name === 'YAMLException' && typeof e.reason === 'string') {
    const line = typeof e.mark?.line === 'number' ? e.mark.line + 1 : null;
    const column = typeof e.mark?.column === 'number' ? e.mark.column + 1 : null;
    return { reason: e.reason, line, column };
  }
  // A JS config that fails to compile or throws: V8 names `file:///path?mtime=…:LINE[:COL]` in the stack.
  let line: number | null = null;
  let column: number | null = null;
  if (typeof e.stack === 'string' && file !== null) {
    const base = path.basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = new RegExp(`${base}(?:\\?[^:\\s]*)?:(\\d+)(?::(\\d+))?`).exec(e.stack);
    if (m) {
      line = Number(m[1]);
      column = m[2] === undefined ? null : Number(m[2]);
    }
  }
  const reason = firstLine(err).replace(/^(?:YAML|JSON) Error in [^:]+:\s*/, '');
  return { reason, line, column };
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split('\n').find((l) => l.trim() !== '') ?? message).trim();
}

/**
 * Every citation of the project's docs in a comment or string resolves to a file and
 * a heading in docs/, and nothing cites documents a clone does not have. The grammar
 * checked here is the one docs/README.md §Citation grammar states; keep the two in step.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = path.join(ROOT, 'docs');
const SELF = path
  .relative(ROOT, fileURLToPath(import.meta.url))
  .split(path.sep)
  .join('/');
const SCANNED_DIRS = ['src', 'commands', 'perf', 'test'];
const CODE_FILE = /\.(ts|tsx|js|mjs|cjs|mts|cts)$/;

/** Rule 6: nothing points outside the repository. */
const BANNED: readonly { what: string; re: RegExp }[] = [
  { what: 'spec §', re: /spec §/i },
  { what: 'DESIGN §', re: /DESIGN §/i },
  { what: 'engine-interface', re: /engine-interface/i },
  { what: 'ecosystem', re: /ecosystem/i },
  { what: 'sgl-router-spec', re: /sgl-router-spec/i },
  { what: '../shared', re: /\.\.\/shared/i },
];

/** Rule 1: `docs/NAME.md`, not part of a longer path or word. */
const FILE_START = /(?<![A-Za-z0-9./-])docs\/([a-z0-9-]+)\.md/g;

// ---------------------------------------------------------------------------------
// Headings (rule 5)

/** Heading texts of a Markdown file, as the grammar reads them, with their counts. */
function markdownHeadings(markdown: string): Map<string, number> {
  const out = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split(/\r?\n/)) {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      const marker = f[1]!;
      if (fence === null) fence = marker[0]!.repeat(marker.length);
      else if (marker.startsWith(fence)) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const h = /^\s{0,3}#{1,6}(?:\s+(.*?))?\s*$/.exec(line);
    if (!h) continue;
    const text = (h[1] ?? '')
      .replace(/\s+#+$/, '')
      .replace(/^\d+\.\s+/, '')
      .trim();
    out.set(text, (out.get(text) ?? 0) + 1);
  }
  return out;
}

const headingCache = new Map<string, Map<string, number> | null>();

function headingsOf(file: string): Map<string, number> | null {
  if (!headingCache.has(file)) {
    const p = path.join(DOCS, file);
    headingCache.set(file, existsSync(p) ? markdownHeadings(readFileSync(p, 'utf8')) : null);
  }
  return headingCache.get(file)!;
}

// ---------------------------------------------------------------------------------
// Text regions: comments and string literals

interface Region {
  /** The region's text, same length as in the source; markers and quotes blanked. */
  readonly text: string;
  /** Offset of `text` in the source file. */
  readonly start: number;
}

function scriptKind(file: string): ts.ScriptKind {
  if (file.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (/\.(js|mjs|cjs)$/.test(file)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

/** Every comment and string literal of a source file (comments first, in order). */
function textRegions(file: string, source: string): Region[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, scriptKind(file));
  const comments = new Map<number, ts.CommentRange>();
  const strings: Region[] = [];
  const collect = (pos: number): void => {
    for (const r of ts.getLeadingCommentRanges(source, pos) ?? []) comments.set(r.pos, r);
    for (const r of ts.getTrailingCommentRanges(source, pos) ?? []) comments.set(r.pos, r);
  };
  const isJsDoc = (n: ts.Node): boolean => n.kind >= ts.SyntaxKind.FirstJSDocNode && n.kind <= ts.SyntaxKind.LastJSDocNode;
  const visit = (node: ts.Node): void => {
    if (isJsDoc(node)) return;
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      node.kind === ts.SyntaxKind.TemplateHead ||
      node.kind === ts.SyntaxKind.TemplateMiddle ||
      node.kind === ts.SyntaxKind.TemplateTail
    ) {
      const start = node.getStart(sf);
      const raw = source.slice(start, node.end);
      // Quotes, backticks and `${` / `}` are not text.
      const text = raw.replace(/^(['"`]|\})/, ' ').replace(/(['"`]|\$\{)$/, (m) => ' '.repeat(m.length));
      strings.push({ text, start });
    }
    const children = node.getChildren(sf);
    if (children.length === 0) {
      // A token: the trivia before it holds the comments. JSX text has no trivia.
      if (node.kind !== ts.SyntaxKind.JsxText) collect(node.pos);
      return;
    }
    for (const c of children) visit(c);
  };
  visit(sf);
  collect(0);

  const ranges = [...comments.values()].sort((a, b) => a.pos - b.pos);
  const regions: Region[] = [];
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i]!;
    if (r.kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      const raw = source.slice(r.pos, r.end);
      regions.push({ text: `  ${raw.slice(2, -2)}  `, start: r.pos });
      continue;
    }
    // Consecutive `//` lines read as one comment.
    let end = r.end;
    while (i + 1 < ranges.length) {
      const next = ranges[i + 1]!;
      const gap = source.slice(end, next.pos);
      if (next.kind !== ts.SyntaxKind.SingleLineCommentTrivia || !/^[ \t]*\r?\n[ \t]*$/.test(gap)) break;
      end = next.end;
      i++;
    }
    const raw = source.slice(r.pos, end);
    regions.push({ text: `  ${raw.slice(2)}`, start: r.pos });
  }
  return [...regions, ...strings];
}

// ---------------------------------------------------------------------------------
// Citations (rules 1–4)

interface Citation {
  readonly file: string;
  /** undefined: the whole file. */
  readonly heading: string | undefined;
  /** Offset in the region's text, for line numbers. */
  readonly at: number;
}

/** White space that may run onto the next comment line, past its `*` or `//`. */
function skipGap(text: string, i: number): number {
  let j = i;
  while (text[j] === ' ' || text[j] === '\t') j++;
  if (text[j] === '\r') j++;
  if (text[j] !== '\n') return j;
  j++;
  while (text[j] === ' ' || text[j] === '\t') j++;
  if (text.startsWith('//', j)) j += 2;
  else if (text[j] === '*' && text[j + 1] !== '/') j += 1;
  while (text[j] === ' ' || text[j] === '\t') j++;
  return j;
}

/** Rule 2: the heading text after a `§` at `i - 1`; returns it and where it ended. */
function sectionHeading(text: string, i: number): { heading: string; end: number } {
  let depth = 0;
  let j = i;
  for (; j < text.length; j++) {
    const c = text[j]!;
    if (c === '\n' || c === '\r' || c === '"' || c === ',' || c === ';' || c === '§') break;
    if (c === '(') depth++;
    else if (c === ')') {
      if (depth === 0) break;
      depth--;
    } else if (c === '.' && (j + 1 === text.length || /\s/.test(text[j + 1]!))) break;
  }
  return { heading: text.slice(i, j).replace(/\s+$/, ''), end: j };
}

/** Rule 3: the quoted heading starting after `, "`; line breaks and leaders read as one space. */
function quotedHeading(text: string, i: number): { heading: string; end: number } | undefined {
  const close = text.indexOf('"', i);
  if (close < 0) return undefined;
  const heading = text
    .slice(i, close)
    .replace(/[ \t]*\r?\n[ \t]*(?:\/\/|\*(?!\/))?[ \t]*/g, ' ')
    .trim();
  return { heading, end: close + 1 };
}

/** Every citation in a text, and the offsets of the `§` signs they account for. */
function parseCitations(text: string): { citations: Citation[]; sections: Set<number> } {
  const citations: Citation[] = [];
  const sections = new Set<number>();
  for (const m of text.matchAll(FILE_START)) {
    const file = `${m[1]!}.md`;
    const afterName = m.index + m[0].length;
    const j = skipGap(text, afterName);
    if (text[j] === '§') {
      let at = j;
      for (;;) {
        sections.add(at);
        const { heading, end } = sectionHeading(text, at + 1);
        citations.push({ file, heading, at });
        if (text[end] !== ',') break;
        const next = skipGap(text, end + 1);
        if (text[next] !== '§') break;
        at = next;
      }
      continue;
    }
    if (text.startsWith(', "', afterName)) {
      const q = quotedHeading(text, afterName + 3);
      if (q) {
        citations.push({ file, heading: q.heading, at: m.index });
        continue;
      }
    }
    citations.push({ file, heading: undefined, at: m.index });
  }
  return { citations, sections };
}

// ---------------------------------------------------------------------------------
// The scan

function codeFiles(dir: string): string[] {
  const out: string[] = [];
  const abs = path.join(ROOT, dir);
  if (!existsSync(abs)) return out;
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...codeFiles(rel));
    } else if (CODE_FILE.test(entry.name) && rel !== SELF) {
      out.push(rel);
    }
  }
  return out.sort();
}

interface Finding {
  readonly where: string;
  readonly problem: string;
}

function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < source.length; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}

function scan(): { findings: Finding[]; citations: number; sections: number; files: number } {
  const findings: Finding[] = [];
  let citations = 0;
  let sections = 0;
  const files = SCANNED_DIRS.flatMap(codeFiles);
  for (const file of files) {
    const source = readFileSync(path.join(ROOT, file), 'utf8');
    for (const region of textRegions(file, source)) {
      const where = (offset: number): string => `${file}:${lineOf(source, region.start + offset)}`;
      for (const { what, re } of BANNED) {
        const hit = re.exec(region.text);
        if (hit) findings.push({ where: where(hit.index), problem: `mentions "${what}": cite docs/ instead` });
      }
      const parsed = parseCitations(region.text);
      for (let i = region.text.indexOf('§'); i >= 0; i = region.text.indexOf('§', i + 1)) {
        if (!parsed.sections.has(i))
          findings.push({ where: where(i), problem: `"§" that does not begin a heading of a docs/<file>.md citation` });
      }
      for (const c of parsed.citations) {
        citations++;
        const headings = headingsOf(c.file);
        if (headings === null) {
          findings.push({ where: where(c.at), problem: `docs/${c.file} does not exist` });
          continue;
        }
        if (c.heading === undefined) continue;
        sections++;
        const count = headings.get(c.heading) ?? 0;
        if (count === 0) findings.push({ where: where(c.at), problem: `docs/${c.file} has no heading "${c.heading}"` });
        else if (count > 1) findings.push({ where: where(c.at), problem: `docs/${c.file} has ${count} headings "${c.heading}"` });
      }
    }
  }
  return { findings, citations, sections, files: files.length };
}

// ---------------------------------------------------------------------------------

describe('the citation grammar (docs/README.md §Citation grammar)', () => {
  it('reads section, list, wrapped, quoted and whole-file citations', () => {
    const text = [
      '  The gate (docs/routing.md §Queue gate). Then docs/routing.md §Selection ladder (cache_aware),',
      ' * and docs/routing.md §Switch margin, §Pressure guard; docs/configuration.md',
      ' * §Value rules. docs/engine-load.md, "Shutdown and',
      ' * signals" and docs/http-edge.md. Path ../docs/x.md is not one.',
    ].join('\n');
    const { citations, sections } = parseCitations(text);
    expect(citations.map((c) => [c.file, c.heading])).toEqual([
      ['routing.md', 'Queue gate'],
      ['routing.md', 'Selection ladder (cache_aware)'],
      ['routing.md', 'Switch margin'],
      ['routing.md', 'Pressure guard'],
      ['configuration.md', 'Value rules'],
      ['engine-load.md', 'Shutdown and signals'],
      ['http-edge.md', undefined],
    ]);
    expect(sections.size).toBe(5);
  });

  it('ends a heading at the end of its line, and reads headings without their numbers', () => {
    const { citations } = parseCitations('  docs/routing.md §Admission per flavour and\n * §Fidelity rules');
    expect(citations.map((c) => c.heading)).toEqual(['Admission per flavour and']);
    const headings = markdownHeadings('# Title\n## 2. Queue gate\n#### Gate tiers ##\n```\n## Not a heading\n```\n');
    expect([...headings.keys()]).toEqual(['Title', 'Queue gate', 'Gate tiers']);
  });

  it('finds comments in TSX, consecutive // lines and strings, but not JSX text', () => {
    const source = [
      '// first line docs/routing.md',
      '// §Queue gate',
      'const a = <Text>// docs/nowhere.md §Nothing</Text>;',
      "describe('x (docs/routing.md §Fresh load)', () => { /* docs/http-edge.md */ });",
    ].join('\n');
    const found = textRegions('x.tsx', source).flatMap((r) => parseCitations(r.text).citations.map((c) => [c.file, c.heading]));
    expect(found).toEqual([
      ['routing.md', 'Queue gate'],
      ['http-edge.md', undefined],
      ['routing.md', 'Fresh load'],
    ]);
  });
});

describe('docs citations in src/, commands/, perf/ and test/', () => {
  const result = scan();

  it('scans the code and finds the citations', () => {
    expect(result.files).toBeGreaterThan(100);
    expect(result.sections).toBeGreaterThan(50);
  });

  it('every citation names a docs file and one of its headings; nothing cites outside docs/', () => {
    expect(result.findings.map((f) => `${f.where}: ${f.problem}`)).toEqual([]);
  });
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * One relative import in the sources: from file, to file (both relative to the root,
 * spelled as the program names them, `.js`), how (`dynamic`: `import()`), and whether
 * it names types only (`import type`, `export type`, `import('…').T`).
 */
export interface ImportEdge {
  from: string;
  to: string;
  dynamic: boolean;
  typeOnly?: boolean;
}

/**
 * The relative imports of every TypeScript source (`.ts`, `.tsx`) under `folders`,
 * type-only ones included: a type import ties two modules as surely as a value
 * import does (a change to the type reaches the importer), though the compiler erases
 * it. Read with the TypeScript parser, so imports spread over lines, `export … from`,
 * dynamic `import()` and `import('…')` types are all seen.
 */
export function sourceImports(root: string, folders: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const visit = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) visit(rel);
      else if (/\.tsx?$/.test(rel) && !rel.endsWith('.d.ts')) edges.push(...importsOf(rel, readFileSync(path.join(root, rel), 'utf8')));
    }
  };
  for (const f of folders) if (existsSync(path.join(root, f))) visit(f);
  return edges;
}

/** The relative imports of one source file (`file` relative to the root). */
export function importsOf(file: string, text: string): ImportEdge[] {
  const from = file.replace(/\.tsx?$/, '.js');
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    false,
    file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const edges: ImportEdge[] = [];
  const add = (specifier: ts.Node | undefined, dynamic: boolean, typeOnly: boolean): void => {
    if (specifier === undefined || !ts.isStringLiteralLike(specifier) || !specifier.text.startsWith('.')) return;
    edges.push({ from, to: path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier.text)), dynamic, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, false, importIsTypeOnly(node));
    else if (ts.isExportDeclaration(node)) add(node.moduleSpecifier, false, exportIsTypeOnly(node));
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node.moduleReference.expression, false, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0], true, false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, false, true);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (clause === undefined) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return (
    clause.name === undefined &&
    named !== undefined &&
    ts.isNamedImports(named) &&
    named.elements.length > 0 &&
    named.elements.every((e) => e.isTypeOnly)
  );
}

function exportIsTypeOnly(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

/** The top-level area a module belongs to: `src/<name>`, or the root folder (`commands`, …). */
export function areaOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'src' ? `src/${parts[1]}` : parts[0]!;
}

/**
 * What breaks the layering, one sentence per edge: an import into another area that
 * does not go through an `index.js` (the area's list of what it offers), one into an
 * area that is not strictly lower, and an area missing from the ranking.
 */
export function layeringViolations(edges: readonly ImportEdge[], ranks: Readonly<Record<string, number>>): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const a = areaOf(e.from);
    const b = areaOf(e.to);
    if (a === b) continue;
    if (!(a in ranks)) out.push(`${a} has no rank (imported by nothing ranked, imports ${b})`);
    else if (!(b in ranks)) out.push(`${b} has no rank (imported by ${e.from})`);
    else if (ranks[b]! >= ranks[a]!) out.push(`${e.from} imports ${e.to}: ${b} is not below ${a}`);
    if (path.posix.basename(e.to) !== 'index.js') out.push(`${e.from} imports ${e.to}, not an index.js of ${b}`);
  }
  return [...new Set(out)];
}

/**
 * The room of a module inside one area (`area` such as `src/router`): its first folder
 * below the area (`policies`, `state`, …), or its file name for a file at the area's
 * top (`router.ts`); undefined outside the area.
 */
export function roomOf(file: string, area: string): string | undefined {
  if (!file.startsWith(`${area}/`)) return undefined;
  const rest = file.slice(area.length + 1).split('/');
  return rest.length === 1 ? rest[0]!.replace(/\.js$/, '.ts') : rest[0]!;
}

/**
 * The same rule one level down, inside `area`: an import between two of its rooms
 * goes to a strictly lower one, and every room has a rank. Rooms need not go through
 * an index: they are one area's own parts.
 */
export function roomViolations(edges: readonly ImportEdge[], area: string, ranks: Readonly<Record<string, number>>): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const a = roomOf(e.from, area);
    const b = roomOf(e.to, area);
    if (a === undefined || b === undefined || a === b) continue;
    if (!(a in ranks)) out.push(`${area}/${a} has no rank (imports ${b})`);
    else if (!(b in ranks)) out.push(`${area}/${b} has no rank (imported by ${e.from})`);
    else if (ranks[b]! >= ranks[a]!) out.push(`${e.from} imports ${e.to}: ${b} is not below ${a}`);
  }
  return [...new Set(out)];
}

/** Every import cycle between files (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return cycles;
}

/**
 * Every cycle between folders: the file graph folded onto the folders that hold the
 * files (`src/router/state/kv-index`, …). Two folders that import each other are one
 * unit in all but name, whichever files do it. An import between a folder and one it
 * contains, or one that contains it, is left out: a folder's top files gather and
 * serve its subfolders (an index, the types they share).
 */
export function folderCycles(edges: readonly ImportEdge[]): string[][] {
  const nested = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  const folded = edges
    .map((e) => ({ from: path.posix.dirname(e.from), to: path.posix.dirname(e.to), dynamic: e.dynamic }))
    .filter((e) => !nested(e.from, e.to));
  return importCycles(folded);
}

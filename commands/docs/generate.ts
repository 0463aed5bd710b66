import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigCodes, PROBLEM_CLASSES } from '../../src/config/index.js';
import { ROUTER_FIELDS, WORKER_FIELDS, fieldTableMarkdown } from '../../src/contract/index.js';
import { RUNTIME_ERRORS, catalogueEntries } from '../../src/errors/index.js';
import type { ApiErrorEntry, ErrorEntry } from '../../src/errors/index.js';
import { API_ERROR_CODES } from '../../src/router/index.js';
import { OPTION_TABLES } from '../options/index.js';
import { codeTableMarkdown, flagTablesMarkdown } from './configuration-tables.js';
import { replaceBlock } from './generated-block.js';
import type { BlockStyle } from './generated-block.js';
import { apiErrorsRoff, configCodesRoff, runtimeErrorsRoff } from './man-errors.js';
import { settingsRoff, tablesRoff } from './man-options.js';
import { rcExample } from './rc-example.js';

type RuntimeCode = keyof typeof RUNTIME_ERRORS;

/**
 * The runtime codes each page's ERRORS section lists: those the command can stop
 * with (and routerctl.1, all of them). A code a command starts raising is added here.
 */
const PAGE_ERRORS: Readonly<Record<string, readonly RuntimeCode[]>> = {
  'routerctl.1': Object.keys(RUNTIME_ERRORS) as RuntimeCode[],
  'routerctl-serve.1': ['USAGE', 'PORT_IN_USE', 'BIND_FAILED', 'TOKENIZER', 'INTERNAL'],
  'routerctl-top.1': ['USAGE', 'UNREACHABLE', 'UNAUTHORIZED', 'NOT_A_ROUTER'],
  'routerctl-explain.1': ['USAGE', 'UNREACHABLE', 'UNAUTHORIZED', 'NOT_A_ROUTER', 'NO_DECISION'],
  'routerctl-doctor.1': ['USAGE', 'UNREACHABLE', 'UNAUTHORIZED', 'NOT_A_ROUTER'],
  'routerctl-sim.1': ['USAGE', 'PORT_IN_USE', 'BIND_FAILED'],
  'routerctl-bench.1': ['USAGE', 'BENCH_START', 'UNREACHABLE', 'TOKENIZER'],
};

/** The router's catalogue is keyed by code; read as the shared entry shape. */
function apiEntries(): ApiErrorEntry[] {
  return catalogueEntries(API_ERROR_CODES);
}

function runtimeEntries(page: string): ErrorEntry[] {
  return (PAGE_ERRORS[page] ?? []).map((name) => RUNTIME_ERRORS[name]);
}

/** One generated block of one file. */
interface Block {
  style: BlockStyle;
  name: string;
  body: () => string;
}

function manBlocks(page: string): Block[] {
  const roff = (name: string, body: () => string): Block => ({ style: 'roff', name, body });
  const blocks: Block[] = [];
  const tables = OPTION_TABLES.filter((t) => t.man === page);
  if (page === 'routerctl-serve.1' || page === 'routerctl-check-config.1') blocks.push(roff('OPTIONS', settingsRoff));
  else if (tables.length > 0) blocks.push(roff('OPTIONS', () => tablesRoff(tables)));
  if (page === 'routerctl-serve.1') blocks.push(roff('API ERRORS', () => apiErrorsRoff(apiEntries())));
  if (page === 'routerctl-check-config.1') blocks.push(roff('ERROR CODES', () => configCodesRoff(catalogueEntries(ConfigCodes))));
  if (PAGE_ERRORS[page]) blocks.push(roff('ERRORS', () => runtimeErrorsRoff(runtimeEntries(page))));
  return blocks;
}

const MAN_PAGES = [
  'routerctl.1',
  'routerctl-serve.1',
  'routerctl-check-config.1',
  'routerctl-top.1',
  'routerctl-explain.1',
  'routerctl-doctor.1',
  'routerctl-sim.1',
  'routerctl-bench.1',
];

function configurationBlocks(): Block[] {
  const md = (name: string, body: () => string): Block => ({ style: 'markdown', name, body });
  return [
    md('flags', flagTablesMarkdown),
    ...PROBLEM_CLASSES.map((cls) => md(`codes ${cls}`, () => codeTableMarkdown(catalogueEntries(ConfigCodes), cls))),
  ];
}

/** The admin document's tables, from the contract's field tables. */
function adminStateBlocks(): Block[] {
  return [
    { style: 'markdown', name: 'admin router fields', body: () => fieldTableMarkdown(ROUTER_FIELDS) },
    { style: 'markdown', name: 'admin worker fields', body: () => fieldTableMarkdown(WORKER_FIELDS) },
  ];
}

/** A file as `npm run docs` would leave it: path relative to the repository, and its text. */
export interface GeneratedFile {
  path: string;
  text: string;
}

/**
 * Every generated file, computed in memory from the files under `root`: the man
 * pages', docs/configuration.md's and docs/metrics-and-admin.md's generated blocks filled in, .routerrc.example
 * whole. Nothing is written; `write.ts` does that, and the test compares.
 */
export function generateDocs(root: string): GeneratedFile[] {
  const fill = (file: string, blocks: readonly Block[]): GeneratedFile => {
    let text = readFileSync(path.join(root, file), 'utf8');
    for (const b of blocks) text = replaceBlock(text, file, b.style, b.name, b.body());
    return { path: file, text };
  };
  return [
    ...MAN_PAGES.map((page) => fill(`man/${page}`, manBlocks(page))),
    fill('docs/configuration.md', configurationBlocks()),
    fill('docs/metrics-and-admin.md', adminStateBlocks()),
    { path: '.routerrc.example', text: rcExample() },
  ];
}

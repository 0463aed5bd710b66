import type { ApiErrorEntry, ErrorEntry } from '../../src/errors/index.js';
import type { ConfigCodeEntry } from '../../src/config/index.js';
import { roffText, sentence } from './roff.js';

/** Codes a command can stop with, from the runtime catalogue: `.TP`, the code in bold, its meaning. */
export function runtimeErrorsRoff(entries: readonly ErrorEntry[]): string {
  return entries.map((e) => `.TP\n.B ${roffText(e.code)}\n${roffText(sentence(e.meaning))}`).join('\n');
}

/** The router's answers: status and code on the tag line, as clients and test/router/http-edge.test.ts read them. */
export function apiErrorsRoff(entries: readonly ApiErrorEntry[]): string {
  return entries.map((e) => `.TP\n.B ${e.status} ${roffText(e.code)}\n${roffText(sentence(e.meaning))}`).join('\n');
}

/** check-config's ERROR CODES: errors, then warnings, each with its class (where it sorts in the report). */
export function configCodesRoff(entries: readonly ConfigCodeEntry[]): string {
  const out: string[] = [];
  for (const [severity, title] of [
    ['error', 'Errors'],
    ['warning', 'Warnings'],
  ] as const) {
    out.push(`.SS ${title}`);
    for (const e of entries.filter((x) => x.severity === severity))
      out.push('.TP', `\\fB${roffText(e.code)}\\fR (${roffText(e.class)})`, roffText(e.meaning));
  }
  return out.join('\n');
}

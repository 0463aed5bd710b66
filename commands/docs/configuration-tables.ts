import { ConfigCodes, OPTION_GROUPS, OPTIONS, POLICY_FAMILIES, optionsForDisplay } from '../../src/config/index.js';
import type { ConfigCodeEntry, OptionSpec, ProblemClass } from '../../src/config/index.js';
import { defaultText, ruleText } from './setting-rules.js';

/**
 * Plain catalogue text as Markdown table text: flags, ROUTERCTL_* names and paths set
 * as code (outside spans already marked), pipes and angle brackets escaped so a
 * cell stays one cell.
 */
export function markdownText(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? part.replace(/\|/g, '\\|')
        : part
            .replace(/(?<![\w`:/-])(--[a-z][a-z0-9-]*|ROUTERCTL_[A-Z_]*\*?|\/[a-z][a-z0-9_/*.-]*[a-z0-9*])/g, '`$1`')
            .replace(/\|/g, '\\|')
            .replace(/</g, '&lt;')
            .replace(/>/g, '&gt;'),
    )
    .join('');
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** Every setting, one table per display group, under the group's heading. */
export function flagTablesMarkdown(): string {
  const out: string[] = [];
  const options = optionsForDisplay();
  for (const group of OPTION_GROUPS) {
    const specs = options.filter((o) => o.group === group.label);
    out.push(`### ${group.heading}`, '');
    if (group.about) out.push(group.about, '');
    out.push(row(['flag', 'default', 'rule', 'meaning']), row(['---', '---', '---', '---']));
    for (const spec of specs) out.push(row([flagCell(spec), markdownText(defaultText(spec)), ruleText(spec), meaningCell(spec)]));
    out.push('');
  }
  return out.join('\n');
}

function flagCell(spec: OptionSpec): string {
  return spec.type === 'boolean' && spec.default === true ? `\`--${spec.flag}\` / \`--no-${spec.flag}\`` : `\`--${spec.flag}\``;
}

function meaningCell(spec: OptionSpec): string {
  return markdownText([spec.describe, spec.details ?? ''].filter((p) => p !== '').join('. '));
}

/** The code tables of docs/configuration.md §Rules and error codes, one per class; the policy table also names the flags of each family. */
export function codeTableMarkdown(entries: readonly ConfigCodeEntry[], cls: ProblemClass): string {
  const rows = entries.filter((e) => e.class === cls);
  const meaning = (e: ConfigCodeEntry): string =>
    [markdownText(e.meaning), e.details ? markdownText(e.details) : ''].filter((p) => p).join('. ');
  if (cls === 'policy') {
    return [
      row(['code', 'flags', 'meaning']),
      row(['---', '---', '---']),
      ...rows.map((e) => row([`\`${e.code}\``, familyFlags(e.code), meaning(e)])),
    ].join('\n');
  }
  return [row(['code', 'meaning']), row(['---', '---']), ...rows.map((e) => row([`\`${e.code}\``, meaning(e)]))].join('\n');
}

function familyFlags(code: string): string {
  const family = POLICY_FAMILIES.find((f) => ConfigCodes[f.code].code === code)?.family;
  return (OPTIONS as readonly OptionSpec[])
    .filter((o) => family !== undefined && o.policyFamily === family)
    .map((o) => `\`--${o.flag}\``)
    .join(', ');
}

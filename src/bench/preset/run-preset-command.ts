import { usageError } from '../../errors/index.js';
import { PRESETS } from './b2b-saas.js';
import { PRESET_NAMES } from './preset-names.js';
import { presetVerdict, renderPresetReport } from './preset-report.js';
import { runPreset } from './preset-run.js';

/**
 * `bench compare --preset NAME`: the preset's arms on the virtual clock, one line per arm
 * on stderr as it ends, then the table (or `--json`: one object). Exit status 0 when
 * every arm finished some request.
 */
export function runPresetCommand(
  name: string,
  seed: number,
  json: boolean,
  out: NodeJS.WritableStream = process.stdout,
  note?: (line: string) => void,
): number {
  const preset = PRESETS[name];
  if (preset === undefined) throw usageError(`no preset named ${name}: the presets are ${PRESET_NAMES.join(', ')}`);
  const result = runPreset(preset, seed, (a) => note?.(`${a.letter} ${a.label}: TTFT p90 ${a.ttft_p90_s?.toFixed(3) ?? '-'} s`));
  if (json) out.write(`${JSON.stringify({ ...result, verdict: presetVerdict(result) })}\n`);
  else out.write(`${renderPresetReport(result).join('\n')}\n`);
  return result.arms.every((a) => a.finished > 0) ? 0 : 1;
}

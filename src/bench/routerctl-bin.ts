import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The routerctl entry script, for starting fleets and routers as separate processes.
 * Found by walking up from this module, because it runs both built (dist/src/bench)
 * and from source under the test runner (src/bench).
 */
export function routerctlBin(): string {
  for (const up of ['../../bin/routerctl.js', '../../../bin/routerctl.js']) {
    const candidate = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('cannot find bin/routerctl.js next to this installation');
}

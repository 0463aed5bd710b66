import type { TraceRequest } from './mooncake-trace.js';

/**
 * Requests of a trace an engine with this context length refuses before they start:
 * an input of at least the context, or one whose output (sent as max_tokens) would pass
 * it; SGLang and vLLM both refuse those (src/sim/length-check.ts). A trace run can say
 * so before it starts, instead of reporting the refusals afterwards.
 */
export function countOverContext(trace: readonly TraceRequest[], contextLength: number): number {
  let over = 0;
  for (const r of trace) if (r.inputLength >= contextLength || r.inputLength + r.outputLength > contextLength) over++;
  return over;
}

/**
 * Parse time of our Prometheus text parser for a 2,000-line engine exposition (what
 * the load sampler and the console parse on every poll).
 *
 *   npm run perf -- prometheus
 */
import { parsePrometheusText } from '../src/prometheus/index.js';
import { writeResult } from './support/results.js';

let text = '# HELP sglang:num_queue_reqs The number of requests in the waiting queue.\n# TYPE sglang:num_queue_reqs gauge\n';
for (let i = 0; i < 2000; i++) {
  text += `sglang:num_queue_reqs{model_name="m",engine_type="unified",tp_rank="0",pp_rank="0",dp_rank="${i}"} ${i}\n`;
}
for (let i = 0; i < 50; i++) parsePrometheusText(text);
const runs = 500;
const t0 = performance.now();
for (let i = 0; i < runs; i++) parsePrometheusText(text);
const ms = (performance.now() - t0) / runs;
console.log(`| 2,000 lines, ${(text.length / 1024).toFixed(0)} KiB, 5 labels | ${ms.toFixed(3)} ms per parse |`);
writeResult('prometheus', {
  figures: { lines: 2000, kib: Math.round(text.length / 1024), parse_ms: Number(ms.toFixed(3)) },
  bottleneck: 'one core running the parser in this process',
});

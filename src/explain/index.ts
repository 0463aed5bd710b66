// What other areas may import from src/explain.
export { runExplain } from './run-explain.js';
export type { ExplainOptions } from './run-explain.js';
export { diagnose, formatDiagnosis } from './diagnose.js';
export type { Diagnosis, Finding, LadderStep, Loss } from './diagnose.js';
export { runDoctor } from './run-doctor.js';
export type { DoctorOptions } from './run-doctor.js';

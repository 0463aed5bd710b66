import { PRESETS } from './b2b-saas.js';

/** The presets `bench compare --preset` knows (docs/bench.md §Presets); apart from their runner, for the option table. */
export const PRESET_NAMES = Object.keys(PRESETS);

import fc from 'fast-check';
import { testSeed } from './seeded.js';

// vitest setup file (vitest.config.ts): every fast-check property in every test file runs from a fixed
// seed, so a run is the same on every machine and a failure replays. A test that passes its own `seed`
// keeps it; FLOWCTL_TEST_SEED replaces the default to explore other sequences.
export const FAST_CHECK_SEED = testSeed(0x5eed_f10c);
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: FAST_CHECK_SEED });

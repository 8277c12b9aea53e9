import { join } from 'node:path';

/** The project's run store, relative to the project folder (the cwd). */
export const STORE_DIR = '.flowctl';
/** Where `flowctl install` puts packs by default; their tools are available to `run`. */
export const INSTALLED_REGISTRY_DIR = join(STORE_DIR, 'registry');

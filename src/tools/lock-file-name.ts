/** The project lock's file name, beside `flows/` (docs/packs.md). Its own module: `flowctl run` reads the lock before the rest of flowctl loads. */
export const LOCK_FILE_NAME = 'flowctl.lock';

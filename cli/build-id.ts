// Replaced at build time (tsup.config.ts `define`): the package version and a digest of the sources
// the CLI was built from. Undefined when the CLI runs from its TypeScript sources (tests).
declare const __FLOWCTL_BUILD__: string | undefined;

/** The flowctl build the running CLI is, or undefined in a source checkout run without a build. */
export const BUILD_ID: string | undefined = typeof __FLOWCTL_BUILD__ === 'string' ? __FLOWCTL_BUILD__ : undefined;

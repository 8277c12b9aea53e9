// flowctl/adapters/hosted: the hosted service as `npm start` and `npm run worker` run it (one assembly).
export { assembleHostedService } from './assemble.js';
export type { HostedAssembly, HostedAssemblyOptions, HostedRole } from './assemble.js';

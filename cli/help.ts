/** The one top-level help text (`flowctl help`, `--help`, `-h`). Per-command help is not generated. */
export const HELP_TEXT = `flowctl - turn a browser demonstration into a named, callable, deterministic automation

Usage: flowctl <command> [arguments] [flags]

Core
  init                              scaffold flows/, tools/, flowctl.lock and flows/hello.yaml (idempotent)
  compile <flow>                    compile to out/<name>.flowspec.json and update flowctl.lock
        --check                     type-check and print the digest; write nothing
        --json                      print the FlowSpec (or the diagnostics) to stdout
  emit <flow>                       print the compiled flow as canonical YAML or TypeScript
        --to yaml|ts                output language (default yaml)
  run <flow>                        compile and run locally (runs are stored in .flowctl/)
        --input k=v                 an input (repeatable; JSON if it parses, else a string)
        --input-file <path>         inputs from a JSON or YAML file (below --input pairs)
        --dry                       plan only: print steps and outward effects, run nothing
        --yes                       do not ask before outward effects
        --record-journal <path>     also write the journal as a replayable fixture file
        --sandbox <provider>        run shell and fs tools in a sandbox (overrides FLOWCTL_SANDBOX)
        --json                      print the full Run to stdout
  lint <flow>                       compile diagnostics plus style findings (non-canonical, no-output)
        --fix                       rewrite the file as canonical YAML

Authoring
  record --name <n> --task <t> --ops <file>
                                    write a content-addressed Recording to recordings/<n>.json
        --input <slot>              make a slot a typed input (repeatable)
        --secret <slot>             make a slot a secret input; only its name is stored (repeatable)
        --json                      print name, source_digest, path
  replay <run-id|journal-file>      reproduce a run hermetically (no network, no effects)
        --verify                    also check every step's output digest against the journal
        --rerun                     re-fire effects live (asks like run unless --yes)
        --yes                       do not ask before outward effects (--rerun)
        --json                      print the replay Run to stdout
  inspect <run-id>                  the journal as a timeline, then the output
        --step <id>                 one step in full: input, output, digests, attempts
        --json                      print the Run to stdout
  runs [last]                       run ids newest first; "runs last" prints only the newest id
        --json                      print the run records as one JSON array

Distribution
  pack init|add|publish|export|list build a Pack in flowctl.pack.json and publish it
        --version <v>               pack version (default 0.0.0)
        --body <path>               what to add (a flow or a tool contract)
        --registry <dir>            registry directory
        --to <file>                 export the pack as one file
        --json                      machine-readable result
  install --from <registry-dir>     install the packs pinned in flowctl.packs.lock, verified
        --lock <file>               packs lock (default flowctl.packs.lock)
        --to <dir>                  local registry (default .flowctl/registry)
        --json                      machine-readable result
  registry mirror|ls|verify         replicate and check registries
        --from <dir> --to <dir>     mirror source and destination
        --packs <pattern>           only these packs (repeatable, * wildcard)
        --mode pull|push|sync       mirror direction (default pull)
        --registry <dir>            registry for ls and verify
        --json                      machine-readable result

Launcher
  serve [flow]                      REST launcher on 127.0.0.1:8080 (development)
        --registry <dir>            serve the flows of the packs in a registry
        --port <n>                  port (default 8080)
        --host <addr>               host (default 127.0.0.1)
        --allow-remote              allow a non-loopback host (needs a token)
        --token <t>                 require Authorization: Bearer <t> (or FLOWCTL_SERVE_TOKEN)
        --store=sql                 keep runs in SQL (DATABASE_URL, else PGlite in .flowctl/db)
        --allow-secret-refs         let callers name any secret:<name> for a secret input
        --max-connections=<n>       open connections at once (default 256)
  mcp [flow]                        MCP server over stdio; each flow is one tool
        --registry <dir>            serve the flows of the packs in a registry
  schedule <flow> --cron <expr>     run a flow on a cron schedule with fixed inputs
        --input k=v                 an input (repeatable)
        --input-file <path>         inputs from a JSON or YAML file
        --registry <dir>            use the first flow resolved from a registry
        --yes                       do not print the outward-effect notice at start

  help, --help, -h                  this text
  --version, -V                     print the flowctl version

Flags: --flag is true, --no-flag false; --key value binds only for value flags, else use --key=value;
a repeated value flag accumulates; -x is a switch unless -x=value; -- ends flags.
<flow> is a file path or a name (flows/<name>.yaml, then recordings/<name>.json).
Exit codes: see docs/cli.md.
`;

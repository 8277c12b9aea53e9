// Shared by every benchmark: machine description, medians, and writing one section of RESULTS.md.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

export function machine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

/** The pids of `root` and of every process below it (read from /proc), root first. */
export function processTree(root) {
  const parents = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length && i < 10_000; i++) for (const [p, pp] of parents) if (pp === tree[i]) tree.push(p);
  return tree;
}

/** CPU time of a process in ms (user + system, its reaped children's included: 10 ms ticks), 0 when it is gone. */
export function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return 0;
  }
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** Replace (or append) the section `name` of bench/RESULTS.md with `body` (markdown). */
export function writeSection(name, title, body) {
  const file = new URL('./RESULTS.md', import.meta.url);
  const head = '# Benchmark results\n\nWritten by `npm run bench`; each section names its machine and date.\n';
  let text = existsSync(file) ? readFileSync(file, 'utf8') : head;
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const section = `${start}\n## ${title}\n\n_${new Date().toISOString().slice(0, 10)} on ${machine()}_\n\n${body.trim()}\n${end}`;
  const re = new RegExp(`${start}[\\s\\S]*?${end}`);
  text = re.test(text) ? text.replace(re, section) : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, text);
  // Formatted as the repository's format check wants it (Biome pads the tables the benches write).
  const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');
  spawnSync(process.execPath, [biome, 'format', '--write', fileURLToPath(file)], { stdio: 'ignore' });
}

/** The pure 3-step flow the REST and gateway benchmarks run (8 journal entries per run). */
export const GREET_FLOW = `name: greet
inputs:
  who: {type: string}
  times: {type: integer, default: 1}
steps:
  - id: greet
    tool: core/template@1
    args:
      template: Hello, {{ who }}!
      values:
        who: \${inputs.who}
  - id: shape
    tool: core/transform@1
    args:
      value:
        greeting: \${steps.greet.output.text}
        times: \${inputs.times}
  - id: check
    tool: core/assert@1
    args:
      that: \${steps.shape.output.value.times}
output:
  greeting: \${steps.shape.output.value.greeting}
`;

/**
 * Publish a compiled FlowSpec as an automation, as publish leaves it (status published, live version =
 * the spec): for flows the studio cannot capture (pure ones), written straight to the service's
 * storage. Resolves with the automation id and digest.
 */
export async function publishSpec({ engine, storage }, { orgId, userId, name, spec, site = 'https://example.com/' }) {
  const digest = await engine.putSpec(spec);
  const now = new Date().toISOString();
  const id = crypto.randomUUID();
  await storage.automations.create({
    id,
    org_id: orgId,
    name,
    task: name,
    site,
    mcp_enabled: true,
    created_at: now,
    status: 'published',
    live_digest: digest,
    needs_attention: false,
    example: false,
    params: [],
  });
  await storage.versions.add({ automation_id: id, org_id: orgId, flow_digest: digest, created_at: now, created_by: userId });
  return { id, digest };
}

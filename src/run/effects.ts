import type { EffectSummary } from '../engine/types.js';
import { evaluateValue } from '../flow/expr.js';
import type { FlowSpec, StepSpec } from '../flow/types.js';
import { OUTWARD_CAPABILITIES } from '../tools/types.js';

/** A step is outward-facing when its resolved contract declares net, fs, browser or spawn. */
export function isOutward(step: StepSpec): boolean {
  return step.capabilities.some((c) => OUTWARD_CAPABILITIES.includes(c));
}

// fs steps whose tool only reads are not writes; everything else with `fs` is listed as a write.
const READ_ONLY_FS = /\/(read|list|paths|stat|exists)$/;

/**
 * What a flow can do outside the process, from its steps' capabilities, for `--dry` and the
 * confirmation prompt. Targets are read from the step arguments `url` (net host), `path` (fs) and
 * `command` (spawn) where they can be evaluated from the inputs alone; a target that depends on an
 * earlier step's output is unknown until the run and is not listed.
 */
export function summarizeEffects(spec: FlowSpec, inputs: Record<string, unknown> = {}): EffectSummary {
  const summary: EffectSummary = { outward: false, steps: [], net_hosts: [], fs_writes: [], spawns: [], browser: false };
  const add = (list: string[], v: string) => {
    if (!list.includes(v)) list.push(v);
  };
  for (const step of spec.steps) {
    if (!isOutward(step)) continue;
    const args = staticArgs(step, inputs);
    const targets: string[] = [];
    if (step.capabilities.includes('net') && typeof args.url === 'string') {
      const host = hostOf(args.url);
      if (host) {
        targets.push(host);
        add(summary.net_hosts, host);
      }
    }
    if (step.capabilities.includes('fs') && typeof args.path === 'string' && args.path !== '') {
      targets.push(args.path);
      if (!READ_ONLY_FS.test(step.tool.ref)) add(summary.fs_writes, args.path);
    }
    if (step.capabilities.includes('spawn') && typeof args.command === 'string' && args.command !== '') {
      targets.push(args.command);
      add(summary.spawns, args.command);
    }
    if (step.capabilities.includes('browser')) summary.browser = true;
    summary.steps.push({
      step: step.id,
      tool: `${step.tool.ref}@${step.tool.version}`,
      capabilities: step.capabilities.filter((c) => OUTWARD_CAPABILITIES.includes(c)),
      targets,
    });
  }
  summary.outward = summary.steps.length > 0;
  return summary;
}

function staticArgs(step: StepSpec, inputs: Record<string, unknown>): Record<string, unknown> {
  try {
    const v = evaluateValue(step.args, { inputs, steps: {} });
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function hostOf(url: string): string | undefined {
  try {
    const host = new URL(url).host;
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

import { SecretMask } from '../../secrets/mask.js';
import { strategiesOf, normalizeTarget, type TargetInput } from '../../record/locator.js';
import { parseApiKey } from '../auth/api-keys.js';

/**
 * Publish refuses a capture that would put secret material into a FlowSpec (spec: `secret_leak`).
 * docs/hosted-api.md ("secret_leak") lists the rules; each finding names where, never the value.
 */

export interface LeakFinding {
  /** `ops[3].value`, `flowspec`, ... */
  at: string;
  rule: 'org_secret' | 'secret_field' | 'credential';
  /** What was found, in words (a secret's name, a credential kind); never the value. */
  what: string;
}

/** Credential shapes refused in any captured value (docs/hosted-api.md lists them). */
export const CREDENTIAL_PATTERNS: readonly { kind: string; re: RegExp; check?: (m: string) => boolean }[] = [
  { kind: 'a flowctl API key', re: /svc_(?:live|test)_[0-9A-Za-z]{36}/g, check: (m) => parseApiKey(m) !== undefined },
  { kind: 'a JSON Web Token', re: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g },
  { kind: 'an AWS access key id', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { kind: 'a GitHub token', re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b/g },
  { kind: 'a Slack token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g },
  { kind: 'a Stripe secret key', re: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { kind: 'a Google API key', re: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: 'an OpenAI or Anthropic API key', re: /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}\b/g },
  { kind: 'a private key', re: /-----BEGIN [A-Z ]*PRIVATE KEY-----/g },
];

/** Field names that mark a secret field (password, PIN, one-time code, card security code, token). */
const SECRET_FIELD = /pass(?:word|phrase|code)?|\bpin\b|secret|token|\botp\b|one[- ]time|\bcvc\b|\bcvv\b|security code/i;

function isSecretField(target: unknown): boolean {
  let strategies;
  try {
    strategies = strategiesOf(normalizeTarget(target as TargetInput));
  } catch {
    return false;
  }
  return strategies.some((s) => {
    if (s.css !== undefined && (/type\s*=\s*["']?password/i.test(s.css) || SECRET_FIELD.test(s.css))) return true;
    return [s.label, s.name, s.testid, s.text, s.xpath].some((v) => v !== undefined && SECRET_FIELD.test(v));
  });
}

/** Every string inside a JSON value, with its path. */
function* strings(value: unknown, at: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [at, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, `${at}[${i}]`);
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield* strings(v, `${at}.${k}`);
}

/** Values equal to, or containing, an org secret's current value in any encoding the engine masks. */
export function findOrgSecrets(value: unknown, at: string, secrets: readonly { name: string; value: string }[]): LeakFinding[] {
  const found: LeakFinding[] = [];
  for (const secret of secrets) {
    const mask = new SecretMask();
    mask.add(secret.value);
    if (mask.size === 0) continue;
    for (const [where, text] of strings(value, at)) {
      if (mask.covers(text)) {
        found.push({ at: where, rule: 'org_secret', what: `the value of org secret "${secret.name}"` });
        break;
      }
    }
  }
  return found;
}

export function findCredentials(value: unknown, at: string): LeakFinding[] {
  const found: LeakFinding[] = [];
  for (const [where, text] of strings(value, at)) {
    for (const p of CREDENTIAL_PATTERNS) {
      for (const m of text.matchAll(p.re)) {
        if (!p.check || p.check(m[0])) {
          found.push({ at: where, rule: 'credential', what: `what looks like ${p.kind}` });
          break;
        }
      }
    }
  }
  return found;
}

/** A value typed into a secret field (password, PIN, ...) that is not moved to a secret slot. */
export function findSecretFieldValues(ops: readonly unknown[], secretSlots: readonly string[]): LeakFinding[] {
  const found: LeakFinding[] = [];
  for (const [i, raw] of ops.entries()) {
    const op = raw as { kind?: string; target?: unknown; value?: unknown; slot?: string };
    if (op?.kind !== 'fill' && op?.kind !== 'select') continue;
    if (op.value === undefined || op.value === '') continue;
    if (op.slot !== undefined && secretSlots.includes(op.slot)) continue;
    if (isSecretField(op.target)) found.push({ at: `ops[${i}].value`, rule: 'secret_field', what: 'a value typed into a secret field' });
  }
  return found;
}

export function leakMessage(findings: readonly LeakFinding[]): string {
  const list = findings
    .slice(0, 5)
    .map((f) => `${f.what} at ${f.at}`)
    .join('; ');
  return (
    `publishing would put secret material into the FlowSpec (${list}${findings.length > 5 ? `; ${findings.length - 5} more` : ''}). ` +
    'Provision it as an org secret, make the field a secret slot (secret_slots), and re-record the step without the value.'
  );
}

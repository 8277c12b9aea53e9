// src/canonical.ts
import { createHash } from "node:crypto";
import stringify from "fast-json-stable-stringify";
function canonicalJson(value) {
  const out = stringify(value);
  if (out === void 0) throw new TypeError("[flowctl] canonicalJson: value is not JSON-serialisable");
  return out;
}
function sha256Hex(data) {
  return createHash("sha256").update(data).digest("hex");
}
function digestBytes(data) {
  return `sha256:${sha256Hex(data)}`;
}
function digestOf(value) {
  return digestBytes(canonicalJson(value));
}
function prettyJson(value) {
  return JSON.stringify(sortKeysDeep(value), null, 2);
}
function sortKeysDeep(value) {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out = {};
    for (const key of Object.keys(value).sort()) {
      const v = value[key];
      if (v !== void 0) out[key] = sortKeysDeep(v);
    }
    return out;
  }
  return value;
}

// src/errors.ts
var FlowError = class extends Error {
  code;
  data;
  constructor(code, message, options = {}) {
    super(message, options.cause === void 0 ? void 0 : { cause: options.cause });
    this.name = "FlowError";
    this.code = code;
    if (options.data !== void 0) this.data = options.data;
  }
  /** The `{code, message}` body used by replay errors and the CLI's `--json` failures. */
  toJSON() {
    return this.data === void 0 ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
};
function isFlowError(err2, code) {
  return err2 instanceof FlowError && (code === void 0 || err2.code === code);
}

// src/tools/contract.ts
import { Ajv2020 } from "ajv/dist/2020.js";

// src/tools/types.ts
var CAPABILITIES = ["net", "fs", "browser", "spawn", "secrets"];

// src/tools/contract.ts
var ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
var byIdentity = /* @__PURE__ */ new WeakMap();
var byContent = /* @__PURE__ */ new Map();
var MAX_CACHED = 1e3;
function compile(schema) {
  const known = byIdentity.get(schema);
  if (known) return known;
  const key = canonicalJson(schema);
  let fn = byContent.get(key);
  if (!fn) {
    try {
      fn = ajv.compile(schema);
    } catch (err2) {
      throw new FlowError("invalid_schema", `[flowctl] [tools] invalid JSON Schema: ${err2.message}`, { cause: err2 });
    }
    if (byContent.size >= MAX_CACHED) byContent.delete(byContent.keys().next().value);
    byContent.set(key, fn);
  }
  byIdentity.set(schema, fn);
  return fn;
}
function joinPath(base, segment) {
  if (typeof segment === "number") return `${base}[${segment}]`;
  return base === "" ? segment : `${base}.${segment}`;
}
function pointerToPath(pointer) {
  if (pointer === "") return "";
  return pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~")).reduce((acc, s) => joinPath(acc, /^\d+$/.test(s) ? Number(s) : s), "");
}
function toIssue(e) {
  const path = pointerToPath(e.instancePath);
  const p = e.params;
  switch (e.keyword) {
    case "required":
      return { path: joinPath(path, String(p.missingProperty)), message: "is required" };
    case "additionalProperties":
      return { path: joinPath(path, String(p.additionalProperty)), message: "is not an allowed property" };
    case "enum":
      return { path, message: `must be one of ${p.allowedValues.map((v) => JSON.stringify(v)).join(", ")}` };
    default:
      return { path, message: e.message ?? `fails ${e.keyword}` };
  }
}
function validateAgainstSchema(schema, value) {
  const fn = compile(schema);
  if (fn(value)) return { ok: true, issues: [] };
  const seen = /* @__PURE__ */ new Set();
  const issues = [];
  for (const issue of (fn.errors ?? []).map(toIssue)) {
    const key = `${issue.path}\0${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return { ok: false, issues };
}
function formatIssues(issues) {
  return issues.map((i) => i.path === "" ? `value ${i.message}` : `${i.path} ${i.message}`).join("; ");
}
function contractDigest(contract) {
  const { ref, version, description, input_schema, output_schema, capabilities } = contract;
  return digestOf({ ref, version, description, input_schema, output_schema, capabilities });
}
var REF = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)+$/;
var SEMVER = /^\d+\.\d+\.\d+$/;
function checkContract(contract) {
  const problems = [];
  if (typeof contract.ref !== "string" || !REF.test(contract.ref)) problems.push(`ref "${contract.ref}" is not <namespace>/<name> in lowercase`);
  if (typeof contract.version !== "string" || !SEMVER.test(contract.version)) problems.push(`version "${contract.version}" is not MAJOR.MINOR.PATCH`);
  if (typeof contract.description !== "string" || contract.description.trim() === "") problems.push("description is empty");
  if (!Array.isArray(contract.capabilities)) problems.push("capabilities is not a list");
  else {
    for (const c of contract.capabilities) if (!CAPABILITIES.includes(c)) problems.push(`unknown capability "${String(c)}"`);
    if (new Set(contract.capabilities).size !== contract.capabilities.length) problems.push("capabilities has duplicates");
  }
  for (const key of ["input_schema", "output_schema"]) {
    const schema = contract[key];
    if (schema === null || typeof schema !== "object" || schema.type !== "object") {
      problems.push(`${key} must be a JSON Schema with root type "object"`);
      continue;
    }
    try {
      compile(schema);
    } catch (err2) {
      problems.push(`${key}: ${err2.message}`);
    }
  }
  if (problems.length > 0) {
    throw new FlowError("invalid_contract", `[flowctl] [tools] contract ${contract.ref}@${contract.version}: ${problems.join("; ")}`, {
      data: { ref: contract.ref, version: contract.version, problems }
    });
  }
}
function toolError(code, message, options) {
  return new FlowError(code, message, { data: { ...options.data, retryable: options.retryable }, cause: options.cause });
}
function abortError(signal, component) {
  const reason = signal.reason;
  if (isFlowError(reason)) return reason;
  if (reason instanceof Error && reason.name === "TimeoutError") {
    return toolError("step_timeout", `[flowctl] [${component}] the step timed out`, { retryable: true, cause: reason });
  }
  return toolError("aborted", `[flowctl] [${component}] aborted`, { retryable: false, cause: reason });
}
function defineTool(contract, run2) {
  checkContract(contract);
  const frozen = deepFreeze(structuredClone(contract));
  const id = `${contract.ref}@${contract.version}`;
  return {
    contract: frozen,
    async run(input, ctx) {
      const inCheck = validateAgainstSchema(frozen.input_schema, input);
      if (!inCheck.ok) {
        throw toolError("invalid_tool_input", `[flowctl] [${id}] invalid input: ${formatIssues(inCheck.issues)}`, {
          retryable: false,
          data: { issues: inCheck.issues }
        });
      }
      const output = await run2(input, ctx);
      const outCheck = validateAgainstSchema(frozen.output_schema, output);
      if (!outCheck.ok) {
        throw toolError("invalid_tool_output", `[flowctl] [${id}] output breaks the contract: ${formatIssues(outCheck.issues)}`, {
          retryable: false,
          data: { issues: outCheck.issues }
        });
      }
      return output;
    }
  };
}
function deepFreeze(value) {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

// src/tools/registry.ts
var SEMVER2 = /^(\d+)\.(\d+)\.(\d+)$/;
var RANGE = /^\d+(\.\d+){0,2}$/;
function parseSemver(v) {
  const m = SEMVER2.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : void 0;
}
function versionMatches(version, range) {
  if (!RANGE.test(range)) return false;
  const v = parseSemver(version);
  if (!v) return false;
  return range.split(".").every((part, i) => Number(part) === v[i]);
}
function compareSemver(a, b) {
  const pa = parseSemver(a);
  const pb = parseSemver(b);
  return pa[0] - pb[0] || pa[1] - pb[1] || pa[2] - pb[2];
}
function createToolRegistry(...lists) {
  const byKey = /* @__PURE__ */ new Map();
  for (const tool of lists.flat()) {
    if (!parseSemver(tool.contract.version)) {
      throw new TypeError(`[flowctl] tool ${tool.contract.ref} has version "${tool.contract.version}", not MAJOR.MINOR.PATCH`);
    }
    byKey.set(`${tool.contract.ref}@${tool.contract.version}`, tool);
  }
  const all = [...byKey.values()];
  return {
    resolve(ref, range) {
      return all.filter((t) => t.contract.ref === ref && versionMatches(t.contract.version, range)).sort((a, b) => compareSemver(b.contract.version, a.contract.version))[0];
    },
    get(ref, version) {
      return byKey.get(`${ref}@${version}`);
    },
    list() {
      return [...all];
    }
  };
}

// src/tools/lock.ts
var LOCK_FILE_NAME = "flowctl.lock";
function compareVersions(a, b) {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
function sortLock(lock) {
  const byKey = /* @__PURE__ */ new Map();
  for (const e of lock.entries) byKey.set(`${e.ref}@${e.version}`, { ref: e.ref, version: e.version, contract_digest: e.contract_digest });
  const entries = [...byKey.values()].sort((a, b) => a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : compareVersions(a.version, b.version));
  return { entries };
}
function resolvePin(registry, lock, ref, range) {
  const locked = (lock?.entries ?? []).filter((e) => e.ref === ref && versionMatches(e.version, range)).sort((a, b) => compareVersions(b.version, a.version))[0];
  if (locked) {
    const tool2 = registry.get(ref, locked.version);
    if (!tool2) {
      return {
        ok: false,
        code: "lock_mismatch",
        message: `${LOCK_FILE_NAME} pins ${ref}@${locked.version}, which no installed tool provides; install it or remove the entry to re-resolve`
      };
    }
    const digest = contractDigest(tool2.contract);
    if (digest !== locked.contract_digest) {
      return {
        ok: false,
        code: "lock_mismatch",
        message: `the contract of ${ref}@${locked.version} changed: ${LOCK_FILE_NAME} pins ${locked.contract_digest}, the installed tool has ${digest}; review the change, then remove the entry to re-pin`
      };
    }
    return { ok: true, tool: tool2, pin: { ...locked }, fromLock: true };
  }
  const tool = registry.resolve(ref, range);
  if (!tool) {
    const versions = registry.list().filter((t) => t.contract.ref === ref).map((t) => t.contract.version).sort(compareVersions);
    return {
      ok: false,
      code: "unknown_tool",
      message: versions.length ? `no version of ${ref} matches @${range} (available: ${versions.join(", ")})` : `unknown tool ${ref}${suggest(registry, ref)}`
    };
  }
  return { ok: true, tool, pin: { ref, version: tool.contract.version, contract_digest: contractDigest(tool.contract) }, fromLock: false };
}
function suggest(registry, ref) {
  const refs = [...new Set(registry.list().map((t) => t.contract.ref))].sort();
  const name = ref.split("/").pop() ?? ref;
  const close = refs.filter((r) => r.endsWith(`/${name}`) || r.includes(name));
  const list = close.length ? close : refs;
  return list.length ? ` (known tools: ${list.slice(0, 12).join(", ")})` : " (no tools are registered)";
}
function addPins(lock, pins) {
  return sortLock({ entries: [...lock?.entries ?? [], ...pins] });
}

// src/flow/expr-functions.ts
function toText(v) {
  if (v === null || v === void 0) return "";
  if (typeof v === "string") return v;
  return canonicalJson(v);
}
function jsonEquals(a, b) {
  if (a === b) return true;
  if (a === null || b === null || a === void 0 || b === void 0) return (a ?? null) === (b ?? null);
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b;
    return a.length === bb.length && a.every((x, i) => jsonEquals(x, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => a[k] !== void 0);
  const kb = Object.keys(b).filter((k) => b[k] !== void 0);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && jsonEquals(a[k], b[k]));
}
var isNil = (v) => v === null || v === void 0;
var FUNCTIONS = {
  /** Length of a string (UTF-16 units), an array, or an object's key count; 0 otherwise. */
  len: {
    min: 1,
    max: 1,
    returns: "integer",
    call: ([v]) => typeof v === "string" || Array.isArray(v) ? v.length : v !== null && typeof v === "object" ? Object.keys(v).length : 0
  },
  lower: { min: 1, max: 1, returns: "string", call: ([v]) => toText(v).toLowerCase() },
  upper: { min: 1, max: 1, returns: "string", call: ([v]) => toText(v).toUpperCase() },
  trim: { min: 1, max: 1, returns: "string", call: ([v]) => toText(v).trim() },
  /** join(array, separator = ","): items as text; a non-array is returned as text. */
  join: {
    min: 1,
    max: 2,
    returns: "string",
    call: ([arr, sep2]) => Array.isArray(arr) ? arr.map(toText).join(sep2 === void 0 ? "," : toText(sep2)) : toText(arr)
  },
  /** split(string, separator): an array of strings; an empty separator splits into characters. */
  split: { min: 2, max: 2, returns: "array", call: ([s, sep2]) => isNil(s) ? [] : toText(s).split(toText(sep2)) },
  /** Canonical JSON text (sorted keys). */
  json: { min: 1, max: 1, returns: "string", call: ([v]) => canonicalJson(v ?? null) },
  string: { min: 1, max: 1, returns: "string", call: ([v]) => toText(v) },
  /** number(x): a number from a number, a numeric string or a boolean; null when it is not one. */
  number: {
    min: 1,
    max: 1,
    returns: "any",
    call: ([v]) => {
      if (typeof v === "number") return v;
      if (typeof v === "boolean") return v ? 1 : 0;
      if (typeof v === "string" && v.trim() !== "") {
        const n = Number(v);
        return Number.isFinite(n) ? n : null;
      }
      return null;
    }
  },
  /** at(list, index) or at(object, key): one element (negative indexes count from the end); null when absent. */
  at: {
    min: 2,
    max: 2,
    returns: "any",
    call: ([v, k]) => {
      if (Array.isArray(v) && typeof k === "number" && Number.isInteger(k)) return v[k < 0 ? v.length + k : k] ?? null;
      if (v !== null && typeof v === "object" && !Array.isArray(v) && typeof k === "string" && Object.hasOwn(v, k)) {
        return v[k] ?? null;
      }
      return null;
    }
  },
  /** default(value, fallback): fallback when value is null or missing. */
  default: { min: 2, max: 2, returns: "any", call: ([v, d]) => isNil(v) ? d ?? null : v },
  /** coalesce(a, b, ...): the first argument that is not null or missing. */
  coalesce: { min: 1, max: Infinity, returns: "any", call: (args) => args.find((a) => !isNil(a)) ?? null },
  /** contains(haystack, needle): substring of a string, element of an array (structural), key of an object. */
  contains: {
    min: 2,
    max: 2,
    returns: "boolean",
    call: ([h, n]) => {
      if (typeof h === "string") return h.includes(toText(n));
      if (Array.isArray(h)) return h.some((x) => jsonEquals(x, n));
      if (h !== null && typeof h === "object") return typeof n === "string" && Object.hasOwn(h, n);
      return false;
    }
  },
  startsWith: { min: 2, max: 2, returns: "boolean", call: ([s, p]) => typeof s === "string" && s.startsWith(toText(p)) },
  endsWith: { min: 2, max: 2, returns: "boolean", call: ([s, p]) => typeof s === "string" && s.endsWith(toText(p)) }
};

// src/flow/expr-parser.ts
var PUNCT = ["==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "[", "]", ".", ",", "-", "}"];
var IDENT_START = /[A-Za-z_]/;
var IDENT_PART = /[A-Za-z0-9_-]/;
var NUMBER = /^(?:\d+(?:\.\d+)?)(?:[eE][+-]?\d+)?/;
function exprError(message, pos) {
  return new FlowError("expr_syntax", `[flowctl] [expr] ${message} (column ${pos + 1})`, {
    data: { column: pos + 1, offset: pos }
  });
}
var ESCAPES = { n: "\n", t: "	", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0" };
function readString(src, start) {
  const quote = src[start];
  let out = "";
  let i = start + 1;
  while (i < src.length) {
    const c = src[i];
    if (c === quote) return { value: out, end: i + 1 };
    if (c === "\\") {
      const e = src[i + 1];
      if (e === void 0) break;
      if (e === "u") {
        const hex = src.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw exprError("bad \\u escape: expected 4 hex digits", i);
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
        continue;
      }
      const mapped = ESCAPES[e];
      if (mapped === void 0) throw exprError(`unknown escape \\${e}`, i);
      out += mapped;
      i += 2;
      continue;
    }
    out += c;
    i++;
  }
  throw exprError("unterminated string", start);
}
function tokenize(src, start, stopAtBrace) {
  const tokens = [];
  let i = start;
  while (i < src.length) {
    const c = src[i];
    if (c === " " || c === "	" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      const s = readString(src, i);
      tokens.push({ kind: "str", text: src.slice(i, s.end), value: s.value, pos: i });
      i = s.end;
      continue;
    }
    if (c >= "0" && c <= "9") {
      const m = NUMBER.exec(src.slice(i));
      tokens.push({ kind: "num", text: m[0], value: Number(m[0]), pos: i });
      i += m[0].length;
      if (i < src.length && IDENT_START.test(src[i])) throw exprError(`unexpected "${src[i]}" after number`, i);
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < src.length && IDENT_PART.test(src[j])) j++;
      while (src[j - 1] === "-") j--;
      tokens.push({ kind: "ident", text: src.slice(i, j), pos: i });
      i = j;
      continue;
    }
    const p = PUNCT.find((op) => src.startsWith(op, i));
    if (p === void 0) throw exprError(`unexpected character "${c}"`, i);
    if (p === "}") {
      if (!stopAtBrace) throw exprError('unexpected "}"', i);
      tokens.push({ kind: "end", text: "}", pos: i });
      return { tokens, end: i + 1 };
    }
    tokens.push({ kind: "punct", text: p, pos: i });
    i += p.length;
  }
  if (stopAtBrace) throw exprError('unterminated "${": missing "}"', start - 2);
  tokens.push({ kind: "end", text: "", pos: src.length });
  return { tokens, end: src.length };
}
var INFIX = { "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4 };
var PREFIX_POWER = 5;
var Parser = class {
  constructor(tokens) {
    this.tokens = tokens;
  }
  tokens;
  i = 0;
  peek() {
    return this.tokens[this.i];
  }
  next() {
    return this.tokens[this.i++];
  }
  expect(text, what) {
    const t = this.peek();
    if (t.kind !== "punct" || t.text !== text) throw exprError(`expected ${what}, found ${describe(t)}`, t.pos);
    return this.next();
  }
  parseAll() {
    if (this.peek().kind === "end") throw exprError("empty expression", this.peek().pos);
    const e = this.expr(0);
    const t = this.peek();
    if (t.kind !== "end") throw exprError(`unexpected ${describe(t)}`, t.pos);
    return e;
  }
  expr(minPower) {
    let left = this.prefix();
    for (; ; ) {
      const t = this.peek();
      const power2 = t.kind === "punct" ? INFIX[t.text] : void 0;
      if (power2 === void 0 || power2 <= minPower) return left;
      this.next();
      const right = this.expr(power2);
      left = { type: "binary", op: t.text, left, right };
    }
  }
  prefix() {
    const t = this.next();
    switch (t.kind) {
      case "num":
        return { type: "literal", value: t.value };
      case "str":
        return { type: "literal", value: t.value };
      case "ident":
        return this.identifier(t);
      case "punct":
        if (t.text === "(") {
          const e = this.expr(0);
          this.expect(")", '")"');
          return e;
        }
        if (t.text === "!" || t.text === "-") {
          const arg = this.expr(PREFIX_POWER);
          if (t.text === "-" && arg.type === "literal" && typeof arg.value === "number") {
            return { type: "literal", value: -arg.value };
          }
          return { type: "unary", op: t.text, arg };
        }
        throw exprError(`unexpected ${describe(t)}`, t.pos);
      case "end":
        throw exprError("unexpected end of expression", t.pos);
    }
  }
  identifier(t) {
    switch (t.text) {
      case "true":
        return { type: "literal", value: true };
      case "false":
        return { type: "literal", value: false };
      case "null":
        return { type: "literal", value: null };
      case "inputs": {
        const path = this.path();
        const name = path.shift();
        if (typeof name !== "string") throw exprError('expected an input name after "inputs."', t.pos);
        return { type: "input", name, path, pos: t.pos };
      }
      case "steps": {
        const path = this.path();
        const id = path.shift();
        if (typeof id !== "string") throw exprError('expected a step id after "steps."', t.pos);
        const field = path.shift();
        if (field !== "output" && field !== "status") {
          throw exprError(`steps.${id} must be followed by ".output" or ".status"`, t.pos);
        }
        if (field === "status" && path.length > 0) throw exprError(`steps.${id}.status has no fields`, t.pos);
        return { type: "step", id, field, path, pos: t.pos };
      }
    }
    const next = this.peek();
    if (next.kind === "punct" && next.text === "(") {
      const fn = FUNCTIONS[t.text];
      if (!fn) throw exprError(`unknown function "${t.text}" (known: ${Object.keys(FUNCTIONS).join(", ")})`, t.pos);
      this.next();
      const args = [];
      if (!(this.peek().kind === "punct" && this.peek().text === ")")) {
        for (; ; ) {
          args.push(this.expr(0));
          if (this.peek().kind === "punct" && this.peek().text === ",") {
            this.next();
            continue;
          }
          break;
        }
      }
      this.expect(")", '"," or ")"');
      if (args.length < fn.min || args.length > fn.max) {
        const want = fn.min === fn.max ? `${fn.min}` : fn.max === Infinity ? `at least ${fn.min}` : `${fn.min} to ${fn.max}`;
        throw exprError(`${t.text}() takes ${want} argument(s), got ${args.length}`, t.pos);
      }
      return { type: "call", name: t.text, args, pos: t.pos };
    }
    throw exprError(`unknown name "${t.text}": expressions reference inputs.<name> or steps.<id>.output / .status`, t.pos);
  }
  /** `.name`, `["key"]` and `[0]` segments; indexes are literals so references stay static. */
  path() {
    const out = [];
    for (; ; ) {
      const t = this.peek();
      if (t.kind !== "punct") return out;
      if (t.text === ".") {
        this.next();
        const name = this.next();
        if (name.kind !== "ident") throw exprError(`expected a field name after ".", found ${describe(name)}`, name.pos);
        out.push(name.text);
      } else if (t.text === "[") {
        this.next();
        const key = this.next();
        if (key.kind === "num" && Number.isInteger(key.value)) out.push(key.value);
        else if (key.kind === "str") out.push(key.value);
        else throw exprError(`expected an integer index or a quoted key inside "[]", found ${describe(key)}`, key.pos);
        this.expect("]", '"]"');
      } else {
        return out;
      }
    }
  }
};
function describe(t) {
  return t.kind === "end" ? t.text === "}" ? '"}"' : "end of expression" : `"${t.text}"`;
}
function parseExpr(src) {
  return new Parser(tokenize(src, 0, false).tokens).parseAll();
}
function parseEmbedded(src, start) {
  const { tokens, end } = tokenize(src, start, true);
  return { expr: new Parser(tokens).parseAll(), end };
}
var PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*$/;
var RESERVED = /* @__PURE__ */ new Set(["true", "false", "null"]);
function printString(s) {
  let out = "'";
  for (const ch of s) {
    const code = ch.codePointAt(0);
    if (ch === "'") out += "\\'";
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "	") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (code < 32 || code === 127) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}'`;
}
function printNumber(n) {
  return String(n);
}
function printPath(path) {
  return path.map((seg) => typeof seg === "number" ? `[${seg}]` : PLAIN_KEY.test(seg) && !RESERVED.has(seg) ? `.${seg}` : `[${printString(seg)}]`).join("");
}
function power(e) {
  if (e.type === "binary") return INFIX[e.op];
  if (e.type === "unary") return PREFIX_POWER;
  return 10;
}
function printExpr(e) {
  switch (e.type) {
    case "literal":
      if (typeof e.value === "string") return printString(e.value);
      if (typeof e.value === "number") return e.value < 0 || Object.is(e.value, -0) ? `-${printNumber(-e.value)}` : printNumber(e.value);
      return String(e.value);
    case "input":
      return `inputs${printPath([e.name, ...e.path])}`;
    case "step":
      return `steps${printPath([e.id, e.field, ...e.path])}`;
    case "call":
      return `${e.name}(${e.args.map(printExpr).join(", ")})`;
    case "unary": {
      const inner = printExpr(e.arg);
      return power(e.arg) < PREFIX_POWER || e.arg.type === "unary" || e.arg.type === "literal" && typeof e.arg.value === "number" && e.arg.value < 0 ? `${e.op}(${inner})` : `${e.op}${inner}`;
    }
    case "binary": {
      const p = INFIX[e.op];
      const l = power(e.left) < p ? `(${printExpr(e.left)})` : printExpr(e.left);
      const r = power(e.right) <= p ? `(${printExpr(e.right)})` : printExpr(e.right);
      return `${l} ${e.op} ${r}`;
    }
  }
}

// src/flow/expr.ts
function parseTemplate(s) {
  const parts = [];
  let text = "";
  let i = 0;
  while (i < s.length) {
    if (s.startsWith("$${", i)) {
      text += "${";
      i += 3;
      continue;
    }
    if (s.startsWith("${", i)) {
      if (text) parts.push(text);
      text = "";
      const { expr, end } = parseEmbedded(s, i + 2);
      parts.push({ expr, source: s.slice(i + 2, end - 1), offset: i });
      i = end;
      continue;
    }
    text += s[i];
    i++;
  }
  if (text) parts.push(text);
  return { parts, whole: parts.length === 1 && typeof parts[0] !== "string" };
}
function parseCondition(expr) {
  if (expr.includes("${")) {
    const lead = expr.length - expr.trimStart().length;
    const t = parseTemplate(expr.trim());
    if (!t.whole) throw exprError('a condition is one expression: write "a == b" or "${a == b}"', lead);
    return t.parts[0].expr;
  }
  return parseExpr(expr);
}
function normalizeCondition(expr) {
  return printExpr(parseCondition(expr));
}
function escapeText(s) {
  return s.replaceAll("${", () => "$${");
}
function normalizeString(s) {
  if (!s.includes("${")) return s;
  return parseTemplate(s).parts.map((p) => typeof p === "string" ? escapeText(p) : `\${${printExpr(p.expr)}}`).join("");
}
function normalizeValue(value) {
  if (typeof value === "string") return normalizeString(value);
  if (Array.isArray(value)) return value.map(normalizeValue);
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = normalizeValue(v);
    return out;
  }
  return value;
}

// src/flow/static-types.ts
var isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
function jsonType(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}
function schemaTypes(schema) {
  if (!isObj(schema)) return void 0;
  if (typeof schema.type === "string") return /* @__PURE__ */ new Set([schema.type]);
  if (Array.isArray(schema.type)) return new Set(schema.type);
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map(jsonType));
  if ("const" in schema) return /* @__PURE__ */ new Set([jsonType(schema.const)]);
  return void 0;
}
function schemaAt(schema, path) {
  let cur = schema;
  for (const seg of path) {
    if (!isObj(cur)) return void 0;
    const key = String(seg);
    if (typeof seg === "number" && (Array.isArray(cur.prefixItems) || isObj(cur.items))) {
      const prefix = Array.isArray(cur.prefixItems) ? cur.prefixItems[seg] : void 0;
      cur = prefix ?? cur.items;
      continue;
    }
    if (isObj(cur.properties) && Object.hasOwn(cur.properties, key)) {
      cur = cur.properties[key];
    } else if (isObj(cur.additionalProperties)) {
      cur = cur.additionalProperties;
    } else {
      return void 0;
    }
  }
  return isObj(cur) ? cur : void 0;
}
function inferType(e, env) {
  switch (e.type) {
    case "literal":
      return /* @__PURE__ */ new Set([jsonType(e.value)]);
    case "input": {
      const input = env.inputs[e.name];
      if (!input) return void 0;
      if (e.path.length === 0) return schemaTypes(input.schema);
      return schemaTypes(schemaAt(input.schema, e.path));
    }
    case "step":
      if (e.field === "status") return /* @__PURE__ */ new Set(["string"]);
      return schemaTypes(schemaAt(env.stepOutputs[e.id], e.path));
    case "call": {
      if (e.name === "default" || e.name === "coalesce") {
        const parts = e.args.map((a) => inferType(a, env));
        if (parts.some((p) => p === void 0)) return void 0;
        return new Set(parts.flatMap((p) => [...p]).filter((t) => t !== "null"));
      }
      const r = FUNCTIONS[e.name]?.returns;
      return r === void 0 || r === "any" ? void 0 : /* @__PURE__ */ new Set([r]);
    }
    case "unary":
      return /* @__PURE__ */ new Set([e.op === "!" ? "boolean" : "number"]);
    case "binary":
      return /* @__PURE__ */ new Set(["boolean"]);
  }
}
function typeFits(actual, schema) {
  if (!actual || actual.size === 0 || !schema) return { ok: true };
  const expected = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type : void 0;
  if (!expected) return { ok: true };
  for (const t of actual) {
    if (expected.includes(t)) continue;
    if (t === "integer" && expected.includes("number")) continue;
    return { ok: false, expected: expected.join(" or ") };
  }
  return { ok: true };
}
function describeType(t) {
  return t ? [...t].join(" or ") : "unknown";
}

// src/flow/check.ts
function visitRefs(e, cb) {
  switch (e.type) {
    case "input":
    case "step":
      cb(e);
      break;
    case "call":
      e.args.forEach((a) => visitRefs(a, cb));
      break;
    case "unary":
      visitRefs(e.arg, cb);
      break;
    case "binary":
      visitRefs(e.left, cb);
      visitRefs(e.right, cb);
      break;
    case "literal":
      break;
  }
}
function checkRefs(expr, ctx, env, path) {
  let readsSecret = false;
  visitRefs(expr, (node) => {
    const at = { offset: node.pos };
    if (node.type === "input") {
      const input = env.inputs[node.name];
      if (!input) {
        const known = Object.keys(env.inputs);
        env.sink.error("unknown_input", `unknown input "${node.name}"${known.length ? ` (inputs: ${known.join(", ")})` : " (the flow declares no inputs)"}`, path, at);
        return;
      }
      if (!input.secret) return;
      readsSecret = true;
      if (ctx.where === "output") {
        env.sink.error("secret_not_allowed", `secret input "${node.name}" cannot appear in the output (secret values never leave the step that uses them)`, path, at);
      } else if (ctx.where === "if") {
        env.sink.error("secret_not_allowed", `secret input "${node.name}" cannot be used in a condition`, path, at);
      } else if (ctx.contract && !ctx.contract.capabilities.includes("secrets")) {
        env.sink.error(
          "secret_not_allowed",
          `secret input "${node.name}" is passed to ${ctx.contract.ref}@${ctx.contract.version}, whose contract does not declare the "secrets" capability`,
          path,
          at
        );
      }
      return;
    }
    const target = env.stepIndex.get(node.id);
    if (target === void 0) {
      const known = [...env.stepIndex.keys()];
      env.sink.error("unknown_step", `unknown step "${node.id}" (steps: ${known.join(", ")})`, path, at);
    } else if (ctx.where !== "output" && target >= ctx.index) {
      env.sink.error(
        "forward_reference",
        target === ctx.index ? `step "${node.id}" references itself (a cycle): a step can only read earlier steps` : `step "${node.id}" runs later (steps[${target}]): a step can only read earlier steps`,
        path,
        at
      );
    }
  });
  return readsSecret;
}
function syntaxError(env, err2, path) {
  if (!isFlowError(err2, "expr_syntax")) throw err2;
  const offset = err2.data?.offset ?? 0;
  env.sink.error("expr_syntax", err2.message.replace("[flowctl] [expr] ", "").replace(/ \(column \d+\)$/, ""), path, { offset });
}
function stringsWithExpressions(value, rel, out) {
  if (typeof value === "string") {
    if (value.includes("${")) out.push({ rel, text: value });
  } else if (Array.isArray(value)) value.forEach((v, i) => stringsWithExpressions(v, [...rel, i], out));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) stringsWithExpressions(v, [...rel, k], out);
  }
  return out;
}
function checkValue(value, base, ctx, env) {
  let readsSecret = false;
  const dynamic = [];
  for (const { rel, text } of stringsWithExpressions(value, [], [])) {
    const path = [...base, ...rel];
    let template;
    try {
      template = parseTemplate(text);
    } catch (err2) {
      syntaxError(env, err2, path);
      continue;
    }
    const exprs = template.parts.filter((p) => typeof p !== "string");
    if (exprs.length === 0) continue;
    dynamic.push(rel);
    for (const part of exprs) if (checkRefs(part.expr, ctx, env, path)) readsSecret = true;
    if (ctx.where === "args" && ctx.contract) {
      const schema = schemaAt(ctx.contract.input_schema, rel);
      const actual = template.whole ? inferType(exprs[0].expr, env) : /* @__PURE__ */ new Set(["string"]);
      const fit = typeFits(actual, schema);
      if (!fit.ok) {
        const what = template.whole ? `\${${exprs[0].source.trim()}} is ${describeType(actual)}` : "a text interpolation is a string";
        env.sink.error("type_mismatch", `${ctx.contract.ref}@${ctx.contract.version} expects ${fit.expected} here, but ${what}`, path, {
          offset: exprs[0].offset
        });
      }
    }
  }
  return { readsSecret, dynamic };
}
function checkCondition(condition, index, env) {
  const path = ["steps", index, "if"];
  let expr;
  try {
    expr = parseCondition(condition);
  } catch (err2) {
    syntaxError(env, err2, path);
    return;
  }
  checkRefs(expr, { where: "if", index }, env, path);
}
var isPrefix = (a, b) => a.length <= b.length && a.every((s, i) => String(s) === String(b[i]));
function issueSegments(path) {
  const out = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== void 0 ? Number(m[2]) : m[1]);
  return out;
}
var STRUCTURAL = /^(is required|is not an allowed property|must be (object|array|string|number|integer|boolean|null)\b|must NOT have (more|fewer) than \d+ (items|properties))/;
function checkLiteralArgs(args, dynamic, index, contract, env) {
  const { issues } = validateAgainstSchema(contract.input_schema, args);
  const tool = `${contract.ref}@${contract.version}`;
  for (const issue of issues) {
    const rel = issueSegments(issue.path);
    if (dynamic.some((d) => isPrefix(d, rel))) continue;
    if (dynamic.some((d) => isPrefix(rel, d)) && !STRUCTURAL.test(issue.message)) continue;
    const path = ["steps", index, "args", ...rel];
    const name = issue.path === "" ? "args" : issue.path;
    if (issue.message === "is not an allowed property") {
      const props = Object.keys(schemaAt(contract.input_schema, rel.slice(0, -1))?.properties ?? {});
      env.sink.error("unknown_field", `${tool} has no argument "${name}"${props.length ? ` (arguments: ${props.join(", ")})` : ""}`, path, { key: true });
    } else if (issue.message === "is required") {
      env.sink.error("missing_field", `${tool} needs the argument "${name}"`, path);
    } else {
      env.sink.error("type_mismatch", `${tool}: ${name} ${issue.message}`, path);
    }
  }
}

// src/flow/diagnostics.ts
var NO_SOURCE = () => ({ line: 1, column: 1 });
function fieldPath(path) {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
var DiagnosticSink = class {
  constructor(file, locate) {
    this.file = file;
    this.locate = locate;
  }
  file;
  locate;
  list = [];
  error(code, message, path, options) {
    this.push("error", code, message, path, options);
  }
  push(severity, code, message, path, options) {
    const { line, column } = this.locate(path, options);
    const d = { severity, code, message, file: this.file, line, column };
    if (path.length > 0) d.field = fieldPath(path);
    this.list.push(d);
  }
  get failed() {
    return this.list.some((d) => d.severity === "error");
  }
};
function sortDiagnostics(list) {
  return [...list].sort((a, b) => a.line - b.line || a.column - b.column || a.code.localeCompare(b.code));
}

// src/ports/secrets.ts
var SECRET_REF_PATTERN = /^secret:[A-Za-z0-9_.\-/]+$/;

// src/flow/inputs.ts
function itemsSchema(items) {
  if (items.type === "enum" && Array.isArray(items.values)) {
    const { type: _t, values, ...rest } = items;
    return { ...rest, enum: values };
  }
  if (items.type === "array" && items.items !== null && typeof items.items === "object" && !Array.isArray(items.items)) {
    return { ...items, items: itemsSchema(items.items) };
  }
  return items;
}
function inputSchema(def) {
  let schema;
  if (def.secret) schema = { type: "string", pattern: SECRET_REF_PATTERN.source };
  else if (def.type === "enum") schema = { enum: def.values ?? [] };
  else if (def.type === "array" && def.items) schema = { type: "array", items: itemsSchema(def.items) };
  else schema = { type: def.type };
  if (def.description !== void 0) schema.description = def.description;
  return schema;
}
function buildInputContracts(inputs, sink) {
  const out = {};
  for (const [name, def] of Object.entries(inputs ?? {})) {
    const schema = inputSchema(def);
    const contract = {
      type: def.type,
      required: def.required ?? def.default === void 0,
      secret: def.secret === true,
      schema
    };
    if (def.description !== void 0) contract.description = def.description;
    try {
      validateAgainstSchema(schema, null);
    } catch (err2) {
      if (!isFlowError(err2, "invalid_schema")) throw err2;
      sink.error("bad_input", `input "${name}": "items" is not a valid JSON Schema (${err2.message})`, ["inputs", name, "items"]);
      continue;
    }
    if (def.default !== void 0) {
      const check = validateAgainstSchema(schema, def.default);
      if (!check.ok) {
        const why = def.secret ? 'a secret default must be a reference like "secret:<name>", never a value' : def.type === "enum" ? `must be one of ${(def.values ?? []).map((v) => JSON.stringify(v)).join(", ")}` : formatIssues(check.issues);
        sink.error(def.secret ? "secret_not_allowed" : "type_mismatch", `input "${name}": default ${JSON.stringify(def.default)} does not fit type ${def.type}: ${why}`, [
          "inputs",
          name,
          "default"
        ]);
      }
      contract.default = def.default;
    }
    out[name] = contract;
  }
  return out;
}

// src/flow/source.ts
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar } from "yaml";
var MAX_ALIAS_COUNT = 100;
function lineColumn(counter, offset) {
  const p = counter.linePos(offset);
  return { line: p.line, column: p.col };
}
function childOf(node, seg) {
  if (isMap(node)) {
    for (const pair of node.items) {
      const k = pair.key;
      const kv = isScalar(k) ? k.value : k;
      if (kv === seg || typeof seg === "number" && kv === String(seg) || String(kv) === seg) {
        return { key: k, value: pair.value ?? void 0 };
      }
    }
    return void 0;
  }
  if (isSeq(node) && typeof seg === "number") {
    const item = node.items[seg];
    return item === void 0 ? void 0 : { value: item };
  }
  return void 0;
}
function nodeLocator(doc, counter, text) {
  return (path, options = {}) => {
    let node = doc.contents ?? void 0;
    let keyNode;
    for (const seg of path) {
      const next = childOf(node, seg);
      if (!next) return lineColumn(counter, (keyNode ?? node)?.range?.[0] ?? 0);
      keyNode = next.key;
      if (next.value === void 0 || next.value === null) {
        return lineColumn(counter, (next.key ?? node)?.range?.[0] ?? 0);
      }
      node = next.value;
    }
    if (options.key && keyNode?.range) return lineColumn(counter, keyNode.range[0]);
    const start = node?.range?.[0] ?? 0;
    if (options.offset !== void 0 && isScalar(node) && node.range) {
      const raw = text.slice(node.range[0], node.range[1]);
      if (!raw.includes("\n")) {
        if (node.type === Scalar.PLAIN) return lineColumn(counter, start + options.offset);
        if (node.type === Scalar.QUOTE_SINGLE || node.type === Scalar.QUOTE_DOUBLE) {
          return lineColumn(counter, start + 1 + options.offset);
        }
      }
    }
    return lineColumn(counter, start);
  };
}
function problemOffset(text, code, message, offset) {
  const quote = code === "MISSING_CHAR" ? /closing (["'])quote/.exec(message)?.[1] : void 0;
  if (!quote) return offset;
  const open2 = text.lastIndexOf(quote, offset - 1);
  return open2 >= 0 ? open2 : offset;
}
function parseFlowSource(text, file) {
  const counter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: counter,
    prettyErrors: false,
    uniqueKeys: true,
    merge: false,
    schema: "core",
    strict: true
  });
  const locate = nodeLocator(doc, counter, text);
  const sink = new DiagnosticSink(file, locate);
  const problems = [...doc.errors, ...doc.warnings];
  for (const e of problems) {
    const { line, column } = lineColumn(counter, problemOffset(text, e.code, e.message, e.pos[0]));
    sink.list.push({
      severity: "error",
      code: "yaml_syntax",
      message: `YAML: ${e.message.split("\n")[0]}`,
      file,
      line,
      column
    });
  }
  if (problems.length > 0) return { value: void 0, locate, sink };
  let value;
  try {
    value = toValue(doc.contents, doc, { aliases: 0 }, /* @__PURE__ */ new Set());
  } catch (err2) {
    const at = err2.node?.range?.[0] ?? 0;
    const { line, column } = lineColumn(counter, at);
    sink.list.push({ severity: "error", code: "yaml_syntax", message: `YAML: ${err2.message}`, file, line, column });
    return { value: void 0, locate, sink };
  }
  return { value, locate, sink };
}
var YamlValueError = class extends Error {
  constructor(message, node) {
    super(message);
    this.node = node;
  }
  node;
};
function toValue(node, doc, budget, open2) {
  if (node === null || node === void 0) return null;
  if (isScalar(node)) return node.value;
  if (isAlias(node)) {
    if (++budget.aliases > MAX_ALIAS_COUNT) throw new YamlValueError(`more than ${MAX_ALIAS_COUNT} alias expansions`, node);
    const target = node.resolve(doc);
    if (!target) throw new YamlValueError(`unresolved alias *${node.source}`, node);
    if (open2.has(target)) throw new YamlValueError(`alias *${node.source} refers to itself`, node);
    return toValue(target, doc, budget, open2);
  }
  if (isSeq(node)) {
    open2.add(node);
    const out = node.items.map((item) => toValue(item, doc, budget, open2));
    open2.delete(node);
    return out;
  }
  if (isMap(node)) {
    open2.add(node);
    const out = {};
    for (const pair of node.items) {
      const k = pair.key;
      if (k !== null && !isScalar(k)) throw new YamlValueError("mapping keys must be plain values, not lists or mappings", k ?? node);
      const key = String(isScalar(k) ? k.value : null);
      const v = toValue(pair.value, doc, budget, open2);
      if (key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
    }
    open2.delete(node);
    return out;
  }
  throw new YamlValueError("unsupported YAML node", node);
}

// src/flow/validate.ts
var FLOW_NAME = /^[a-z0-9][a-z0-9-]*$/;
var FLOW_NAME_MAX = 64;
var IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*$/;
var IDENTIFIER_MAX = 64;
var TOOL_REF = /^([a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*)+)@(\d+(?:\.\d+){0,2})$/;
var INPUT_TYPES = ["string", "number", "integer", "boolean", "object", "array", "enum"];
var FLOW_KEYS = ["name", "description", "inputs", "steps", "output"];
var INPUT_KEYS = ["type", "description", "required", "default", "secret", "values", "items"];
var STEP_KEYS = ["id", "tool", "args", "if", "retry", "timeout_ms"];
var RETRY_KEYS = ["max_attempts", "backoff_ms", "backoff_factor"];
var LIMITS = {
  max_attempts: [1, 100],
  backoff_ms: [0, 6e5],
  backoff_factor: [1, 10],
  timeout_ms: [1, 36e5]
};
var isObj2 = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
function kind(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  return `a ${typeof v}`;
}
function unknownKeys(sink, obj, known, path, where) {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) {
      sink.error("unknown_field", `unknown field "${key}" in ${where} (known: ${known.join(", ")})`, [...path, key], { key: true });
    }
  }
}
function checkJson(sink, value, path) {
  if (typeof value === "number" && !Number.isFinite(value)) {
    sink.error("bad_type", `${value} is not a JSON number`, path);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkJson(sink, v, [...path, i]));
  } else if (isObj2(value)) {
    for (const [k, v] of Object.entries(value)) checkJson(sink, v, [...path, k]);
  }
}
function checkInput(sink, name, def, path) {
  if (!IDENTIFIER.test(name) || name.length > IDENTIFIER_MAX) {
    sink.error("bad_name", `input name "${name}" must match ${IDENTIFIER.source} (at most ${IDENTIFIER_MAX} characters)`, path, { key: true });
  }
  if (!isObj2(def)) {
    sink.error("not_a_mapping", `input "${name}" must be a mapping with at least "type", got ${kind(def)}`, path);
    return;
  }
  unknownKeys(sink, def, INPUT_KEYS, path, `input "${name}"`);
  if (def.type === void 0) sink.error("missing_field", `input "${name}" needs a "type" (${INPUT_TYPES.join(", ")})`, path);
  else if (typeof def.type !== "string" || !INPUT_TYPES.includes(def.type)) {
    sink.error("bad_type", `input "${name}" has type ${JSON.stringify(def.type)}; use one of ${INPUT_TYPES.join(", ")}`, [...path, "type"]);
  }
  for (const key of ["required", "secret"]) {
    if (def[key] !== void 0 && typeof def[key] !== "boolean") {
      sink.error("bad_type", `input "${name}": "${key}" must be true or false`, [...path, key]);
    }
  }
  if (def.description !== void 0 && typeof def.description !== "string") {
    sink.error("bad_type", `input "${name}": "description" must be a string`, [...path, "description"]);
  }
  if (def.required === true && def.default !== void 0) {
    sink.error("bad_input", `input "${name}" has a default, so it cannot be required`, [...path, "required"]);
  }
  if (def.secret === true && def.type !== "string") {
    sink.error("bad_input", `secret input "${name}" must have type string (it carries a secret reference)`, [...path, "secret"]);
  }
  if (def.type === "enum") {
    const values = def.values;
    if (values === void 0) sink.error("missing_field", `enum input "${name}" needs "values"`, path);
    else if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === "string" || typeof v === "boolean" || typeof v === "number" && Number.isFinite(v))) {
      sink.error("bad_input", `input "${name}": "values" must be a non-empty list of strings, numbers or booleans`, [...path, "values"]);
    } else if (new Set(values.map((v) => JSON.stringify(v))).size !== values.length) {
      sink.error("bad_input", `input "${name}": "values" has duplicates`, [...path, "values"]);
    }
  } else if (def.values !== void 0) {
    sink.error("bad_input", `input "${name}": "values" is only for type enum`, [...path, "values"], { key: true });
  }
  if (def.items !== void 0) {
    if (def.type !== "array") sink.error("bad_input", `input "${name}": "items" is only for type array`, [...path, "items"], { key: true });
    else if (!isObj2(def.items)) sink.error("not_a_mapping", `input "${name}": "items" must be a mapping (a type or a JSON Schema)`, [...path, "items"]);
  }
  checkJson(sink, def.default, [...path, "default"]);
}
function checkRetry(sink, retry, path) {
  if (!isObj2(retry)) {
    sink.error("bad_retry", `"retry" must be a mapping of ${RETRY_KEYS.join(", ")}`, path);
    return;
  }
  unknownKeys(sink, retry, RETRY_KEYS, path, "retry");
  for (const key of RETRY_KEYS) {
    const v = retry[key];
    if (v === void 0) continue;
    const [min, max] = LIMITS[key];
    const integer = key !== "backoff_factor";
    if (typeof v !== "number" || !Number.isFinite(v) || integer && !Number.isInteger(v) || v < min || v > max) {
      sink.error("bad_retry", `retry.${key} must be ${integer ? "an integer" : "a number"} from ${min} to ${max}, got ${JSON.stringify(v)}`, [...path, key]);
    }
  }
}
function checkStep(sink, step, path, seen) {
  if (!isObj2(step)) {
    sink.error("not_a_mapping", `a step must be a mapping with "id" and "tool", got ${kind(step)}`, path);
    return;
  }
  unknownKeys(sink, step, STEP_KEYS, path, "a step");
  const id = step.id;
  if (id === void 0) sink.error("missing_field", 'a step needs an "id"', path);
  else if (typeof id !== "string") sink.error("bad_type", `step id must be a string, got ${kind(id)}`, [...path, "id"]);
  else if (!IDENTIFIER.test(id) || id.length > IDENTIFIER_MAX) {
    sink.error("bad_name", `step id "${id}" must match ${IDENTIFIER.source} (at most ${IDENTIFIER_MAX} characters)`, [...path, "id"]);
  } else if (seen.has(id)) {
    sink.error("duplicate_step", `step id "${id}" is already used by steps[${seen.get(id)}]`, [...path, "id"]);
  } else {
    seen.set(id, path[1]);
  }
  const tool = step.tool;
  if (tool === void 0) sink.error("missing_field", `step ${typeof id === "string" ? `"${id}" ` : ""}needs a "tool" (ref@version)`, path);
  else if (typeof tool !== "string") sink.error("bad_type", `"tool" must be a string ref@version, got ${kind(tool)}`, [...path, "tool"]);
  else if (!TOOL_REF.test(tool)) {
    sink.error("bad_tool_ref", `"${tool}" is not a tool reference: write namespace/name@version, e.g. core/template@1`, [...path, "tool"]);
  }
  if (step.args !== void 0 && !isObj2(step.args)) {
    sink.error("not_a_mapping", `"args" must be a mapping of argument names to values, got ${kind(step.args)}`, [...path, "args"]);
  }
  checkJson(sink, step.args, [...path, "args"]);
  if (step.if !== void 0 && (typeof step.if !== "string" || step.if.trim() === "")) {
    sink.error("bad_condition", `"if" must be an expression string such as "inputs.enabled == true", got ${kind(step.if)}`, [...path, "if"]);
  }
  if (step.retry !== void 0) checkRetry(sink, step.retry, [...path, "retry"]);
  if (step.timeout_ms !== void 0) {
    const t = step.timeout_ms;
    const [min, max] = LIMITS.timeout_ms;
    if (typeof t !== "number" || !Number.isInteger(t) || t < min || t > max) {
      sink.error("bad_timeout", `timeout_ms must be an integer from ${min} to ${max}, got ${JSON.stringify(t)}`, [...path, "timeout_ms"]);
    }
  }
}
function validateFlowShape(value, sink) {
  const before = sink.list.length;
  if (!isObj2(value)) {
    sink.error("not_a_mapping", value === void 0 || value === null ? "the flow is empty: expected a mapping with name and steps" : `a flow must be a mapping, got ${kind(value)}`, []);
    return void 0;
  }
  unknownKeys(sink, value, FLOW_KEYS, [], "the flow");
  const name = value.name;
  if (name === void 0) sink.error("missing_field", 'the flow needs a "name"', []);
  else if (typeof name !== "string") sink.error("bad_type", `"name" must be a string, got ${kind(name)}`, ["name"]);
  else if (!FLOW_NAME.test(name) || name.length > FLOW_NAME_MAX) {
    sink.error("bad_name", `flow name "${name}" must match ${FLOW_NAME.source} and be 1 to ${FLOW_NAME_MAX} characters`, ["name"]);
  }
  if (value.description !== void 0 && typeof value.description !== "string") {
    sink.error("bad_type", `"description" must be a string, got ${kind(value.description)}`, ["description"]);
  }
  if (value.inputs !== void 0 && value.inputs !== null) {
    if (!isObj2(value.inputs)) sink.error("not_a_mapping", `"inputs" must be a mapping of input names to definitions, got ${kind(value.inputs)}`, ["inputs"]);
    else for (const [k, def] of Object.entries(value.inputs)) checkInput(sink, k, def, ["inputs", k]);
  }
  const steps = value.steps;
  if (steps === void 0) sink.error("missing_field", 'the flow needs "steps" (a list of at least one step)', []);
  else if (!Array.isArray(steps)) sink.error("bad_type", `"steps" must be a list, got ${kind(steps)}`, ["steps"]);
  else if (steps.length === 0) sink.error("no_steps", '"steps" is empty: a flow needs at least one step', ["steps"]);
  else {
    const seen = /* @__PURE__ */ new Map();
    steps.forEach((s, i) => checkStep(sink, s, ["steps", i], seen));
  }
  checkJson(sink, value.output, ["output"]);
  if (sink.list.length > before) return void 0;
  const flow = { name, steps };
  if (value.description !== void 0) flow.description = value.description;
  if (isObj2(value.inputs)) flow.inputs = value.inputs;
  if (value.output !== void 0 && value.output !== null) flow.output = value.output;
  return flow;
}

// src/flow/compile.ts
var DEFAULT_RETRY = Object.freeze({ max_attempts: 1, backoff_ms: 0, backoff_factor: 2 });
var DEFAULT_TIMEOUT_MS = 3e4;
function compile2(source, options) {
  const parsed = parseFlowSource(source, options.file);
  if (parsed.sink.failed) return { ok: false, diagnostics: sortDiagnostics(parsed.sink.list) };
  return compileWith(parsed.value, options, parsed.sink);
}
function compileFlow(flow, options) {
  return compileWith(flow, options, new DiagnosticSink(options.file, options.locate ?? NO_SOURCE));
}
function compileWith(value, options, sink) {
  const flow = validateFlowShape(value, sink);
  if (!flow) return { ok: false, diagnostics: sortDiagnostics(sink.list) };
  const inputs = buildInputContracts(flow.inputs, sink);
  const env = { inputs, stepOutputs: {}, stepIndex: new Map(flow.steps.map((s, i) => [s.id, i])), sink };
  const tools = [];
  const pins = [];
  const newPins = /* @__PURE__ */ new Map();
  flow.steps.forEach((step, i) => {
    const [, ref, range] = TOOL_REF.exec(step.tool);
    const r = resolvePin(options.tools, options.lock, ref, range);
    if (!r.ok) {
      sink.error(r.code, r.message, ["steps", i, "tool"]);
      return;
    }
    tools[i] = r.tool;
    pins[i] = r.pin;
    env.stepOutputs[step.id] = r.tool.contract.output_schema;
    if (!r.fromLock) newPins.set(`${r.pin.ref}@${r.pin.version}`, r.pin);
  });
  const capabilities = [];
  flow.steps.forEach((step, i) => {
    const contract = tools[i]?.contract;
    const args = step.args ?? {};
    const { readsSecret, dynamic } = checkValue(args, ["steps", i, "args"], { where: "args", index: i, contract }, env);
    if (contract) {
      checkLiteralArgs(args, dynamic, i, contract, env);
      capabilities[i] = CAPABILITIES.filter((c) => contract.capabilities.includes(c) && (c !== "secrets" || readsSecret));
    }
    if (step.if !== void 0) checkCondition(step.if, i, env);
  });
  if (flow.output !== void 0) checkValue(flow.output, ["output"], { where: "output" }, env);
  if (sink.failed) return { ok: false, diagnostics: sortDiagnostics(sink.list) };
  const steps = flow.steps.map((step, i) => {
    const spec2 = {
      id: step.id,
      tool: { ...pins[i] },
      capabilities: capabilities[i],
      args: normalizeValue(step.args ?? {}),
      retry: { ...DEFAULT_RETRY, ...step.retry },
      timeout_ms: step.timeout_ms ?? DEFAULT_TIMEOUT_MS
    };
    if (step.if !== void 0) spec2.if = normalizeCondition(step.if);
    return spec2;
  });
  const spec = { flowspec: 1, name: flow.name, inputs, steps };
  if (flow.description !== void 0) spec.description = flow.description;
  if (flow.output !== void 0) spec.output = normalizeValue(flow.output);
  const pinsList = [...newPins.values()];
  return { ok: true, spec, flow_digest: digestOf(spec), lock: addPins(options.lock, pinsList), newPins: pinsList, flow };
}

// src/tools/builtins/core-assert.ts
function truthy(v) {
  return !(v === false || v === null || v === 0 || v === "" || v === void 0);
}
var coreAssert = defineTool(
  {
    ref: "core/assert",
    version: "1.0.0",
    description: "Fail the step with `assertion_failed` unless `that` is truthy, or unless `actual` deeply equals `expected`.",
    input_schema: {
      type: "object",
      properties: {
        that: { description: 'Holds when truthy (false, null, 0 and "" are falsy).' },
        actual: { description: "Compared with `expected` by canonical JSON." },
        expected: {},
        message: { type: "string", description: "Said when the assertion fails." }
      },
      oneOf: [{ required: ["that"] }, { required: ["actual", "expected"] }],
      additionalProperties: false
    },
    output_schema: {
      type: "object",
      properties: { ok: { const: true } },
      required: ["ok"],
      additionalProperties: false
    },
    capabilities: []
  },
  async (input) => {
    const label = input.message ?? "assertion failed";
    if ("that" in input) {
      if (!truthy(input.that)) {
        throw toolError("assertion_failed", `[flowctl] [core/assert] ${label}: value is ${JSON.stringify(input.that)}`, {
          retryable: false,
          data: { that: input.that }
        });
      }
    } else if (canonicalJson(input.actual) !== canonicalJson(input.expected)) {
      throw toolError(
        "assertion_failed",
        `[flowctl] [core/assert] ${label}: expected ${canonicalJson(input.expected)}, got ${canonicalJson(input.actual)}`,
        { retryable: false, data: { actual: input.actual, expected: input.expected } }
      );
    }
    return { ok: true };
  }
);

// src/tools/builtins/core-template.ts
var PLACEHOLDER = /\{\{(.*?)\}\}/gs;
var PATH = /^[A-Za-z_$][\w$-]*(?:\.[A-Za-z_$][\w$-]*|\[\d+\])*$/;
function lookup(values, path) {
  let current = values;
  for (const part of path.match(/[^.[\]]+/g) ?? []) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, part)) return { found: false };
    current = current[part];
  }
  return { found: true, value: current };
}
function render(value) {
  if (value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return canonicalJson(value);
}
function renderTemplate(template, values) {
  return template.replace(PLACEHOLDER, (_match, rawInner) => {
    const inner = rawInner.trim();
    if (inner.startsWith('"')) {
      try {
        const literal = JSON.parse(inner);
        if (typeof literal === "string") return literal;
      } catch {
      }
    } else if (PATH.test(inner)) {
      const hit = lookup(values, inner);
      if (!hit.found) {
        throw toolError("template_missing_value", `[flowctl] [core/template] no value for {{ ${inner} }}`, {
          retryable: false,
          data: { path: inner }
        });
      }
      return render(hit.value);
    }
    throw toolError("template_syntax", `[flowctl] [core/template] malformed placeholder {{${rawInner}}}`, {
      retryable: false,
      data: { placeholder: rawInner }
    });
  });
}
var coreTemplate = defineTool(
  {
    ref: "core/template",
    version: "1.0.0",
    description: "Render a text template: {{ path }} placeholders are replaced from `values`.",
    input_schema: {
      type: "object",
      properties: {
        template: { type: "string", description: "Text with {{ path }} placeholders." },
        values: { type: "object", description: "The values placeholders refer to." }
      },
      required: ["template"],
      additionalProperties: false
    },
    output_schema: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false
    },
    capabilities: []
  },
  async (input) => ({ text: renderTemplate(input.template, input.values ?? {}) })
);

// src/tools/builtins/core-transform.ts
var coreTransform = defineTool(
  {
    ref: "core/transform",
    version: "1.0.0",
    description: "Return `value` as given (after the flow has evaluated its expressions): builds objects and reshapes data.",
    input_schema: {
      type: "object",
      properties: { value: { description: "Any JSON value." } },
      required: ["value"],
      additionalProperties: false
    },
    output_schema: {
      type: "object",
      properties: { value: {} },
      required: ["value"],
      additionalProperties: false
    },
    capabilities: []
  },
  async (input) => ({ value: input.value })
);

// src/tools/builtins/fs-read.ts
import { open } from "node:fs/promises";

// src/tools/builtins/fs-paths.ts
import { lstat, realpath } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep, win32 } from "node:path";
var fail = (tool, code, message, path) => toolError(code, `[flowctl] [${tool}] ${message}`, { retryable: false, data: { path } });
function inside(root, target) {
  const rel = relative(root, target);
  return rel === "" || !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}
function rootedPath(tool, root, path) {
  if (path === "" || path.includes("\0")) throw fail(tool, "fs_bad_path", `invalid path ${JSON.stringify(path)}`, path);
  if (isAbsolute(path) || win32.isAbsolute(path)) {
    throw fail(tool, "fs_path_outside_root", `absolute paths are refused: "${path}" (use a path relative to the root)`, path);
  }
  const abs = resolve(root, path);
  if (!inside(resolve(root), abs)) throw fail(tool, "fs_path_outside_root", `"${path}" escapes the root`, path);
  return { abs, rel: relative(resolve(root), abs).split(sep).join("/") || "." };
}
async function assertRealPathInside(tool, root, target, path) {
  const realRoot = await realpath(root);
  let probe = target.abs;
  for (; ; ) {
    try {
      await lstat(probe);
      break;
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
      const parent = dirname(probe);
      if (parent === probe) break;
      probe = parent;
    }
  }
  let real;
  try {
    real = await realpath(probe);
  } catch (e) {
    if (e.code === "ENOENT") {
      throw fail(tool, "fs_path_outside_root", `"${path}" goes through a dangling symlink`, path);
    }
    throw e;
  }
  if (!inside(realRoot, real)) throw fail(tool, "fs_path_outside_root", `"${path}" resolves outside the root through a symlink`, path);
}

// src/tools/builtins/fs-read.ts
var NAME = "fs/read";
var DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
var fsRead = defineTool(
  {
    ref: "fs/read",
    version: "1.0.0",
    description: "Read a file under the project (or sandbox) root as text, base64 or parsed JSON.",
    input_schema: {
      type: "object",
      properties: {
        path: { type: "string", minLength: 1, description: "Relative to the root; absolute paths and escapes are refused." },
        as: { enum: ["text", "base64", "json"], default: "text" },
        max_bytes: { type: "integer", minimum: 0, description: "Largest file accepted. Default 10485760." }
      },
      required: ["path"],
      additionalProperties: false
    },
    output_schema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Normalized, relative to the root." },
        content: { description: "A string for text and base64, the parsed value for json." },
        bytes: { type: "integer" },
        digest: { type: "string", description: "sha256 of the raw bytes." }
      },
      required: ["path", "content", "bytes", "digest"],
      additionalProperties: false
    },
    capabilities: ["fs"]
  },
  async (input, ctx) => {
    if (ctx.signal.aborted) throw abortError(ctx.signal, NAME);
    const target = rootedPath(NAME, ctx.cwd, input.path);
    const fail3 = (code, message, cause) => toolError(code, `[flowctl] [${NAME}] ${message}`, { retryable: false, data: { path: target.rel }, cause });
    await assertRealPathInside(NAME, ctx.cwd, target, input.path);
    let handle;
    try {
      handle = await open(target.abs, "r");
    } catch (e) {
      const code = e.code;
      if (code === "ENOENT") throw fail3("fs_not_found", `"${target.rel}" does not exist`, e);
      if (code === void 0) throw e;
      throw fail3("fs_io", `cannot open "${target.rel}": ${code}`, e);
    }
    let bytes;
    try {
      const stat2 = await handle.stat();
      if (!stat2.isFile()) throw fail3("fs_not_a_file", `"${target.rel}" is not a regular file`);
      const max = input.max_bytes ?? DEFAULT_MAX_BYTES;
      if (stat2.size > max) throw fail3("fs_too_large", `"${target.rel}" has ${stat2.size} bytes, more than ${max}`);
      bytes = await handle.readFile();
    } catch (e) {
      if (e.code === "EISDIR") throw fail3("fs_not_a_file", `"${target.rel}" is a directory`, e);
      throw e;
    } finally {
      await handle.close();
    }
    let content;
    if (input.as === "base64") content = bytes.toString("base64");
    else {
      content = bytes.toString("utf8");
      if (input.as === "json") {
        try {
          content = JSON.parse(content);
        } catch (e) {
          throw fail3("fs_bad_json", `"${target.rel}" is not valid JSON: ${e.message}`, e);
        }
      }
    }
    return { path: target.rel, content, bytes: bytes.byteLength, digest: digestBytes(bytes) };
  }
);

// src/tools/builtins/fs-write.ts
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname as dirname2, join } from "node:path";
var NAME2 = "fs/write";
var tempCounter = 0;
var fsWrite = defineTool(
  {
    ref: "fs/write",
    version: "1.0.0",
    description: "Write a file under the project (or sandbox) root atomically, from text, base64 or a JSON value.",
    input_schema: {
      type: "object",
      properties: {
        path: { type: "string", minLength: 1, description: "Relative to the root; absolute paths and escapes are refused." },
        content: { type: "string" },
        json: { description: "Written as pretty JSON with sorted keys." },
        encoding: { enum: ["utf8", "base64"], default: "utf8", description: "How `content` is encoded." },
        mkdirs: { type: "boolean", default: true, description: "Create missing parent directories." }
      },
      required: ["path"],
      oneOf: [{ required: ["content"] }, { required: ["json"] }],
      additionalProperties: false
    },
    output_schema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Normalized, relative to the root." },
        bytes: { type: "integer" },
        digest: { type: "string", description: "sha256 of the bytes written." }
      },
      required: ["path", "bytes", "digest"],
      additionalProperties: false
    },
    capabilities: ["fs"]
  },
  async (input, ctx) => {
    if (ctx.signal.aborted) throw abortError(ctx.signal, NAME2);
    const target = rootedPath(NAME2, ctx.cwd, input.path);
    if (target.rel === ".") throw toolError("fs_bad_path", `[flowctl] [${NAME2}] cannot write the root itself`, { retryable: false, data: { path: input.path } });
    await assertRealPathInside(NAME2, ctx.cwd, target, input.path);
    const bytes = input.json !== void 0 ? Buffer.from(`${prettyJson(input.json)}
`, "utf8") : Buffer.from(input.content ?? "", input.encoding === "base64" ? "base64" : "utf8");
    ctx.effect({ kind: "fs", target: target.rel });
    const dir = dirname2(target.abs);
    const temp = join(dir, `.${basename(target.abs)}.${process.pid}.${++tempCounter}.tmp`);
    try {
      if (input.mkdirs !== false) await mkdir(dir, { recursive: true });
      await writeFile(temp, bytes, { flag: "wx" });
      await rename(temp, target.abs);
    } catch (e) {
      await rm(temp, { force: true }).catch(() => void 0);
      const code = e.code;
      if (code === "ENOENT") {
        throw toolError("fs_not_found", `[flowctl] [${NAME2}] the parent directory of "${target.rel}" does not exist`, {
          retryable: false,
          data: { path: target.rel },
          cause: e
        });
      }
      if (code === void 0) throw e;
      throw toolError("fs_io", `[flowctl] [${NAME2}] cannot write "${target.rel}": ${code}`, { retryable: false, data: { path: target.rel }, cause: e });
    }
    return { path: target.rel, bytes: bytes.byteLength, digest: digestBytes(bytes) };
  }
);

// src/tools/builtins/http-request.ts
var METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
var DEFAULT_MAX_BYTES2 = 10 * 1024 * 1024;
var SCALAR = { type: ["string", "number", "boolean"] };
var NAME3 = "http/request";
var err = (code, message, retryable, data, cause) => toolError(code, `[flowctl] [${NAME3}] ${message}`, { retryable, data, cause });
function buildUrl(input) {
  let url;
  try {
    url = new URL(input.url);
  } catch (cause) {
    throw err("http_bad_url", `"${input.url}" is not an absolute URL`, false, { url: input.url }, cause);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw err("http_bad_url", `"${input.url}" is not http or https`, false, { url: input.url });
  }
  for (const [key, value] of Object.entries(input.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(v));
  }
  return url;
}
function buildHeaders(input) {
  try {
    const headers = new Headers(input.headers ?? {});
    if (input.json !== void 0 && !headers.has("content-type")) headers.set("content-type", "application/json");
    return headers;
  } catch (cause) {
    throw err("http_bad_request", `invalid headers: ${cause.message}`, false, void 0, cause);
  }
}
function networkDetail(e) {
  const cause = e.cause;
  return cause?.code ?? cause?.message ?? e.message;
}
async function readBody(res, maxBytes, signal) {
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks = [];
  let total = 0;
  for (; ; ) {
    if (signal.aborted) throw signal.reason;
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => void 0);
      throw err("http_response_too_large", `response body exceeds ${maxBytes} bytes`, false, { max_bytes: maxBytes });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
function headerObject(headers) {
  const out = {};
  for (const [key, value] of headers) out[key] = key in out ? `${out[key]}, ${value}` : value;
  return out;
}
function isJsonType(contentType) {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
}
function statusAccepted(status, expect) {
  if (expect === void 0) return status < 400;
  return (Array.isArray(expect) ? expect : [expect]).includes(status);
}
async function request(input, ctx) {
  const url = buildUrl(input);
  const headers = buildHeaders(input);
  const method = input.method ?? "GET";
  if (ctx.signal.aborted) throw abortError(ctx.signal, NAME3);
  const timeout = new AbortController();
  const timer = input.timeout_ms === void 0 ? void 0 : setTimeout(() => timeout.abort(), input.timeout_ms);
  const signal = AbortSignal.any([ctx.signal, timeout.signal]);
  const classify = (e) => {
    if (ctx.signal.aborted) return abortError(ctx.signal, NAME3);
    if (timeout.signal.aborted) return err("http_timeout", `${method} ${url.origin} timed out after ${input.timeout_ms} ms`, true, { timeout_ms: input.timeout_ms });
    if (e instanceof FlowError) return e;
    return err("http_network", `${method} ${url.origin} failed: ${networkDetail(e)}`, true, { detail: networkDetail(e) }, e);
  };
  ctx.effect({ kind: "net", target: url.host });
  try {
    let res;
    try {
      res = await fetch(url, {
        method,
        headers,
        body: input.json !== void 0 ? JSON.stringify(input.json) : input.body,
        signal,
        redirect: "follow"
      });
    } catch (e) {
      throw classify(e);
    }
    let bytes;
    try {
      bytes = await readBody(res, input.max_bytes ?? DEFAULT_MAX_BYTES2, signal);
    } catch (e) {
      throw classify(e);
    }
    const text = new TextDecoder().decode(bytes);
    let body = text;
    if (isJsonType(res.headers.get("content-type")) && text !== "") {
      try {
        body = JSON.parse(text);
      } catch (cause) {
        throw err("http_bad_json", `${method} ${url.origin} answered invalid JSON`, false, { status: res.status }, cause);
      }
    }
    if (!statusAccepted(res.status, input.expect_status)) {
      throw err("http_status", `${method} ${url.origin}${url.pathname} answered ${res.status}`, res.status >= 500, {
        status: res.status,
        body
      });
    }
    return { status: res.status, headers: headerObject(res.headers), body, url: res.url || url.href };
  } finally {
    if (timer) clearTimeout(timer);
  }
}
var httpRequest = defineTool(
  {
    ref: "http/request",
    version: "1.0.0",
    description: "Send one HTTP request and return status, headers and body (parsed when JSON).",
    input_schema: {
      type: "object",
      properties: {
        method: { enum: [...METHODS], default: "GET" },
        url: { type: "string", description: "Absolute http or https URL." },
        headers: { type: "object", additionalProperties: { type: "string" } },
        query: { type: "object", additionalProperties: { anyOf: [SCALAR, { type: "array", items: SCALAR }] } },
        json: { description: "A JSON body; sets content-type application/json unless given." },
        body: { type: "string", description: "A text body." },
        timeout_ms: { type: "integer", minimum: 1, description: "Request deadline, body included. Default: the step timeout only." },
        expect_status: {
          anyOf: [{ type: "integer" }, { type: "array", items: { type: "integer" }, minItems: 1 }],
          description: "Accepted statuses. Default: any status below 400."
        },
        max_bytes: { type: "integer", minimum: 0, description: "Largest accepted response body. Default 10485760." }
      },
      required: ["url"],
      not: { required: ["json", "body"] },
      additionalProperties: false
    },
    output_schema: {
      type: "object",
      properties: {
        status: { type: "integer" },
        headers: { type: "object", additionalProperties: { type: "string" } },
        body: { description: "Parsed JSON when the content-type is JSON, else text." },
        url: { type: "string", description: "The final URL after redirects." }
      },
      required: ["status", "headers", "body", "url"],
      additionalProperties: false
    },
    capabilities: ["net"]
  },
  request
);

// src/tools/builtins/shell-exec.ts
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { constants } from "node:os";
var NAME4 = "shell/exec";
var DEFAULT_MAX_OUTPUT = 8 * 1024 * 1024;
var TAIL = 4096;
var fail2 = (code, message, retryable, data, cause) => toolError(code, `[flowctl] [${NAME4}] ${message}`, { retryable, data, cause });
async function resolveCwd(input, ctx) {
  if (input.cwd === void 0) return ctx.cwd;
  const target = rootedPath(NAME4, ctx.cwd, input.cwd);
  await assertRealPathInside(NAME4, ctx.cwd, target, input.cwd);
  const info = await stat(target.abs).catch(() => void 0);
  if (!info?.isDirectory()) throw fail2("exec_bad_cwd", `cwd "${target.rel}" is not a directory`, false, { cwd: target.rel });
  return target.abs;
}
function run(input, ctx, cwd) {
  const maxOutput = input.max_output_bytes ?? DEFAULT_MAX_OUTPUT;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(input.command, input.args ?? [], {
      cwd,
      env: { ...process.env, ...input.env },
      stdio: "pipe",
      detached: process.platform !== "win32",
      windowsHide: true
    });
    const out = [];
    const err2 = [];
    const size = { out: 0, err: 0 };
    let stopped;
    const killGroup = () => {
      try {
        if (child.pid !== void 0 && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
      }
    };
    const stop = (reason) => {
      stopped ??= reason;
      killGroup();
    };
    const timer = input.timeout_ms === void 0 ? void 0 : setTimeout(
      () => stop(fail2("exec_timeout", `"${input.command}" ran longer than ${input.timeout_ms} ms and was killed`, true, { timeout_ms: input.timeout_ms })),
      input.timeout_ms
    );
    const onAbort = () => stop(abortError(ctx.signal, NAME4));
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    if (ctx.signal.aborted) onAbort();
    const collect = (chunks, key) => (chunk) => {
      size[key] += chunk.byteLength;
      if (size[key] > maxOutput) {
        stop(fail2("exec_output_too_large", `"${input.command}" wrote more than ${maxOutput} bytes to std${key}`, false, { max_output_bytes: maxOutput }));
        return;
      }
      chunks.push(chunk);
    };
    child.stdout.on("data", collect(out, "out"));
    child.stderr.on("data", collect(err2, "err"));
    child.stdin.on("error", () => void 0);
    child.stdin.end(input.input ?? "");
    let spawnError;
    child.on("error", (e) => {
      spawnError ??= e;
    });
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
      if (stopped) return reject(stopped);
      if (spawnError) {
        if (spawnError.code === "ENOENT") return reject(fail2("exec_not_found", `command "${input.command}" not found`, false, { command: input.command }, spawnError));
        return reject(fail2("exec_spawn_failed", `cannot start "${input.command}": ${spawnError.code ?? spawnError.message}`, false, { command: input.command }, spawnError));
      }
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = Buffer.concat(err2).toString("utf8");
      const exit_code = code ?? 128 + (signal ? constants.signals[signal] ?? 0 : 0);
      if (exit_code !== 0 && input.allow_failure !== true) {
        return reject(
          fail2("exec_failed", `"${input.command}" exited with code ${exit_code}${stderr ? `: ${stderr.slice(-200).trim()}` : ""}`, false, {
            exit_code,
            signal: signal ?? void 0,
            stdout: stdout.slice(-TAIL),
            stderr: stderr.slice(-TAIL)
          })
        );
      }
      resolvePromise({ exit_code, stdout, stderr });
    });
  });
}
var shellExec = defineTool(
  {
    ref: "shell/exec",
    version: "1.0.0",
    description: "Run a program with arguments (no shell) and return its exit code, stdout and stderr.",
    input_schema: {
      type: "object",
      properties: {
        command: { type: "string", minLength: 1, description: "Program name on PATH, or a path relative to cwd." },
        args: { type: "array", items: { type: "string" }, default: [] },
        cwd: { type: "string", minLength: 1, description: "Working directory relative to the root. Default: the root." },
        env: { type: "object", additionalProperties: { type: "string" }, description: "Merged over the environment." },
        timeout_ms: { type: "integer", minimum: 1, description: "Kill after this long. Default: the step timeout only." },
        input: { type: "string", description: "Written to stdin, which is then closed. Default: empty." },
        allow_failure: { type: "boolean", default: false, description: "A non-zero exit is an output, not an error." },
        max_output_bytes: { type: "integer", minimum: 0, description: "Per stream. Default 8388608." }
      },
      required: ["command"],
      additionalProperties: false
    },
    output_schema: {
      type: "object",
      properties: {
        exit_code: { type: "integer" },
        stdout: { type: "string" },
        stderr: { type: "string" }
      },
      required: ["exit_code", "stdout", "stderr"],
      additionalProperties: false
    },
    capabilities: ["spawn"]
  },
  async (input, ctx) => {
    if (ctx.signal.aborted) throw abortError(ctx.signal, NAME4);
    const cwd = await resolveCwd(input, ctx);
    ctx.effect({ kind: "spawn", target: input.command });
    return run(input, ctx, cwd);
  }
);

// src/tools/builtins/list.ts
function builtinTools() {
  return [coreTemplate, coreTransform, coreAssert, httpRequest, fsRead, fsWrite, shellExec];
}
export {
  builtinTools,
  compile2 as compile,
  compileFlow,
  createToolRegistry,
  digestOf,
  parseFlowSource
};

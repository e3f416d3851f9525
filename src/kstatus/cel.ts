/**
 * CEL as Flux uses it: `spec.healthCheckExprs` (status of custom resources) and
 * `spec.dependsOn[].readyExpr` (readiness of a dependency). Pure: no cluster access.
 *
 * The evaluator is @marcbachmann/cel-js with optional types and homogeneous aggregate literals on, as in
 * Flux's environment (fluxcd/pkg runtime/cel). Flux also loads the cel-go extensions `strings`
 * (built into cel-js), `sets` and `encoders`; the last two are added here. Expressions are parsed, not
 * type-checked, as in Flux: a custom resource may lack any field, so mistakes show at evaluation.
 */
import { Environment, ParseError } from '@marcbachmann/cel-js';
import { clip } from '../util/truncate.js';
import { UserError } from '../util/user-error.js';
import type { StatusResult } from './status.js';

/** One entry of a Kustomization's spec.healthCheckExprs: CEL expressions for one apiVersion (and kind). */
export interface HealthCheckExpr {
  apiVersion: string;
  kind?: string;
  current: string;
  inProgress?: string;
  failed?: string;
}

type Obj = Record<string, unknown>;
type Program = (context: Obj) => unknown;

/** Receivers for `sets.…` and `base64.…`: cel-js has no namespaced functions, so these are constants. */
class SetsExtension {
  readonly name = 'sets';
}
class Base64Extension {
  readonly name = 'base64';
}

const same = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number'))
    return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return false;
};
const containsAll = (list: unknown[], sub: unknown[]) => sub.every((x) => list.some((y) => same(x, y)));

/**
 * The cost bounds of one evaluation. cel-js has parse-time limits but no cost limit such as cel-go's
 * (Flux sets one), and an expression is the tree's: nested comprehensions multiply their ranges and
 * a string or list doubled at each level grows exponentially. So every evaluation step (each node,
 * through the evaluator's `run`) is counted against a budget, and a value past a size bound stops
 * the evaluation at once, before the next doubling.
 */
export const CEL_LIMITS = {
  /** Evaluation steps of one expression: far above a condition scan, far below a second of CPU. */
  steps: 1_000_000,
  /** Characters of a string value, elements of a list or entries of a map made during evaluation. */
  stringLength: 4 << 20,
  collectionSize: 1 << 20,
  /** Characters of an expression, checked before parsing. */
  expressionLength: 16 << 10,
};

/** An expression that passed a cost bound (CEL_LIMITS) while it was evaluated. */
export class CelCostError extends UserError {}

/** The budget of the evaluation under way (evaluation is synchronous, so one at a time). */
const budget = { left: Infinity };

/** Sizes of a value that can grow by concatenation; one that passes a bound throws. */
function checkSize(v: unknown): void {
  if (typeof v === 'string' && v.length > CEL_LIMITS.stringLength) {
    throw new CelCostError(
      `the expression made a string of more than ${CEL_LIMITS.stringLength} characters (cost limit)`,
    );
  }
  const size = Array.isArray(v) || v instanceof Uint8Array ? v.length : v instanceof Map ? v.size : 0;
  if (size > CEL_LIMITS.collectionSize) {
    throw new CelCostError(
      `the expression made a value of more than ${CEL_LIMITS.collectionSize} elements (cost limit)`,
    );
  }
}

type Runner = { run: (ast: unknown, ctx: unknown) => unknown };
const metered = new WeakSet<object>();

/**
 * Counts every step of `ev` (the environment's evaluator, which evaluates each child node through
 * its `run`) against `budget`. Installed on the instance once, at the first evaluation.
 */
function meter(ev: Runner): void {
  if (metered.has(ev)) return;
  metered.add(ev);
  const run = ev.run.bind(ev);
  ev.run = (ast, ctx) => {
    if (--budget.left < 0) {
      throw new CelCostError(
        `the expression took more than ${CEL_LIMITS.steps.toLocaleString('en-US')} evaluation steps (cost limit)`,
      );
    }
    const out = run(ast, ctx);
    checkSize(out);
    return out;
  };
}

let shared: Environment | undefined;

/** The one environment every expression is parsed in (building it registers functions, so it is cached). */
function environment(): Environment {
  shared ??= new Environment({
    unlistedVariablesAreDyn: true,
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: true,
    // Structural bounds at parse time, far above Flux's examples (a few dozen nodes).
    limits: { maxAstNodes: 5000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 },
  })
    .registerType('SetsExtension', { ctor: SetsExtension, fields: {} })
    .registerType('Base64Extension', { ctor: Base64Extension, fields: {} })
    .registerConstant('sets', 'SetsExtension', new SetsExtension())
    .registerConstant('base64', 'Base64Extension', new Base64Extension())
    .registerFunction('SetsExtension.contains(list, list): bool', (_: unknown, a: unknown[], b: unknown[]) =>
      containsAll(a, b),
    )
    .registerFunction(
      'SetsExtension.equivalent(list, list): bool',
      (_: unknown, a: unknown[], b: unknown[]) => containsAll(a, b) && containsAll(b, a),
    )
    .registerFunction('SetsExtension.intersects(list, list): bool', (_: unknown, a: unknown[], b: unknown[]) =>
      a.some((x) => b.some((y) => same(x, y))),
    )
    .registerFunction('Base64Extension.encode(bytes): string', (_: unknown, b: Uint8Array) =>
      Buffer.from(b).toString('base64'),
    )
    .registerFunction('Base64Extension.decode(string): bytes', (_: unknown, s: string) => {
      // cel-go accepts padded and unpadded standard base64 and fails on anything else.
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw new Error(`invalid base64 string ${JSON.stringify(s)}`);
      return new Uint8Array(Buffer.from(s, 'base64'));
    });
  return shared;
}

/** An expression that does not parse; the message points at the column, as cel-go's does. */
export class CelSyntaxError extends UserError {}

/** Parses one expression; throws CelSyntaxError with the parser's message (one line, column included). */
export function compileCel(text: string): Program {
  if (text.length > CEL_LIMITS.expressionLength) {
    throw new CelSyntaxError(`the expression is longer than ${CEL_LIMITS.expressionLength} characters`);
  }
  try {
    const program = environment().parse(text);
    const root = (program as unknown as { ast: { evaluate: (ev: Runner, ast: unknown, ctx: unknown) => unknown } }).ast;
    // The root node is handed the evaluator: meter it before the first step (see meter).
    const first = root.evaluate;
    root.evaluate = function (this: unknown, ev, ast, ctx) {
      meter(ev);
      return first.call(this, ev, ast, ctx);
    };
    return (context) => {
      budget.left = CEL_LIMITS.steps;
      try {
        const out = program(context) as unknown;
        checkSize(out);
        return out;
      } catch (err) {
        if (err instanceof CelCostError) throw new CelCostError(`${err.message}: ${JSON.stringify(clip(text, 160))}`);
        throw err;
      } finally {
        budget.left = Infinity;
      }
    };
  } catch (err) {
    if (err instanceof ParseError) throw new CelSyntaxError(err.message.split('\n')[0] ?? err.message);
    throw err;
  }
}

/** The parse error of `text`, or undefined when it parses. For validating spec files. */
export function celSyntaxProblem(text: string): string | undefined {
  try {
    compileCel(text);
    return undefined;
  } catch (err) {
    if (err instanceof CelSyntaxError) return err.message;
    throw err;
  }
}

/**
 * JSON data as CEL sees it. `int`: whole numbers become CEL ints (bigint), as for Flux's unstructured
 * objects in health checks; `double`: every number stays a double, as for readyExpr's
 * google.protobuf.Struct variables.
 */
export function toCel(value: unknown, numbers: 'int' | 'double'): unknown {
  if (typeof value === 'number') return numbers === 'int' && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map((v) => toCel(v, numbers));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v, numbers)]));
  }
  return value;
}

function evaluateBool(program: Program, context: Obj, what: string): boolean {
  const out = program(context);
  if (typeof out !== 'boolean') throw new Error(`${what} returned ${describe(out)}, not a bool`);
  return out;
}

function describe(v: unknown): string {
  if (typeof v === 'bigint') return `the int ${v}`;
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'number' || typeof v === 'boolean') return `the ${typeof v} ${String(v)}`;
  return typeof v === 'object' ? 'a map' : typeof v;
}

interface CompiledRule {
  group: string;
  kind?: string;
  exprs: { name: 'inProgress' | 'failed' | 'current'; program: Program }[];
}

/** Maps an object to its status with spec.healthCheckExprs; undefined when no entry matches its kind. */
export type CelStatusReader = (obj: Obj) => StatusResult | undefined;

/**
 * Flux's CEL status reader. Entries match by group (the apiVersion's version is ignored); an entry
 * with a kind wins over a whole-group entry. For a match: a whole-number status.observedGeneration that
 * differs from metadata.generation is InProgress; then inProgress, failed and current are tried in
 * that order and the first that is true decides; none true is InProgress. An evaluation error (a
 * missing field, say) gives Unknown, so the wait goes on until the timeout, as in Flux.
 */
export function celStatusReader(entries: readonly HealthCheckExpr[]): CelStatusReader {
  const rules: CompiledRule[] = entries.map((e) => ({
    group: e.apiVersion.includes('/') ? e.apiVersion.slice(0, e.apiVersion.indexOf('/')) : '',
    ...(e.kind !== undefined ? { kind: e.kind } : {}),
    exprs: (['inProgress', 'failed', 'current'] as const).flatMap((name) =>
      e[name] === undefined ? [] : [{ name, program: compileCel(e[name]) }],
    ),
  }));
  return (obj) => {
    const apiVersion = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const kind = obj['kind'];
    const rule =
      rules.find((r) => r.group === group && r.kind === kind) ??
      rules.find((r) => r.group === group && r.kind === undefined);
    if (!rule) return undefined;
    const metadata = (obj['metadata'] ?? {}) as Obj;
    const status = obj['status'];
    const observed = typeof status === 'object' && status !== null ? (status as Obj)['observedGeneration'] : undefined;
    if (typeof observed === 'number' && Number.isInteger(observed) && observed !== metadata['generation']) {
      return { status: 'InProgress', message: `generation ${String(metadata['generation'])} not yet observed` };
    }
    const context = toCel(obj, 'int') as Obj;
    try {
      for (const { name, program } of rule.exprs) {
        if (evaluateBool(program, context, `healthCheckExprs ${name}`)) {
          const status = name === 'inProgress' ? 'InProgress' : name === 'failed' ? 'Failed' : 'Current';
          return { status, message: `healthCheckExprs: ${name} is true` };
        }
      }
      return { status: 'InProgress', message: 'healthCheckExprs: no expression is true yet' };
    } catch (err) {
      // A cost limit is the expression's fault, not the object's: it fails now instead of at the timeout.
      if (err instanceof CelCostError) return { status: 'Failed', message: `healthCheckExprs: ${err.message}` };
      return { status: 'Unknown', message: `healthCheckExprs: ${(err as Error).message.split('\n')[0]}` };
    }
  };
}

/**
 * Flux's readyExpr: `self` is the dependent Kustomization and `dep` the dependency, both as maps
 * whose numbers are doubles (google.protobuf.Struct). Throws when the expression does not give a bool.
 */
export function evalReadyExpr(expr: string, self: Obj, dep: Obj): boolean {
  return evaluateBool(compileCel(expr), { self: toCel(self, 'double'), dep: toCel(dep, 'double') }, 'readyExpr');
}

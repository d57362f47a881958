import type { QueryPlan, PlanNode } from '@apollo/query-planner';
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { RequestContext } from '../../subgraphs/kernel/index.js';

/**
 * The local plan: a query whose plan is fetches only (`Fetch`, `Flatten`, `Sequence`, `Parallel`: the page from its
 * subgraph, then `author` or `community` from another one's `_entities`), run in the gateway's process without the
 * gateway's plan execution and its second pass over the merged result (`computeResponse`), which cost more than the
 * subgraphs' own execution. The subgraphs are in process (`LocalSubgraphSource`) or, in distributed mode, over HTTP
 * (`InternalRemoteSource`).
 *
 * The fetches run as the gateway runs them (same fetch documents, variables, representations and merge; in process,
 * compiled with graphql-jit once a fetch document comes back, see `LocalSubgraphSource.fetchFast`; over HTTP, the
 * same request the gateway sends, see `InternalRemoteSource.fetchFast`), and the
 * result is shaped by a function compiled once per document from its selections. Anything outside the simple case
 * is not compiled and stays with the gateway: directives, abstract types, type conditions other than the parent's
 * own type, a response name selected twice, introspection, plan nodes other than the four above, rewrites, `@defer`,
 * `@requires`. At run time, any fetch error, a null where the API schema says non-null, or a leaf value the gateway
 * would call invalid makes the caller run the request again through the gateway, so errors, partial results and
 * null propagation stay exactly the gateway's.
 */
export type LocalPlan = (context: RequestContext | Record<string, unknown>, variables: Record<string, unknown>) => Promise<Record<string, unknown> | undefined>;

/**
 * A subgraph a local plan fetches from: the data of a fetch document, or undefined when its answer had any error
 * (or did not come), and the gateway answers instead.
 */
export interface PlanSource {
  fetchFast(query: string, operationName: string | undefined, variables: Record<string, unknown>, context: unknown): Promise<Record<string, unknown> | undefined>;
}

/** Returned by the shaper when the gateway must answer instead (an error or a null to propagate). */
const GATEWAY = Symbol('gateway');

type Data = Record<string, unknown>;
type Shape = (input: unknown) => unknown;

/** Compiles the local plan for one operation, or answers undefined when the gateway must run it. */
export function compileLocalPlan(
  plan: QueryPlan,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  apiSchema: GraphQLSchema,
  sources: ReadonlyMap<string, PlanSource>,
): LocalPlan | undefined {
  const node = plan.node;
  if (operation.operation !== 'query' || !node || node.kind === 'Subscription' || !isLocalNode(node, sources, apiSchema)) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const root = apiSchema.getQueryType();
  if (!root) return undefined;
  const shape = compileObject(root, operation.selectionSet, fragments);
  if (!shape) return undefined;
  return async (context, variables) => {
    const data: Data = Object.create(null);
    try {
      if (!(await runNode(node, [data], { context, variables, sources }))) return undefined;
    } catch {
      return undefined; // a result of a shape the plan did not expect: the gateway answers, with its own error
    }
    const shaped = shape(data);
    return shaped === GATEWAY ? undefined : (shaped as Record<string, unknown>);
  };
}

interface RunContext {
  context: RequestContext | Record<string, unknown>;
  variables: Record<string, unknown>;
  sources: ReadonlyMap<string, PlanSource>;
}

/** Whether a plan node is one the local plan runs: only fetches from its sources, with no rewrites. */
function isLocalNode(node: PlanNode, sources: ReadonlyMap<string, PlanSource>, schema: GraphQLSchema): boolean {
  switch (node.kind) {
    case 'Sequence':
    case 'Parallel':
      return node.nodes.every((n) => isLocalNode(n, sources, schema));
    case 'Flatten':
      return node.path.every((p) => typeof p === 'string' && !p.includes(' ') && !p.includes('|')) && node.node.kind === 'Fetch' && isLocalNode(node.node, sources, schema);
    case 'Fetch':
      return (
        sources.has(node.serviceName) &&
        !node.inputRewrites?.length &&
        !node.outputRewrites?.length &&
        !node.contextRewrites?.length &&
        !node.hasDefers &&
        (!node.requires || isSimpleRequires(node.requires, schema))
      );
    default:
      return false;
  }
}

/** `... on T { __typename id ... }` with T an object type of the API schema and leaf fields only. */
function isSimpleRequires(requires: NonNullable<Extract<PlanNode, { kind: 'Fetch' }>['requires']>, schema: GraphQLSchema): boolean {
  return requires.every(
    (s) =>
      s.kind === Kind.INLINE_FRAGMENT &&
      !!s.typeCondition &&
      isObjectType(schema.getType(s.typeCondition)) &&
      s.selections.every((f) => f.kind === Kind.FIELD && !f.selections && !f.alias),
  );
}

/** Runs a plan node on the objects at the current path; false when a fetch failed (the gateway answers then). */
async function runNode(node: PlanNode, at: unknown[], run: RunContext): Promise<boolean> {
  switch (node.kind) {
    case 'Sequence':
      for (const child of node.nodes) if (!(await runNode(child, at, run))) return false;
      return true;
    case 'Parallel':
      return (await Promise.all(node.nodes.map((child) => runNode(child, at, run)))).every(Boolean);
    case 'Flatten':
      return runNode(node.node, flatten(at, node.path as string[]), run);
    case 'Fetch':
      return fetch(node, at, run);
    default:
      return false;
  }
}

/** The values at `path` under each of `values` (`@` steps into a list), as the gateway's `flattenResultsAtPath`. */
function flatten(values: unknown[], path: readonly string[]): unknown[] {
  let current = values;
  for (const step of path) {
    const next: unknown[] = [];
    for (const value of current) {
      if (value === null || value === undefined) continue;
      if (step === '@') next.push(...(value as unknown[]));
      else next.push((value as Data)[step]);
    }
    current = next;
  }
  return current;
}

async function fetch(node: Extract<PlanNode, { kind: 'Fetch' }>, at: unknown[], run: RunContext): Promise<boolean> {
  const entities = at.filter((e): e is Data => e !== null && e !== undefined);
  if (!entities.length) return true;
  const variables: Data = Object.create(null);
  for (const name of node.variableUsages ?? []) {
    if (Object.hasOwn(run.variables, name) && run.variables[name] !== undefined) variables[name] = run.variables[name];
  }
  const source = run.sources.get(node.serviceName)!;
  const send = (vars: Data) => source.fetchFast(node.operation, node.operationName, vars, run.context);
  if (!node.requires) {
    const received = await send(variables);
    if (received === undefined) return false;
    for (const entity of entities) deepMerge(entity, received);
    return true;
  }
  const representations: Data[] = [];
  const targets: Data[] = [];
  for (const entity of entities) {
    const representation = represent(entity, node.requires);
    if (representation === GATEWAY) return false;
    if (representation) {
      representations.push(representation);
      targets.push(entity);
    }
  }
  if (!representations.length) return true;
  const received = await send({ ...variables, representations });
  const list = received?._entities;
  if (!Array.isArray(list) || list.length !== representations.length) return false;
  for (let i = 0; i < list.length; i += 1) {
    const entity = list[i] as Data | null;
    if (entity && !entity.__typename) entity.__typename = targets[i]!.__typename;
    deepMerge(targets[i]!, entity);
  }
  return true;
}

/**
 * An entity's representation from its `requires` selection (`... on T { __typename id }`), or null (the gateway
 * skips the entity too). A key that is not a string (fetched unserialized: an ID the serializer would have made a
 * string, or a key of another type) is the gateway's to send.
 */
function represent(entity: Data, requires: NonNullable<Extract<PlanNode, { kind: 'Fetch' }>['requires']>): Data | null | typeof GATEWAY {
  const representation: Data = Object.create(null);
  for (const fragment of requires) {
    if (fragment.kind !== Kind.INLINE_FRAGMENT || entity.__typename !== fragment.typeCondition) continue;
    for (const field of fragment.selections) {
      if (field.kind !== Kind.FIELD) continue;
      const value = entity[field.name];
      if (value === undefined) return null;
      if (typeof value !== 'string') return GATEWAY;
      representation[field.name] = value;
    }
  }
  return representation.__typename ? representation : null;
}

/** The gateway's `deepMerge`: objects merged key by key, lists of equal length element by element. */
function deepMerge(target: Data, source: Data | null | undefined): void {
  if (!source) return;
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (value === undefined) continue;
    const existing = target[key];
    if (existing && isPlainObject(value)) {
      deepMerge(existing as Data, value);
    } else if (Array.isArray(value) && Array.isArray(existing) && value.length === existing.length) {
      for (let i = 0; i < value.length; i += 1) {
        if (isPlainObject(existing[i]) && isPlainObject(value[i])) deepMerge(existing[i] as Data, value[i] as Data);
        else existing[i] = value[i];
      }
    } else {
      target[key] = value;
    }
  }
}

const isPlainObject = (v: unknown): v is Data => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---- result shaping, compiled per document -------------------------------------------------------------------

/** The fields a selection set selects on an object type, in order, or undefined when the gateway must shape it. */
function collect(
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  out: Array<{ key: string; name: string; selectionSet?: SelectionSetNode }> = [],
): typeof out | undefined {
  for (const selection of selectionSet.selections) {
    if (selection.directives?.length) return undefined;
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      if (out.some((f) => f.key === key)) return undefined;
      out.push({ key, name: selection.name.value, selectionSet: selection.selectionSet });
      continue;
    }
    const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
    if (!fragment || fragment.directives?.length) return undefined;
    if (fragment.typeCondition && fragment.typeCondition.name.value !== type.name) return undefined;
    if (!collect(type, fragment.selectionSet, fragments, out)) return undefined;
  }
  return out;
}

function compileObject(type: GraphQLObjectType, selectionSet: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): Shape | undefined {
  const fields = collect(type, selectionSet, fragments);
  if (!fields) return undefined;
  const compiled: Array<{ key: string; typename?: string; shape?: Shape }> = [];
  for (const field of fields) {
    if (field.name === '__typename') {
      compiled.push({ key: field.key, typename: type.name });
      continue;
    }
    if (field.name.startsWith('__')) return undefined; // introspection: the gateway answers it
    if (field.key in Object.prototype) return undefined; // `__proto__`, `constructor`...: the gateway shapes them
    const definition = type.getFields()[field.name];
    if (!definition) return undefined;
    const shape = compileValue(definition.type, field.selectionSet, fragments);
    if (!shape) return undefined;
    compiled.push({ key: field.key, shape });
  }
  return objectShaper(compiled);
}

/**
 * The shaper of one selection on an object type, written once as code (as `flatRows` in db/src/prepared.ts writes
 * a row's): each field read and checked at a site of its own, the result one object literal with the selection's
 * keys in order. A loop of `output[key] = value` over the fields was one site for every type and key (V8's
 * megamorphic lookups at each field, and the object grown key by key). The keys are response names of a parsed
 * document (GraphQL names), none of Object.prototype's (`compileObject` leaves those to the gateway), and are written
 * as JSON string literals.
 *
 * Plain objects: every object of a type gets its keys in one order, so they share one hidden class, and
 * JSON.stringify walks them on its fast path; a null-prototype object is a dictionary to V8.
 */
function objectShaper(compiled: ReadonlyArray<{ key: string; typename?: string; shape?: Shape }>): Shape {
  const reads: string[] = [];
  const properties: string[] = [];
  const shapes: Shape[] = [];
  compiled.forEach(({ key, typename, shape }, i) => {
    const name = JSON.stringify(key);
    if (typename !== undefined) {
      properties.push(`${name}: ${JSON.stringify(typename)}`);
      return;
    }
    reads.push(`const v${i} = s${shapes.length}(source[${name}] ?? null);\n  if (v${i} === GATEWAY) return GATEWAY;`);
    properties.push(`${name}: v${i}`);
    shapes.push(shape!);
  });
  const code = `return function shape(source) {\n  ${reads.join('\n  ')}\n  return { ${properties.join(', ')} };\n};`;
  return new Function('GATEWAY', ...shapes.map((_, i) => `s${i}`), code)(GATEWAY, ...shapes) as Shape;
}

function compileValue(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, fragments: ReadonlyMap<string, FragmentDefinitionNode>): Shape | undefined {
  if (isNonNullType(type)) {
    const inner = compileValue(type.ofType, selectionSet, fragments);
    if (!inner) return undefined;
    return (input) => {
      const value = inner(input);
      return value === null ? GATEWAY : value;
    };
  }
  if (isListType(type)) {
    const element = compileValue(type.ofType, selectionSet, fragments);
    if (!element) return undefined;
    return (input) => {
      if (input === null) return null;
      if (!Array.isArray(input)) return GATEWAY;
      const output = new Array(input.length);
      for (let i = 0; i < input.length; i += 1) {
        const value = element(input[i] ?? null);
        if (value === GATEWAY) return GATEWAY;
        output[i] = value;
      }
      return output;
    };
  }
  const named = getNamedType(type);
  if (isLeafType(named)) {
    if (selectionSet) return undefined;
    const valid = leafCheck(getNullableType(type));
    return (input) => (input === null ? null : valid(input) ? input : GATEWAY);
  }
  if (!isObjectType(named) || !selectionSet) return undefined; // interfaces and unions: the gateway shapes them
  const object = compileObject(named, selectionSet, fragments);
  if (!object) return undefined;
  return (input) => {
    if (input === null) return null;
    if (typeof input !== 'object' || Array.isArray(input)) return GATEWAY;
    const typename = (input as Data).__typename;
    if (typename !== undefined && typename !== named.name) return GATEWAY;
    return object(input);
  };
}

/**
 * A leaf value the local plan answers as it is: one the subgraph's serializer would answer unchanged (the fetches
 * leave built-in scalars and enums unserialized, see `LocalSubgraphSource.fetchFast`) and the gateway's
 * `isValidLeafValue` accepts for the API schema's type. Anything else (a number for a String or an ID, a boolean
 * for an Int, an Int out of 32 bits, a name the API schema's enum lacks) goes to the gateway, which runs the
 * subgraph's serializers and answers their value or their error.
 */
function leafCheck(type: GraphQLOutputType): (value: unknown) => boolean {
  if (isEnumType(type)) return (v) => typeof v === 'string' && type.getValue(v) !== undefined;
  switch (getNamedType(type).name) {
    case 'Boolean':
      return (v) => typeof v === 'boolean';
    case 'Int':
      return (v) => Number.isInteger(v) && (v as number) >= INT_MIN && (v as number) <= INT_MAX;
    case 'Float':
      return (v) => typeof v === 'number' && Number.isFinite(v);
    case 'ID':
    case 'String':
      return (v) => typeof v === 'string';
    default:
      return () => true; // custom scalars: serialized by the subgraph
  }
}

/** GraphQL's Int: 32 bits, signed. */
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

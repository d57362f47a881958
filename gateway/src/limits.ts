import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLFormattedError,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';

/**
 * Limits on one GraphQL operation, refused before execution with `extensions.code` `QUERY_TOO_COMPLEX`.
 * The numbers are documented in the README ("GraphQL limits"); `test/graphql-limits.test.ts` shows every
 * document the REST facade runs, and a realistic web-app feed query, well under each of them.
 */
export const QUERY_LIMITS = Object.freeze({
  /** Nested field levels; a root field is level 1. Fragments add no level of their own. */
  depth: 10,
  /** Aliased fields, counted once per place a fragment is spread. */
  aliases: 30,
  /** Fields at the root of the operation (each one is a separate resolver call, often a separate subgraph fetch). */
  rootFields: 15,
  /** Estimated cost (see `measureOperation`). */
  cost: 10_000,
  /** Lexical tokens of the whole document; the parser stops at the first one beyond. */
  tokens: 2000,
});

/** The limits one deployment applies (the constants above, or smaller ones in a test). */
export type QueryLimits = Readonly<typeof QUERY_LIMITS>;

/** Items a list field is assumed to return when no page size says otherwise. */
export const ASSUMED_LIST_SIZE = 10;
/** Items a page is assumed to hold when its size is a variable or left out: the largest page any field serves. */
export const ASSUMED_PAGE_SIZE = 100;
/** Arguments that set a page size; a literal one counts as that many items (at most `ASSUMED_PAGE_SIZE`). */
const PAGE_SIZE_ARGS = new Set(['first', 'last', 'limit', 'perPage', 'per_page', 'pageSize']);
/**
 * Fields that cost the database far more than their selection says, with what they add to the estimate (`Type.field`).
 * `Query.search` ranks every post and comment matching its words: from a few milliseconds for a rare word up to its
 * statement timeout (`SEARCH_TIMEOUT_MS`, 2 s) for a common one, where a page of 20 posts with their authors (about
 * 200 points) takes a few milliseconds. At 1,000 a document holds at most 9 searches (`cost` limit), and a search
 * takes a fifth of an anonymous client's GraphQL budget (README, "GraphQL limits").
 */
export const FIELD_WEIGHTS: Readonly<Record<string, number>> = Object.freeze({ 'Query.search': 1000 });
/** Introspection fields are left out: they are refused in production, and bounded by the token limit. */
const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/** What the limits measure of one operation. */
export interface OperationMeasure {
  depth: number;
  aliases: number;
  rootFields: number;
  cost: number;
}

/** The error code of every refusal by these limits. */
export const QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX';

interface Tally {
  depth: number;
  aliases: number;
  /** Fields directly in this selection set (through fragments). */
  fields: number;
  cost: number;
}

const ZERO: Tally = { depth: 0, aliases: 0, fields: 0, cost: 0 };
const add = (a: Tally, b: Tally): Tally => ({
  depth: Math.max(a.depth, b.depth),
  aliases: a.aliases + b.aliases,
  fields: a.fields + b.fields,
  cost: a.cost + b.cost,
});

/** The page size a field asks for, when it takes one: a literal (at most `ASSUMED_PAGE_SIZE`), else that maximum. */
function pageSizeOf(node: FieldNode, definition: GraphQLField<unknown, unknown>): number | undefined {
  const name = definition.args.find((a) => PAGE_SIZE_ARGS.has(a.name))?.name;
  if (!name) return undefined;
  const value = node.arguments?.find((a) => a.name.value === name)?.value;
  return value?.kind === Kind.INT ? Math.min(Math.max(Number(value.value), 0), ASSUMED_PAGE_SIZE) : ASSUMED_PAGE_SIZE;
}

/**
 * Measures one operation of a document without executing it. Cost: every field counts 1; a list field counts
 * 1 plus its selection's cost times the items it may return: the page size of the field that owns the page
 * (`posts(perPage: 20) { items { ... } }` counts `items` 20 times), else `ASSUMED_LIST_SIZE`; a field of
 * `FIELD_WEIGHTS` adds its weight (`search` 1,000). Fragments are
 * expanded where they are spread (each fragment measured once per page size, so nested spreads stay linear);
 * a fragment that spreads itself counts nothing (graphql-js refuses it anyway).
 */
export function measureOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragment: (name: string) => FragmentDefinitionNode | undefined,
): OperationMeasure {
  const memo = new Map<string, Tally>();
  const open = new Set<string>();

  const selections = (set: SelectionSetNode, parent: GraphQLNamedType | undefined, pageSize: number | undefined): Tally => {
    let tally = ZERO;
    for (const node of set.selections) {
      if (node.kind === Kind.FIELD) tally = add(tally, field(node, parent, pageSize));
      else if (node.kind === Kind.INLINE_FRAGMENT) {
        const type = node.typeCondition ? schema.getType(node.typeCondition.name.value) : parent;
        tally = add(tally, selections(node.selectionSet, type ?? undefined, pageSize));
      } else tally = add(tally, spread(node.name.value, pageSize));
    }
    return tally;
  };

  const spread = (name: string, pageSize: number | undefined): Tally => {
    const key = `${name}/${pageSize ?? ''}`;
    const known = memo.get(key);
    if (known) return known;
    const definition = fragment(name);
    if (!definition || open.has(name)) return ZERO;
    open.add(name);
    const tally = selections(definition.selectionSet, schema.getType(definition.typeCondition.name.value) ?? undefined, pageSize);
    open.delete(name);
    memo.set(key, tally);
    return tally;
  };

  const field = (node: FieldNode, parent: GraphQLNamedType | undefined, pageSize: number | undefined): Tally => {
    if (INTROSPECTION_FIELDS.has(node.name.value)) return ZERO;
    const weight = parent ? (FIELD_WEIGHTS[`${parent.name}.${node.name.value}`] ?? 0) : 0;
    const own = { depth: 1, aliases: node.alias ? 1 : 0, fields: 1, cost: 1 + weight };
    if (!node.selectionSet) return own;
    const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[node.name.value] : undefined;
    const isList = definition ? isListType(getNullableType(definition.type)) : false;
    // A list takes its size from its own page argument or its page's owner; any other field hands its own down.
    const size = definition ? pageSizeOf(node, definition) : undefined;
    const items = isList ? (size ?? pageSize ?? ASSUMED_LIST_SIZE) : 1;
    const inner = selections(node.selectionSet, definition ? getNamedType(definition.type) : undefined, isList ? undefined : size);
    return { depth: 1 + inner.depth, aliases: own.aliases + inner.aliases, fields: 1, cost: own.cost + items * inner.cost };
  };

  const root = selections(operation.selectionSet, schema.getRootType(operation.operation) ?? undefined, undefined);
  return { depth: root.depth, aliases: root.aliases, rootFields: root.fields, cost: root.cost };
}

/** Measures every operation of a parsed document (used by tests and the REST facade's document check). */
export function measureDocument(schema: GraphQLSchema, document: DocumentNode): Array<{ name: string | undefined } & OperationMeasure> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  return document.definitions
    .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    .map((op) => ({ name: op.name?.value, ...measureOperation(schema, op, (n) => fragments.get(n)) }));
}

/** The refusals an operation's measure earns, one message per limit exceeded. */
export function limitViolations(m: OperationMeasure, limits: QueryLimits = QUERY_LIMITS): string[] {
  const out: string[] = [];
  if (m.depth > limits.depth) out.push(`Query depth ${m.depth} exceeds the limit of ${limits.depth}.`);
  if (m.aliases > limits.aliases) out.push(`Query has ${m.aliases} aliases; the limit is ${limits.aliases}.`);
  if (m.rootFields > limits.rootFields) out.push(`Query has ${m.rootFields} root fields; the limit is ${limits.rootFields}.`);
  if (m.cost > limits.cost) out.push(`Query cost ${m.cost} exceeds the limit of ${limits.cost}.`);
  return out;
}

/** A refusal by the limits; Apollo wraps validation errors, `keepLimitCode` puts this code back. */
class QueryTooComplexError extends GraphQLError {
  constructor(message: string) {
    super(message, { extensions: { code: QUERY_TOO_COMPLEX, status: 400 } });
  }
}

/**
 * A graphql-js validation rule enforcing the limits on each operation. Apollo Server caches a document once it
 * has passed validation (by the hash of its text), so the rule runs once per distinct document, not per request.
 */
export function queryLimitsRule(limits: QueryLimits = QUERY_LIMITS): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const measure = measureOperation(context.getSchema(), operation, (name) => context.getFragment(name) ?? undefined);
      for (const message of limitViolations(measure, limits)) context.reportError(new QueryTooComplexError(message));
    },
  });
}

// graphql 16's wording, misspelling included ("more that 2000 tokens").
const TOKEN_LIMIT_MESSAGE = /^Syntax Error: Document contains more th(?:an|at) (\d+) tokens\./;

/**
 * For the gateway's `formatError`: Apollo answers every validation error with `GRAPHQL_VALIDATION_FAILED` and
 * the parser's token limit with `GRAPHQL_PARSE_FAILED`; both refusals by the limits get `QUERY_TOO_COMPLEX` back.
 */
export function keepLimitCode(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = error instanceof GraphQLError ? error.originalError : undefined;
  if (original instanceof QueryTooComplexError) {
    return { ...formatted, extensions: { ...formatted.extensions, code: QUERY_TOO_COMPLEX } };
  }
  const tokens = TOKEN_LIMIT_MESSAGE.exec(formatted.message);
  if (tokens && formatted.extensions?.code === 'GRAPHQL_PARSE_FAILED') {
    return {
      message: `Query has more than ${tokens[1]} tokens, the limit.`,
      extensions: { ...formatted.extensions, code: QUERY_TOO_COMPLEX, status: 400 },
    };
  }
  return formatted;
}

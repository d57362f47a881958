import type { ApolloServerPlugin, BaseContext, GraphQLRequestListener } from '@apollo/server';
import { BREAK, GraphQLError, Kind, visit, type DocumentNode, type ValueNode } from 'graphql';
import { describeTextProblem, fieldOf, findBadText, textProblem, type TextFinding } from '../../subgraphs/kernel/index.js';

/** A refused string literal of a document, named from its argument (or variable default) down. */
type Named = TextFinding;

/** The first string literal of a value node that breaks the input rule, with its path below `at`. */
function inValue(node: ValueNode, at: Array<string | number>): Named | null {
  const stack: Array<{ node: ValueNode; path: Array<string | number> }> = [{ node, path: at }];
  while (stack.length) {
    const { node: n, path } = stack.pop()!;
    if (n.kind === Kind.STRING) {
      const problem = textProblem(n.value);
      if (problem) return { path, problem };
    } else if (n.kind === Kind.LIST) {
      for (let i = n.values.length - 1; i >= 0; i -= 1) stack.push({ node: n.values[i], path: [...path, i] });
    } else if (n.kind === Kind.OBJECT) {
      for (let i = n.fields.length - 1; i >= 0; i -= 1) stack.push({ node: n.fields[i].value, path: [...path, n.fields[i].name.value] });
    }
  }
  return null;
}

/**
 * The first string literal in an operation document that breaks the input rule: in field and directive arguments
 * and in variable defaults. graphql-js accepts escapes such as `"\u0000"` in literals, so the parser alone does
 * not keep them out.
 */
export function badLiteral(document: DocumentNode): Named | null {
  let found: Named | null = null;
  visit(document, {
    Argument(node) {
      found = inValue(node.value, [node.name.value]);
      return found ? BREAK : false; // the argument's value is walked above; no need to visit it again
    },
    VariableDefinition(node) {
      found = node.defaultValue ? inValue(node.defaultValue, [node.variable.name.value]) : null;
      return found ? BREAK : undefined;
    },
  });
  return found;
}

function refusal(finding: Named): GraphQLError {
  const field = fieldOf(finding);
  return new GraphQLError(`${field}: ${describeTextProblem(finding.problem)}`, {
    extensions: { code: 'BAD_USER_INPUT', reason: 'invalid_text', field, http: { status: 400 } },
  });
}

/**
 * The input rule (`subgraphs/kernel/text.ts`) for GraphQL: an operation whose variables or string literals hold a
 * control character (other than tab, LF, CR) or a lone surrogate is refused before execution with HTTP 400 and
 * `extensions: { code: "BAD_USER_INPUT", reason: "invalid_text", field: "input.content" }`. Literals are checked
 * once per parsed document (Apollo caches documents, so a repeated operation costs one WeakMap lookup); variables
 * are walked on every request, in time linear in their size.
 */
export function inputRulePlugin<T extends BaseContext>(): ApolloServerPlugin<T> {
  const literals = new WeakMap<DocumentNode, Named | null>();
  const listener: GraphQLRequestListener<T> = {
    async didResolveOperation({ document, request }) {
      let literal = literals.get(document);
      if (literal === undefined) {
        literal = badLiteral(document);
        literals.set(document, literal);
      }
      if (literal) throw refusal(literal);
      const variable = request.variables ? findBadText(request.variables) : null;
      if (variable) throw refusal(variable);
    },
  };
  return { requestDidStart: async () => listener };
}

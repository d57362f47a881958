// GET /graphql in a browser: GraphiQL (its UMD bundle and React's, loaded just before this file) on this origin's
// /graphql, sending the session cookie (credentials 'same-origin'), so queries run as the signed-in user.

type Fetcher = unknown;
interface GraphiQLGlobal {
  createFetcher(options: { url: string; fetch?: typeof fetch; headers?: Record<string, string> }): Fetcher;
}
interface ReactGlobal {
  createElement(type: unknown, props: Record<string, unknown> | null): unknown;
}
interface ReactDOMGlobal {
  createRoot(element: Element): { render(node: unknown): void };
}

const globals = window as unknown as { GraphiQL?: GraphiQLGlobal; React?: ReactGlobal; ReactDOM?: ReactDOMGlobal };
const root = document.getElementById('graphiql');
const { GraphiQL, React, ReactDOM } = globals;
if (root && GraphiQL && React && ReactDOM) {
  const endpoint = root.dataset.endpoint ?? '/graphql';
  const fetcher = GraphiQL.createFetcher({
    url: endpoint,
    fetch: (input, init) => fetch(input, { ...init, credentials: 'same-origin' }),
  });
  ReactDOM.createRoot(root).render(
    React.createElement(GraphiQL, {
      fetcher,
      defaultEditorToolsVisibility: true,
      defaultQuery: '# Queries run as the signed-in user of this site (its session cookie); without one, as a visitor.\n{\n  me {\n    id\n    username\n  }\n}\n',
    }),
  );
}

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
/**
 * GraphiQL's own markup misses a few accessibility rules that axe checks; patched as the editors appear:
 * CodeMirror's hidden input textareas get a label, its scroll areas can take focus, and the tab strip (one
 * "tab" holding its own close button, a nested control) becomes a plain group of buttons.
 */
function patchAccessibility(container: HTMLElement) {
  const label = (editor: Element) => {
    if (editor.closest('.graphiql-query-editor')) return 'Query editor';
    if (editor.closest('.graphiql-response')) return 'Response';
    if (editor.closest('.graphiql-editor-tool')) return 'Variables or headers editor';
    return 'Editor';
  };
  const patch = () => {
    container.querySelectorAll('.CodeMirror').forEach((editor) => {
      const input = editor.querySelector('textarea');
      if (input && !input.hasAttribute('aria-label')) input.setAttribute('aria-label', label(editor));
      const scroll = editor.querySelector('.CodeMirror-scroll');
      if (scroll && scroll.getAttribute('tabindex') !== '0') scroll.setAttribute('tabindex', '0'); // CodeMirror sets -1
    });
    // The tab strip as the plain list of buttons it is.
    container.querySelectorAll('[role="tablist"]').forEach((list) => list.removeAttribute('role'));
    container.querySelectorAll('.graphiql-tab').forEach((tab) => {
      for (const name of ['role', 'aria-selected', 'aria-controls']) if (tab.hasAttribute(name)) tab.removeAttribute(name);
    });
  };
  patch();
  new MutationObserver(patch).observe(container, { childList: true, subtree: true, attributes: true, attributeFilter: ['role', 'aria-selected', 'tabindex'] });
}

if (root && GraphiQL && React && ReactDOM) {
  patchAccessibility(root);
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

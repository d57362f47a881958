// /docs: the API reference. Scalar's standalone bundle (loaded just before this file) renders the service's own
// /openapi.json; "Test Request" calls this origin with the key the reader pastes in its Authentication box.
// Nothing leaves the origin: no proxy, no fonts, no telemetry, no AI agent, no MCP; the page's CSP allows only 'self'.

interface ScalarGlobal {
  createApiReference(target: string | Element, configuration: Record<string, unknown>): unknown;
}

const target = document.getElementById('reference');
const scalar = (window as unknown as { Scalar?: ScalarGlobal }).Scalar;
if (target && scalar) {
  scalar.createApiReference(target, {
    url: target.dataset.spec ?? '/openapi.json',
    // "Try it" calls the service that served this page, whatever host it is reached at.
    servers: [{ url: window.location.origin, description: 'This service' }],
    authentication: { preferredSecurityScheme: 'ApiKey' },
    persistAuth: false,
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    hideDarkModeToggle: false,
    documentDownloadType: 'json',
    defaultOpenAllTags: false,
  });
}

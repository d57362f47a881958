// /docs: the API reference. Scalar's standalone bundle (loaded right after this file) renders the service's own
// /openapi.json (Platform API), /openapi/resource.json (resource API) and /openapi/application.json (Application API), one picked at a time; "Test Request" calls
// this origin with the key (or access token) the reader pastes in its Authentication box.
// Nothing leaves the origin: no proxy, no fonts, no telemetry, no AI agent, no MCP; the page's CSP allows only 'self'.

interface ScalarGlobal {
  createApiReference(target: string | Element, configuration: Record<string, unknown> | Array<Record<string, unknown>>): unknown;
}

// Zod inside Scalar probes for eval (`Function('')`) unless told to run jitless; under our CSP (no 'unsafe-eval') the
// probe is refused and reported as a violation. Zod reads this global when it loads, so this file runs first.
const global = globalThis as unknown as { __zod_globalConfig?: Record<string, unknown> };
global.__zod_globalConfig = { ...global.__zod_globalConfig, jitless: true };

/** Colours of the light theme darkened to WCAG AA contrast on white (axe: color-contrast). */
const CUSTOM_CSS = `
.light-mode {
  --scalar-color-1: #1b1f2e !important;
  --scalar-color-2: #4a4f5c !important;
  --scalar-color-3: #565b68 !important;
  --scalar-color-green: #0b6b3a !important;
  --scalar-color-blue: #0b4fb8 !important;
  --scalar-color-orange: #9a4a00 !important;
  --scalar-color-yellow: #735600 !important;
  --scalar-color-red: #b01f17 !important;
  --scalar-color-purple: #6a3a9c !important;
  --scalar-color-accent: #0b4fb8 !important;
}`;

/**
 * Scalar's copy buttons on code examples (`button.scalar-code-copy`) have their only label inside an aria-hidden
 * element, so a screen reader hears a nameless button (axe: button-name, critical). Name them.
 */
function nameCopyButtons(container: Element) {
  const patch = () => {
    container.querySelectorAll('button.scalar-code-copy:not([aria-label])').forEach((button) => button.setAttribute('aria-label', 'Copy code'));
  };
  patch();
  new MutationObserver(patch).observe(container, { childList: true, subtree: true });
}

function mount() {
  const target = document.getElementById('reference');
  const scalar = (window as unknown as { Scalar?: ScalarGlobal }).Scalar;
  if (!target || !scalar) return;
  nameCopyButtons(document.body);
  // Shared by both documents; each document then gets its own title, slug, URL and preferred security scheme
  // (an array of configurations: Scalar shows a document picker, one reference per document).
  const shared = {
    // "Try it" calls the service that served this page, whatever host it is reached at.
    servers: [{ url: window.location.origin, description: 'This service' }],
    persistAuth: false,
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    // One theme, checked for contrast by the browser test.
    forceDarkModeState: 'light',
    hideDarkModeToggle: true,
    showDeveloperTools: 'never', // Scalar's own toolbar (configure, share, deploy to its cloud)
    customCss: CUSTOM_CSS,
    documentDownloadType: 'json',
    defaultOpenAllTags: false,
  };
  scalar.createApiReference(target, [
    {
      ...shared,
      title: 'Platform API',
      slug: 'platform-api',
      url: target.dataset.openapiUrl ?? '/openapi.json',
      authentication: { preferredSecurityScheme: 'ApiKey' },
      default: true,
    },
    {
      ...shared,
      title: 'Resource API',
      slug: 'resource-api',
      url: target.dataset.resourceOpenapiUrl ?? '/openapi/resource.json',
      authentication: { preferredSecurityScheme: 'BearerAuth' },
    },
    {
      ...shared,
      title: 'Application API',
      slug: 'application-api',
      url: target.dataset.applicationOpenapiUrl ?? '/openapi/application.json',
      authentication: { preferredSecurityScheme: 'SessionCookie' },
    },
  ]);
}

// Deferred scripts run in order (document.readyState 'interactive'), then DOMContentLoaded fires: by then Scalar's
// bundle, deferred after this file, has run.
if (document.readyState === 'complete') mount();
else document.addEventListener('DOMContentLoaded', mount);

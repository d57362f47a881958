// The creator console's script (issue 16), bundled by scripts/build-console.ts, served at /console/assets/console.js.
// It calls only the public routes: /auth/* and the control plane /communities/:handle/{api-keys,webhooks}.
// Untrusted text goes into the page through textContent only; no inline script, no eval (the page's CSP forbids both).

interface ApiKey {
  id: string;
  name: string;
  keyPrefix: string;
  scopes: string[];
  lastUsedAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}
interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  secret: string;
}
interface Delivery {
  id: string;
  event: string;
  status: string;
  attempts: number;
  responseStatus: number | null;
  responseTimeMs: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
  /** The exact JSON text POSTed to the receiver (the same on every attempt). */
  body: string;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

const body = document.body;
const handle = body.dataset.handle ?? '';
const base = `/communities/${encodeURIComponent(handle)}`;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

async function api<T>(method: string, path: string, payload?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: payload === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  const data = (await res.json().catch(() => ({}))) as { error?: string };
  if (!res.ok) throw new ApiError(res.status, data.error ?? `http_${res.status}`);
  return data as T;
}

type Child = Node | string | null | undefined | false;
function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean> = {}, ...children: Child[]) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false) continue;
    node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c) node.append(c);
  return node;
}

const when = (iso: string | null) => (iso ? `${iso.slice(0, 19).replace('T', ' ')} UTC` : 'never');

interface GraphQLError {
  message: string;
  extensions?: { code?: string; reason?: string; details?: Array<{ field: string; message: string }> };
}
/** A GraphQL error: its message names the field and the rule (`handle: handle must be 3 to 40 ...`). */
class GraphQLFailure extends Error {
  constructor(readonly error: GraphQLError) {
    super(error.message);
  }
}

/** The web app's GraphQL endpoint with the session cookie (a JSON POST, which its CSRF prevention accepts). */
async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch('/graphql', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const out = (await res.json().catch(() => ({}))) as { data?: T | null; errors?: GraphQLError[] };
  if (out.errors?.length) throw new GraphQLFailure(out.errors[0]);
  if (!res.ok || !out.data) throw new ApiError(res.status, `http_${res.status}`);
  return out.data;
}

const MESSAGES: Record<string, string> = {
  invalid_credentials: 'Wrong email or password.',
  too_many_attempts: 'Too many sign-in attempts from here: wait a few minutes and try again.',
  email_taken: 'An account with this email exists: sign in instead.',
  username_taken: 'This username is taken.',
  invalid_url: 'The URL must be https:// on a public host.',
  no_events: 'Choose at least one event.',
  no_scopes: 'Choose at least one scope.',
  invalid_name: 'Give the key a name.',
  not_failed: 'Only a failed delivery can be resent.',
  rate_limited: 'Too many requests: wait a moment.',
};
const explain = (e: unknown) =>
  e instanceof GraphQLFailure ? e.message : e instanceof ApiError ? (MESSAGES[e.code] ?? `The service answered ${e.status} (${e.code}).`) : 'The service could not be reached.';

function say(text: string) {
  const status = $('status') ?? $('auth-status');
  if (status) status.textContent = text;
  const error = $('error');
  if (error) error.textContent = '';
}
function fail(e: unknown) {
  const error = $('error') ?? $('auth-status');
  error.textContent = explain(e);
}

/** Runs an action from a button or form, disabling the control meanwhile. */
async function act(control: { disabled: boolean } | null, action: () => Promise<void>) {
  if (control) control.disabled = true;
  try {
    await action();
  } catch (e) {
    fail(e);
  } finally {
    if (control) control.disabled = false;
  }
}

function formValues(form: HTMLFormElement) {
  const inputs = Array.from(form.querySelectorAll<HTMLInputElement>('input[name]'));
  return Object.fromEntries(inputs.map((i) => [i.name, i.value.trim()]));
}
const checked = (fieldset: HTMLElement) =>
  Array.from(fieldset.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')).map((i) => i.value);

function checkboxes(fieldset: HTMLElement, prefix: string, names: string[], selected: string[] = []) {
  fieldset.querySelectorAll('.choice').forEach((n) => n.remove());
  for (const name of names) {
    const id = `${prefix}-${name.replace(/[^a-z0-9]+/gi, '-')}`;
    fieldset.append(el('span', { class: 'choice' }, el('input', { type: 'checkbox', id, value: name, checked: selected.includes(name) }), el('label', { for: id }, name)));
  }
}

function signOutButton() {
  $('signout')?.addEventListener('click', () =>
    act($<HTMLButtonElement>('signout'), async () => {
      await api('POST', '/auth/logout');
      location.reload();
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------
// Sign-in page

function signInPage() {
  for (const [formId, path] of [
    ['signin-form', '/auth/login'],
    ['signup-form', '/auth/signup'],
  ] as const) {
    const form = $<HTMLFormElement>(formId);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void act(form.querySelector('button'), async () => {
        await api('POST', path, formValues(form));
        say('Signed in: opening the console…');
        location.reload();
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Keys

async function loadKeys(first = false) {
  const { keys, availableScopes } = await api<{ keys: ApiKey[]; availableScopes: string[] }>('GET', `${base}/api-keys`);
  if (first) checkboxes($('key-scopes'), 'scope', availableScopes);
  const rows = keys.map((k) =>
    el(
      'tr',
      {},
      el('td', {}, k.name),
      el('td', {}, el('code', {}, k.keyPrefix)),
      el('td', {}, k.scopes.join(', ')),
      el('td', { class: 'when' }, when(k.createdAt)),
      el('td', { class: 'when' }, when(k.lastUsedAt)),
      el('td', {}, ...(k.revokedAt ? ['revoked ', el('span', { class: 'when' }, when(k.revokedAt))] : ['active'])),
      el('td', {}, k.revokedAt ? null : revokeButton(k)),
    ),
  );
  $('keys-table').querySelector('tbody')!.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '7' }, 'No keys yet.'))]));
}

function revokeButton(k: ApiKey) {
  const button = el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke key ${k.name}` }, 'Revoke');
  button.addEventListener('click', () => {
    if (!confirm(`Revoke the key ${k.name}? Integrations using it stop working at once.`)) return;
    void act(button, async () => {
      await api('DELETE', `${base}/api-keys/${k.id}`);
      say(`Key ${k.name} revoked.`);
      await loadKeys();
    });
  });
  return button;
}

function keyForm() {
  const form = $<HTMLFormElement>('key-form');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(form.querySelector('button'), async () => {
      const created = await api<{ key: string; name: string }>('POST', `${base}/api-keys`, { name: formValues(form).name, scopes: checked($('key-scopes')) });
      const panel = $('new-key');
      $<HTMLInputElement>('new-key-value').value = created.key;
      $('copy-status').textContent = '';
      panel.hidden = false;
      panel.focus();
      form.reset();
      say(`Key ${created.name} created.`);
      await loadKeys();
    });
  });
  $('copy-key').addEventListener('click', () => {
    const input = $<HTMLInputElement>('new-key-value');
    const done = () => ($('copy-status').textContent = 'Copied to the clipboard.');
    navigator.clipboard.writeText(input.value).then(done, () => {
      input.select();
      $('copy-status').textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// Webhook endpoints

let availableEvents: string[] = [];

async function loadEndpoints(first = false) {
  const { webhooks, availableEvents: events } = await api<{ webhooks: Endpoint[]; availableEvents: string[] }>('GET', `${base}/webhooks`);
  availableEvents = events;
  if (first) {
    checkboxes($('hook-events'), 'event', events);
    $('filter-event').append(...['ping', ...events].map((e) => el('option', {}, e)));
  }
  $('hooks').replaceChildren(...(webhooks.length ? webhooks.map(endpointCard) : [el('p', {}, 'No endpoints yet.')]));
}

function endpointCard(e: Endpoint) {
  const result = el('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const card = el(
    'article',
    { class: 'card endpoint', 'aria-label': `Endpoint ${e.url}` },
    el('h3', {}, el('span', { class: 'url' }, e.url), ' ', el('span', { class: e.enabled ? 'badge on' : 'badge off' }, e.enabled ? 'enabled' : 'disabled')),
    e.description ? el('p', {}, e.description) : null,
    el('p', {}, 'Events: ', e.events.join(', ')),
    el('details', {}, el('summary', {}, 'Signing secret'), el('code', { class: 'secret' }, e.secret)),
  );
  const actions = el('p', { class: 'actions' });
  const ping = el('button', { type: 'button' }, 'Send test ping');
  ping.addEventListener('click', () =>
    act(ping, async () => {
      result.textContent = 'Sending a ping…';
      const out = await api<{ ok: boolean; statusCode: number | null; responseTimeMs: number; error: string | null }>('POST', `${base}/webhooks/${e.id}/test`);
      result.className = out.ok ? 'status ok' : 'status bad';
      result.textContent = out.ok
        ? `Ping delivered: the receiver answered ${out.statusCode} in ${out.responseTimeMs} ms.`
        : `Ping failed: ${out.statusCode !== null ? `the receiver answered ${out.statusCode}` : (out.error ?? 'no answer')} in ${out.responseTimeMs} ms.`;
      if (logEndpoint?.id === e.id) await loadLog(true);
    }),
  );
  const toggle = el('button', { type: 'button' }, e.enabled ? 'Disable' : 'Enable');
  toggle.addEventListener('click', () =>
    act(toggle, async () => {
      await api('PATCH', `${base}/webhooks/${e.id}`, { enabled: !e.enabled });
      say(`Endpoint ${e.url} ${e.enabled ? 'disabled' : 'enabled'}.`);
      await loadEndpoints();
    }),
  );
  const edit = el('button', { type: 'button', 'aria-expanded': 'false' }, 'Edit events');
  const editor = eventsEditor(e, () => {
    editor.hidden = true;
    edit.setAttribute('aria-expanded', 'false');
    edit.focus();
  });
  edit.addEventListener('click', () => {
    editor.hidden = !editor.hidden;
    edit.setAttribute('aria-expanded', String(!editor.hidden));
    if (!editor.hidden) editor.querySelector('input')?.focus();
  });
  const log = el('button', { type: 'button' }, 'Delivery log');
  log.addEventListener('click', () => act(log, () => openLog(e)));
  const remove = el('button', { type: 'button', class: 'danger' }, 'Delete');
  remove.addEventListener('click', () => {
    if (!confirm(`Delete the endpoint ${e.url} and its delivery log?`)) return;
    void act(remove, async () => {
      await api('DELETE', `${base}/webhooks/${e.id}`);
      say(`Endpoint ${e.url} deleted.`);
      if (logEndpoint?.id === e.id) $('log').hidden = true;
      await loadEndpoints();
    });
  });
  actions.append(ping, toggle, edit, log, remove);
  card.append(actions, result, editor);
  return card;
}

function eventsEditor(e: Endpoint, close: () => void) {
  const fieldset = el('fieldset', {}, el('legend', {}, `Events sent to ${e.url}`));
  checkboxes(fieldset, `edit-${e.id}`, availableEvents, e.events);
  const save = el('button', { type: 'submit' }, 'Save events');
  const cancel = el('button', { type: 'button' }, 'Cancel');
  const form = el('form', { class: 'editor', hidden: true }, fieldset, save, ' ', cancel);
  cancel.addEventListener('click', close);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(save, async () => {
      const updated = await api<Endpoint>('PATCH', `${base}/webhooks/${e.id}`, { events: checked(fieldset) });
      say(`Events of ${e.url}: ${updated.events.join(', ')}.`);
      await loadEndpoints();
    });
  });
  return form;
}

function hookForm() {
  const form = $<HTMLFormElement>('hook-form');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(form.querySelector('button'), async () => {
      const v = formValues(form);
      const created = await api<Endpoint>('POST', `${base}/webhooks`, {
        url: v.url,
        events: checked($('hook-events')),
        ...(v.description ? { description: v.description } : {}),
      });
      form.reset();
      say(`Endpoint ${created.url} added. Its signing secret is under "Signing secret".`);
      await loadEndpoints();
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// Delivery log: newest first, page by page; the filters apply to the deliveries loaded.

let logEndpoint: Endpoint | null = null;
let deliveries: Delivery[] = [];
let nextPage = 1;

async function openLog(e: Endpoint) {
  logEndpoint = e;
  $('log').hidden = false;
  $('log-endpoint').textContent = `Deliveries to ${e.url}, newest first.`;
  await loadLog(true);
  $('log-heading').scrollIntoView();
}

async function loadLog(fresh: boolean) {
  if (!logEndpoint) return;
  const wanted = fresh ? 1 : nextPage;
  const page = await api<{ deliveries: Delivery[]; hasMore: boolean }>('GET', `${base}/webhooks/${logEndpoint.id}/deliveries?page=${wanted}&perPage=100`);
  deliveries = fresh ? page.deliveries : [...deliveries, ...page.deliveries];
  nextPage = wanted + 1;
  $('log-more').hidden = !page.hasMore;
  renderLog();
}

function renderLog() {
  const status = $<HTMLSelectElement>('filter-status').value;
  const event = $<HTMLSelectElement>('filter-event').value;
  const shown = deliveries.filter((d) => (!status || d.status === status) && (!event || d.event === event));
  const rows = shown.map((d) =>
    el(
      'tr',
      { 'data-delivery': d.id },
      el('td', { class: 'when' }, when(d.createdAt)),
      el('td', {}, d.event),
      el('td', {}, el('span', { class: `badge ${d.status}` }, d.status)),
      el('td', {}, String(d.attempts)),
      el('td', {}, d.responseStatus === null ? '—' : String(d.responseStatus)),
      el('td', {}, d.responseTimeMs === null ? '—' : `${d.responseTimeMs} ms`),
      el('td', {}, d.lastError ?? ''),
      el('td', {}, bodyOf(d)),
      el('td', {}, d.status === 'failed' ? resendButton(d) : null, detailsOf(d)),
    ),
  );
  const empty = deliveries.length ? 'No delivery matches the filters.' : 'No deliveries yet.';
  $('log-table').querySelector('tbody')!.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '9' }, empty))]));
}

/** The body as the receiver got it, byte for byte (text, never markup), folded under "Body". */
function bodyOf(d: Delivery) {
  return el(
    'details',
    {},
    el('summary', {}, 'Body', el('span', { class: 'sr-only' }, ` of delivery ${d.id}`)),
    el('pre', { class: 'body' }, d.body),
  );
}

function detailsOf(d: Delivery) {
  const { body: _body, ...rest } = d;
  const record = JSON.stringify(rest, null, 2);
  return el('details', {}, el('summary', {}, el('span', { class: 'sr-only' }, `Delivery ${d.id} `), 'Details'), el('pre', {}, record));
}

function resendButton(d: Delivery) {
  const button = el('button', { type: 'button', 'aria-label': `Resend delivery ${d.id}` }, 'Resend');
  button.addEventListener('click', () =>
    act(button, async () => {
      const { delivery } = await api<{ delivery: Delivery }>('POST', `${base}/webhooks/${logEndpoint!.id}/deliveries/${d.id}/resend`);
      say(`Delivery ${delivery.id} queued again (${delivery.status}): the worker sends it within minutes.`);
      await loadLog(true);
    }),
  );
  return button;
}

function logControls() {
  $('filter-status').addEventListener('change', renderLog);
  $('filter-event').addEventListener('change', renderLog);
  $('log-refresh').addEventListener('click', () => act($<HTMLButtonElement>('log-refresh'), () => loadLog(true)));
  $('log-more').addEventListener('click', () => act($<HTMLButtonElement>('log-more'), () => loadLog(false)));
}

// ---------------------------------------------------------------------------------------------------------

async function consolePage() {
  keyForm();
  hookForm();
  logControls();
  await act(null, async () => {
    const [{ user }] = await Promise.all([api<{ user: { username: string } }>('GET', '/auth/me'), loadKeys(true), loadEndpoints(true)]);
    $('who').textContent = `Signed in as ${user.username}`;
    body.dataset.ready = 'true';
  });
}

// ---------------------------------------------------------------------------------------------------------
// Account settings: the signed-in user's personal API keys of the resource API (GET|POST /account/api-keys,
// DELETE /account/api-keys/:id).

type PersonalKey = ApiKey;

async function loadPersonalKeys(first = false) {
  const { keys, availableScopes } = await api<{ keys: PersonalKey[]; availableScopes: Array<{ name: string; description: string }> }>('GET', '/account/api-keys');
  if (first) {
    const names = availableScopes.map((s) => s.name);
    checkboxes($('pkey-scopes'), 'pscope', names, names);
  }
  const rows = keys.map((k) =>
    el(
      'tr',
      {},
      el('td', {}, k.name),
      el('td', {}, el('code', {}, k.keyPrefix)),
      el('td', {}, k.scopes.join(', ')),
      el('td', { class: 'when' }, when(k.createdAt)),
      el('td', { class: 'when' }, when(k.lastUsedAt)),
      el('td', {}, ...(k.revokedAt ? ['revoked ', el('span', { class: 'when' }, when(k.revokedAt))] : ['active'])),
      el('td', {}, k.revokedAt ? null : revokePersonalButton(k)),
    ),
  );
  $('pkeys-table').querySelector('tbody')!.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '7' }, 'No keys yet.'))]));
}

function revokePersonalButton(k: PersonalKey) {
  const button = el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke key ${k.name}` }, 'Revoke');
  button.addEventListener('click', () => {
    if (!confirm(`Revoke the key ${k.name}? Integrations using it stop working at once.`)) return;
    void act(button, async () => {
      await api('DELETE', `/account/api-keys/${k.id}`);
      say(`Key ${k.name} revoked.`);
      await loadPersonalKeys();
    });
  });
  return button;
}

MESSAGES.personal_api_key_limit = 'You have 10 active keys, the most allowed: revoke one first.';
MESSAGES.invalid_scopes = 'Choose at least one scope.';

async function settingsPage() {
  const form = $<HTMLFormElement>('pkey-form');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(form.querySelector('button'), async () => {
      const created = await api<{ key: string; name: string }>('POST', '/account/api-keys', { name: formValues(form).name, scopes: checked($('pkey-scopes')) });
      const panel = $('new-key');
      $<HTMLInputElement>('new-key-value').value = created.key;
      $('copy-status').textContent = '';
      panel.hidden = false;
      panel.focus();
      $<HTMLInputElement>('pkey-name').value = '';
      say(`Key ${created.name} created.`);
      await loadPersonalKeys();
    });
  });
  $('copy-key').addEventListener('click', () => {
    const input = $<HTMLInputElement>('new-key-value');
    navigator.clipboard.writeText(input.value).then(
      () => ($('copy-status').textContent = 'Copied to the clipboard.'),
      () => {
        input.select();
        $('copy-status').textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
      },
    );
  });
  await act(null, async () => {
    const [{ user }] = await Promise.all([api<{ user: { username: string } }>('GET', '/auth/me'), loadPersonalKeys(true)]);
    $('who').textContent = `Signed in as ${user.username}`;
    body.dataset.ready = 'true';
  });
}

// ---------------------------------------------------------------------------------------------------------
// Your tribes (GET /console) and "Create a tribe" (there and on the 404 page), through /graphql.

interface Membership {
  role: string;
  community: { handle: string; name: string };
}
const TRIBES = `query ConsoleTribes($after: String) { me { memberships(first: 50, after: $after) {
  edges { node { role community { handle name } } } pageInfo { hasNextPage endCursor } } } }`;
const CREATE = 'mutation ConsoleCreateTribe($input: CreateCommunityInput!) { createCommunity(input: $input) { handle } }';

async function loadTribes() {
  const mine: Membership[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 20; pages += 1) {
    type Answer = { me: { memberships: { edges: Array<{ node: Membership }>; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null };
    const data: Answer = await graphql<Answer>(TRIBES, { after });
    const list = data.me?.memberships;
    if (!list) break;
    mine.push(...list.edges.map((e) => e.node).filter((m) => m.role === 'owner' || m.role === 'admin'));
    if (!list.pageInfo.hasNextPage) break;
    after = list.pageInfo.endCursor;
  }
  const items = mine.map((m) =>
    el('li', {}, el('a', { href: `/console/${encodeURIComponent(m.community.handle)}` }, m.community.name), ' ', el('span', { class: 'handle' }, m.community.handle), ` (${m.role})`),
  );
  $('tribes').replaceChildren(...(items.length ? items : [el('li', {}, 'None yet: create one below.')]));
}

function createTribeForm() {
  const form = document.getElementById('create-form') as HTMLFormElement | null;
  if (!form) return;
  const fields = ['name', 'handle'];
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    for (const f of fields) {
      $(`create-${f}-error`).textContent = '';
      $(`create-${f}`).removeAttribute('aria-invalid');
    }
    $('create-error').textContent = '';
    const value = (id: string) => $<HTMLInputElement>(id).value.trim();
    const input = { name: value('create-name'), handle: value('create-handle'), isPublic: $<HTMLInputElement>('create-public').checked };
    void act(form.querySelector('button'), async () => {
      try {
        const { createCommunity } = await graphql<{ createCommunity: { handle: string } }>(CREATE, { input });
        location.assign(`/console/${encodeURIComponent(createCommunity.handle)}`);
      } catch (e) {
        // Each refused field gets the API's message under it; anything else goes under the form.
        const ext = e instanceof GraphQLFailure ? (e.error.extensions ?? {}) : {};
        const details = ext.details ?? (ext.reason === 'handle_taken' ? [{ field: 'handle', message: '' }] : []);
        const placed = details.filter((d) => fields.includes(d.field));
        for (const d of placed) {
          $(`create-${d.field}-error`).textContent = d.message ? `${d.field}: ${d.message}` : (e as Error).message;
          $(`create-${d.field}`).setAttribute('aria-invalid', 'true');
        }
        if (placed.length) $(`create-${placed[0].field}`).focus();
        else $('create-error').textContent = explain(e);
      }
    });
  });
}

async function homePage() {
  await act(null, async () => {
    const [{ user }] = await Promise.all([api<{ user: { username: string } }>('GET', '/auth/me'), loadTribes()]);
    $('who').textContent = `Signed in as ${user.username}`;
    body.dataset.ready = 'true';
  });
}

signOutButton();
createTribeForm();
if (body.dataset.page === 'home') void homePage();
if (body.dataset.page === 'signin') signInPage();
if (body.dataset.page === 'console') void consolePage();
if (body.dataset.page === 'settings') void settingsPage();

// The service worker (tools/post-build.mjs writes it into the build as sw.js, filling in the
// version and the file list). It precaches every file of the build at install, answers
// requests under its scope from that cache first (a navigation to any page gets that page's
// HTML file, an unknown address 404.html), keeps one version at a time, and takes over only
// when the page asks (the "new version" notice's button, tools/sw-register.js). The scope is
// the directory sw.js is served from, so it works under any base path.

const VERSION = "__VERSION__";
const FILES = [/* __FILES__ */];
const SCOPE = new URL(self.registration.scope);
// Caches are named per scope, so two copies of the app on one origin do not clear each other's.
const PREFIX = `trainer:${SCOPE.pathname}:`;
const CACHE = PREFIX + VERSION;
const known = new Set(FILES);

const abs = (rel) => new URL(rel, SCOPE).href;

// A WebAssembly module is stored under a neutral type and given its own back when served:
// Chromium compiles a module put in the cache as application/wasm at once, beside the page
// that has just compiled it. Measured on a loaded two-core machine, the first moment's longest
// run slice on a first visit: 309 and 382 ms with the module stored as application/wasm, 127
// and 162 ms stored neutrally, 29 and 48 ms with no service worker. Served, it compiles as it
// would from the network.
const WASM = "application/wasm";
const stored = (res) =>
  res.headers.get("Content-Type") === WASM
    ? res.blob().then((b) => new Response(b, { headers: { "Content-Type": "application/octet-stream" } }))
    : Promise.resolve(res);
const served = (file, res) =>
  file.endsWith(".wasm") ? res.blob().then((b) => new Response(b, { headers: { "Content-Type": WASM } })) : res;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches.open(CACHE).then((cache) =>
      Promise.all(
        FILES.map((f) =>
          fetch(new Request(abs(f), { cache: "no-cache" })).then((res) => {
            if (!res.ok) throw new Error(`${f}: ${res.status}`);
            return stored(res).then((r) => cache.put(abs(f), r));
          }),
        ),
      ),
    ),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith(PREFIX) && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("message", (event) => {
  if (event.data === "skip-waiting") self.skipWaiting();
});

/** The file that answers a navigation to `rel` (a path under the scope). */
function pageFile(rel) {
  const clean = rel.replace(/\/+$/, "");
  if (clean === "") return "index.html";
  if (known.has(clean)) return clean;
  if (known.has(`${clean}/index.html`)) return `${clean}/index.html`;
  return "404.html";
}

self.addEventListener("fetch", (event) => {
  const req = event.request;
  if (req.method !== "GET") return;
  const url = new URL(req.url);
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname)) return;
  let rel;
  try {
    rel = decodeURIComponent(url.pathname.slice(SCOPE.pathname.length));
  } catch {
    return;
  }
  const file = req.mode === "navigate" ? pageFile(rel) : rel;
  if (!known.has(file)) return;
  event.respondWith(
    caches
      .open(CACHE)
      .then((cache) => cache.match(abs(file)))
      .then((hit) => (hit ? served(file, hit) : fetch(req))),
  );
});

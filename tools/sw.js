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

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches.open(CACHE).then((cache) => cache.addAll(FILES.map((f) => new Request(abs(f), { cache: "no-cache" })))),
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
      .then((hit) => hit || fetch(req)),
  );
});

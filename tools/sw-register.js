// Registers the service worker (sw.js beside the pages; tools/post-build.mjs copies this file
// into the build and loads it once the document's base is known, so "sw.js" resolves under
// any base path). When a new version has installed while an older one controls the page, it
// shows the notice each HTML file carries as <template id="update-notice"> (its words are in
// content/site.toml); the notice's button lets the new version take over and reloads.
(function () {
  if (!("serviceWorker" in navigator)) return;
  var asked = false;
  function offer(worker) {
    var tpl = document.getElementById("update-notice");
    if (!tpl || document.querySelector('[data-testid="update-notice"]')) return;
    var notice = tpl.content.firstElementChild.cloneNode(true);
    notice.querySelector("button").addEventListener("click", function () {
      asked = true;
      worker.postMessage("skip-waiting");
    });
    document.body.prepend(notice);
  }
  navigator.serviceWorker.addEventListener("controllerchange", function () {
    if (asked) location.reload();
  });
  function register() {
    navigator.serviceWorker.register("sw.js").then(function (reg) {
      if (!reg) return;
      if (reg.waiting && navigator.serviceWorker.controller) offer(reg.waiting);
      reg.addEventListener("updatefound", function () {
        var next = reg.installing;
        if (!next) return;
        next.addEventListener("statechange", function () {
          if (next.state === "installed" && navigator.serviceWorker.controller) offer(next);
        });
      });
    }, function (e) {
      console.warn("The offline copy could not be set up: " + e);
    });
  }
  // The precache fetches every file of the build (some megabytes). It waits until the page
  // has what it needs: the document has loaded, the app has drawn its first page (the route's
  // first paint, #boot, is gone and the root no longer carries data-drawing) and the browser
  // is idle. Registered at load, its downloads and its worker's start competed with the
  // page's own pieces for the network and for the CPU of a phone (README, "Lighthouse and
  // accessibility": the blocking time halved once they waited). A page whose app never starts
  // (its module failed to load) registers after 30 s all the same.
  var waited = 0;
  function drawn() {
    return !document.getElementById("boot") && !document.documentElement.hasAttribute("data-drawing");
  }
  function whenDrawn() {
    if (drawn() || waited >= 30000) {
      if (window.requestIdleCallback) window.requestIdleCallback(register, { timeout: 5000 });
      else setTimeout(register, 0);
      return;
    }
    waited += 250;
    setTimeout(whenDrawn, 250);
  }
  if (document.readyState === "complete") whenDrawn();
  else window.addEventListener("load", whenDrawn);
})();

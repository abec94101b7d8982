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
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register);
})();

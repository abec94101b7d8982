// Trunk post-build step: make the built page load its assets only after index.html's inline
// script has set the document's <base>.
//
// Trunk writes the stylesheet, the module script and the preload hints as ordinary tags with
// relative URLs. A browser's preload scanner would fetch those at once, against the page's own
// URL, before any script runs: on a deep link such as /trainer/size/fleet that means requests
// for /trainer/size/app.js that fail. So everything between the `<!-- app-assets -->` marker
// and </head> is moved into an inert <template>, and a one-line script clones it into the
// head once `window.appBase` (set by index.html's inline script) has settled, so the tags
// resolve against the base. The result is also written as 404.html,
// which static hosts serve for unknown paths, so deep links load the app.

import fs from "node:fs";
import path from "node:path";

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error("post-build: TRUNK_STAGING_DIR is not set (run through trunk)");
  process.exit(2);
}
const file = path.join(dir, "index.html");
const html = fs.readFileSync(file, "utf8");
const marker = "<!-- app-assets -->";
const start = html.indexOf(marker);
const end = html.indexOf("</head>");
if (start < 0 || end < start) {
  console.error("post-build: index.html lacks the <!-- app-assets --> marker before </head>");
  process.exit(2);
}
const assets = html.slice(start + marker.length, end);
const out =
  html.slice(0, start) +
  `<template id="app-assets">${assets}</template>\n` +
  `<script>window.appBase.then(function () { document.head.appendChild(document.getElementById("app-assets").content.cloneNode(true)); });</script>\n` +
  html.slice(end);
fs.writeFileSync(file, out);
fs.writeFileSync(path.join(dir, "404.html"), out);

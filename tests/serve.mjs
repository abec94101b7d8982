// A static file server that behaves like a plain static host (GitHub Pages, S3, nginx):
// files are served from a directory under a base path; `/x/y` and `/x/y/` are answered from
// `x/y/index.html` with 200 (the build writes one such file per page); any other path under
// the base gets the directory's 404.html with status 404. Used by `./dev serve` and the
// browser tests.
//
//   node tests/serve.mjs [--dir dist] [--base /trainer/] [--port 8080] [--gzip on]
//
// With gzip on, .html, .js, .css and .wasm files go out gzipped to a client that accepts it,
// as most static hosts send them (Lighthouse measures the app that way: tests/lighthouse.mjs).
//
// It binds 127.0.0.1 only and prints the address on its first line.

import http from "node:http";
import fs from "node:fs";
import zlib from "node:zlib";
import path from "node:path";
import { fileURLToPath } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

const GZIPPED = new Set([".html", ".js", ".mjs", ".css", ".wasm"]);

/** Starts a server; resolves to { server, url }. `gzip`: compress text and WASM on request. */
export function serve({ dir, base = "/", port = 0, gzip = false }) {
  if (!base.startsWith("/")) base = "/" + base;
  if (!base.endsWith("/")) base += "/";
  const root = path.resolve(dir);
  // Deep links may carry long values (a pasted scenario file, a fuzzed field): allow request
  // lines up to 64 KiB, as hosts with large header buffers do, instead of Node's 16 KiB.
  const server = http.createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      res.writeHead(400).end("bad request");
      return;
    }
    if (pathname.includes("\0")) {
      res.writeHead(400, { "Content-Type": "text/plain" }).end("bad request");
      return;
    }
    if (pathname === base.slice(0, -1)) {
      res.writeHead(301, { Location: base }).end();
      return;
    }
    if (!pathname.startsWith(base)) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not under " + base);
      return;
    }
    let rel = pathname.slice(base.length);
    if (rel === "" || rel.endsWith("/")) rel += "index.html";
    let file = path.resolve(root, rel);
    const inside = file.startsWith(root + path.sep);
    fs.stat(file, (err, st) => {
      // A directory is answered by its index.html, without a redirect.
      if (inside && !err && st.isDirectory()) {
        file = path.join(file, "index.html");
        try {
          st = fs.statSync(file);
        } catch {
          st = null;
        }
      }
      if (inside && st && st.isFile()) {
        const headers = { "Content-Type": TYPES[path.extname(file)] || "application/octet-stream", "Cache-Control": "no-cache" };
        const zip = gzip && GZIPPED.has(path.extname(file)) && /\bgzip\b/.test(req.headers["accept-encoding"] || "");
        if (zip) Object.assign(headers, { "Content-Encoding": "gzip", Vary: "Accept-Encoding" });
        res.writeHead(200, headers);
        const body = fs.createReadStream(file);
        (zip ? body.pipe(zlib.createGzip()) : body).pipe(res);
      } else {
        const fallback = path.join(root, "404.html");
        fs.readFile(fallback, (e2, body) => {
          if (e2) res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
          else res.writeHead(404, { "Content-Type": TYPES[".html"] }).end(body);
        });
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.on("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const { port: p } = server.address();
      resolve({ server, url: `http://127.0.0.1:${p}${base}` });
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = { dir: "dist", base: "/", port: 8080, gzip: "off" };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args) || argv[i + 1] === undefined) {
      console.error("usage: node tests/serve.mjs [--dir DIR] [--base /PATH/] [--port N] [--gzip on|off]");
      process.exit(2);
    }
    args[key] = key === "port" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!fs.existsSync(path.join(args.dir, "index.html"))) {
    console.error(`no ${args.dir}/index.html: build the app first (./dev build)`);
    process.exit(2);
  }
  serve({ ...args, gzip: args.gzip === "on" }).then(({ url }) => {
    console.log(`Serving ${args.dir} at ${url}`);
  }, (e) => {
    console.error(`could not listen on 127.0.0.1:${args.port}: ${e.message}`);
    process.exit(1);
  });
}

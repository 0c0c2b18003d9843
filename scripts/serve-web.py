#!/usr/bin/python3
"""make serve-web (docs/web.md): serves the web build on this machine only, cross-origin isolated.

The page runs eddy on several threads (eddy-mt.js) only where the browser gives it SharedArrayBuffer, i.e. where
the page is cross-origin isolated: every response carries Cross-Origin-Opener-Policy: same-origin and
Cross-Origin-Embedder-Policy: require-corp (tests/web/browser.mjs sends the same). Elsewhere (a plain static
server) the page runs eddy.js on one thread.

    /usr/bin/python3 scripts/serve-web.py DIR [PORT=8000]
"""
import functools
import http.server
import sys


class IsolatedHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm"}

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: serve-web.py DIR [PORT]")
    try:
        port = int(sys.argv[2]) if len(sys.argv) == 3 else 8000
    except ValueError:
        sys.exit(f"serve-web.py: port '{sys.argv[2]}': allowed: a whole number from 1 to 65535")
    if not 1 <= port <= 65535:
        sys.exit(f"serve-web.py: port {port}: allowed: a whole number from 1 to 65535")
    handler = functools.partial(IsolatedHandler, directory=sys.argv[1])
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"eddy's page: http://127.0.0.1:{port}/index.html (cross-origin isolated: threads; Ctrl-C stops it)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

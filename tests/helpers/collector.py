#!/usr/bin/env python3
"""A report collector for tests/integration/delivery.sh: a real HTTP(S) server on 127.0.0.1.

collector.py DIR [--port N] [--tls CERT KEY]

Listens on 127.0.0.1 (port N, or a free one), writes the port to DIR/port once it listens, and
answers each POST by the mode in DIR/mode (read at every request; "accept" when missing):
  accept     store the body as DIR/store/KEY.json (KEY: its Idempotency-Key; a second arrival of
             a key is not stored again) and answer 200
  store500   store it the same way, then answer 500 (a collector that lost its answer: the
             sender must come again with the same key)
  500        answer 500 without storing
  hang       read the request and never answer (the sender's timeout must end it)
  400        answer 400 Bad Request (a collector that rejects the report)
  redirect   answer 307 to /elsewhere (a sender must not follow it)
("refuse", nothing listening, is the test stopping this server.)
Every arrival is a line of DIR/arrivals: "KEY REPORT_ID JOB SHA256_OF_BODY MODE AUTHORIZATION PATH",
so that duplicates are visible; the headers of the last one are in DIR/last-headers.
"""
import hashlib
import http.server
import os
import ssl
import sys
import threading
import time


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    d = args.pop(0)
    port, tls = 0, None
    while args:
        a = args.pop(0)
        if a == "--port":
            port = int(args.pop(0))
        elif a == "--tls":
            tls = (args.pop(0), args.pop(0))
        else:
            sys.exit("collector.py: unknown option " + a)
    os.makedirs(os.path.join(d, "store"), exist_ok=True)
    lock = threading.Lock()

    def mode():
        try:
            with open(os.path.join(d, "mode")) as f:
                return f.read().strip() or "accept"
        except FileNotFoundError:
            return "accept"

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def answer(self, code, text):
            body = (text + "\n").encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n)
            key = self.headers.get("Idempotency-Key", "-")
            m = mode()
            with lock:
                with open(os.path.join(d, "last-headers"), "w") as f:
                    f.write(str(self.headers))
                with open(os.path.join(d, "arrivals"), "a") as f:
                    f.write("%s %s %s %s %s %s %s\n" % (key, self.headers.get("X-Wiped-Report-Id", "-"),
                                                        self.headers.get("X-Wiped-Job", "-"),
                                                        hashlib.sha256(body).hexdigest(), m,
                                                        (self.headers.get("Authorization") or "-").replace(" ", "_"),
                                                        self.path))
                if m in ("accept", "store500") and "/" not in key and key not in ("", ".", ".."):
                    path = os.path.join(d, "store", key + ".json")
                    if not os.path.exists(path):
                        with open(path + ".tmp", "wb") as f:
                            f.write(body)
                        os.rename(path + ".tmp", path)
            if m == "hang":
                # Never answer; the connection ends when the sender gives up.
                while mode() == "hang":
                    time.sleep(0.2)
                self.close_connection = True
                return
            if m == "accept":
                self.answer(200, "stored " + key)
            elif m == "400":
                self.answer(400, "no such tenant")
            elif m == "redirect":
                self.send_response(307)
                self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self.answer(500, "collector broken on purpose (" + m + ")")

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    srv = Server(("127.0.0.1", port), Handler)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls[0], tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(os.path.join(d, "port.tmp"), "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
    srv.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A scripted HTTP server on 127.0.0.1 standing in for the GitHub/GitLab status APIs in tests.

Each request consumes the next action of --script (comma separated); once the script is used up
it answers 201. Actions: a status code ("500"), a code with a Retry-After header ("429:1"),
"hang" (never answers; the client must time out), or a 200 with a broken body: "junk" (not
JSON), "empty" (no body), "emptyobj" ({}), "array" ([]), "otherstate" (another state). A 2xx
answers the state it was sent, as GitHub ("state") or GitLab ("status", under /api/v4/). Every request is appended to --log as one JSON
line: time, method, path, headers and JSON body. The auth headers' values are never written: the
log says only whether they matched the expected token (read from the environment variable named by
--token-env), so the log itself cannot leak the token. A 401 answer echoes the token on purpose,
to check that the client redacts what servers send back. Exits by itself after --max-life seconds.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

AUTH_HEADERS = ("authorization", "private-token", "job-token")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--script", default="")
    ap.add_argument("--token-env", default="KG_TEST_TOKEN")
    ap.add_argument("--hang-s", type=float, default=15.0)
    ap.add_argument("--max-life", type=float, default=60.0)
    a = ap.parse_args()
    token = os.environ.get(a.token_env, "")
    actions = [s for s in a.script.split(",") if s]
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep stderr quiet
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            headers, auth = {}, "missing"
            for k, v in self.headers.items():
                if k.lower() in AUTH_HEADERS:
                    ok = token and v in (token, "Bearer " + token)
                    auth = k.lower() + (":match" if ok else ":mismatch")
                    headers[k] = "<redacted>"
                else:
                    headers[k] = v
            try:
                body = json.loads(raw.decode()) if raw else None
            except ValueError:
                body = {"unparsable": raw.decode(errors="replace")}
            with lock:
                action = actions.pop(0) if actions else "201"
                with open(a.log, "a") as f:
                    f.write(json.dumps({"t": time.time(), "method": self.command,
                                        "path": self.path, "auth": auth, "headers": headers,
                                        "body": body, "action": action}) + "\n")
            if action == "hang":
                time.sleep(a.hang_s)
                self.close_connection = True
                return
            broken = {"junk": b"<html>ok</html>", "empty": b"", "emptyobj": b"{}",
                      "array": b"[]", "otherstate": None}
            if action in broken:
                data = broken[action]
                if data is None:
                    data = json.dumps({"state": "pending", "status": "pending", "id": 1}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            code, _, retry_after = action.partition(":")
            code = int(code)
            key = "status" if self.path.startswith("/api/v4/") else "state"
            if code == 401:
                reply = {"message": "Bad credentials for " + token}
            elif code < 300:
                reply = {key: (body or {}).get("state"), "id": 1}
            else:
                reply = {"message": "scripted %d" % code}
            data = json.dumps(reply).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if retry_after:
                self.send_header("Retry-After", retry_after)
            self.end_headers()
            self.wfile.write(data)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    threading.Timer(a.max_life, srv.shutdown).start()
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())

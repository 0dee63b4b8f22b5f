#!/usr/bin/env python3
"""A loopback smart-HTTP git server with token auth, for the push tests.

Usage: git_http_server.py ROOT PORTFILE LOG READ_TOKEN WRITE_TOKEN [PORT]

Serves the repositories under ROOT through `git http-backend` on 127.0.0.1 (PORT, default a
free one, written to PORTFILE). Basic auth, as a forge does it: no Authorization header is 401
with a Basic challenge; fetching (git-upload-pack) takes READ_TOKEN or WRITE_TOKEN as the
password, pushing (git-receive-pack) WRITE_TOKEN only (a GitLab job token can fetch but not
push); anything else is 403. LOG gets one line per request: method, path, user, verdict (never
a password)."""
import base64
import http.server
import os
import subprocess
import sys

ROOT, PORTFILE, LOG, READ_TOKEN, WRITE_TOKEN = sys.argv[1:6]
PORT = int(sys.argv[6]) if len(sys.argv) > 6 else 0


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def note(self, user, verdict):
        with open(LOG, "a") as f:
            f.write("%s %s user=%s %s\n" % (self.command, self.path.split("?")[0], user, verdict))

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def handle_git(self):
        data = self.body() if self.command == "POST" else b""
        path, _, query = self.path.partition("?")
        push = "git-receive-pack" in path or "service=git-receive-pack" in query
        auth = self.headers.get("Authorization", "")
        user = "-"
        if not auth.startswith("Basic "):
            self.note(user, "401")
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="kgate-test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        user, _, password = base64.b64decode(auth[6:]).decode("utf-8", "replace").partition(":")
        allowed = password == WRITE_TOKEN or (not push and password == READ_TOKEN)
        if not allowed:
            self.note(user, "403")
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.note(user, "ok")
        env = dict(os.environ, GIT_PROJECT_ROOT=ROOT, GIT_HTTP_EXPORT_ALL="1",
                   REMOTE_USER=user, REMOTE_ADDR="127.0.0.1", PATH_INFO=path,
                   QUERY_STRING=query, REQUEST_METHOD=self.command,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   CONTENT_LENGTH=str(len(data)))
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(["git", "http-backend"], input=data, env=env,
                             stdout=subprocess.PIPE, check=False).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        if not rest and b"\n\n" in out:
            head, _, rest = out.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    do_GET = handle_git
    do_POST = handle_git


srv = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()

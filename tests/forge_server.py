#!/usr/bin/env python3
"""A stateful HTTP server on 127.0.0.1 standing in for the GitHub issue-comments and GitLab
merge-request-notes APIs in tests (tests/test_comment.sh).

GitHub:  GET/POST /repos/{o}/{r}/issues/{n}/comments, PATCH /repos/{o}/{r}/issues/comments/{id}
GitLab:  GET/POST [/api/v4]/projects/{id}/merge_requests/{iid}/notes, PUT .../notes/{note_id}
GET [/api/v4]/user answers the token's user (--login; --user-403: 403, as for a GitHub App
installation token). A comment posted gets that author (GitHub user.login, GitLab
author.username); --foreign seeds comments by "mallory" that quote the marker (first line and
further down) and one by the token's user with the id 1e30.
Comments live in memory (seeded with --seed N unrelated comments per thread, so the marker
search pages through ?per_page&page) and are written to --state (JSON) after every change. Every
request is appended to --log as one JSON line: method, path, auth (whether the auth header
matched the token in the --token-env variable; the value itself is never written) and JSON body.
A wrong token is answered 401 with the token it was sent echoed (plain, base64 and hex), to
check the client redacts it in every form.
Exits by itself after --max-life seconds.
"""
import argparse
import base64
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

AUTH_HEADERS = ("authorization", "private-token", "job-token")
LIST = re.compile(r"^(?:/api/v4)?(/repos/[^/]+/[^/]+/issues/\d+/comments|/projects/[^/]+/merge_requests/\d+/notes)$")
GH_ITEM = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")
GL_ITEM = re.compile(r"^((?:/api/v4)?/projects/[^/]+/merge_requests/\d+/notes)/(\d+)$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--token-env", default="KG_TEST_TOKEN")
    ap.add_argument("--max-life", type=float, default=60.0)
    ap.add_argument("--login", default="kgate-bot")
    ap.add_argument("--user-403", action="store_true")
    ap.add_argument("--foreign", action="store_true")
    a = ap.parse_args()
    token = os.environ.get(a.token_env, "")
    lock = threading.Lock()
    threads = {}  # list path -> [comment]
    next_id = [1000]

    def by(login, cid, body):
        return {"id": cid, "body": body, "user": {"login": login},
                "author": {"username": login, "id": 5}}

    def thread(path):
        if path not in threads:
            threads[path] = []
            if a.foreign:
                m = "<!-- kgate-comment -->"
                threads[path] += [by("mallory", 11, m + "\n## kgate: all gates passed\n"),
                                  by("mallory", 12, "> " + m + "\n> quoted\nlooks fine"),
                                  by(a.login, 1e30, m + "\n## kgate: an id out of range\n")]
            for i in range(a.seed):
                next_id[0] += 1
                threads[path].append(by("someone", next_id[0], "unrelated comment %d" % i))
        return threads[path]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, code, obj):
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def handle_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            auth, sent = "missing", ""
            for k, v in self.headers.items():
                if k.lower() in AUTH_HEADERS:
                    ok = token and v in (token, "Bearer " + token)
                    auth = k.lower() + (":match" if ok else ":mismatch")
                    sent = v
            try:
                body = json.loads(raw.decode()) if raw else None
            except ValueError:
                body = {"unparsable": raw.decode(errors="replace")}
            u = urlsplit(self.path)
            with lock:
                with open(a.log, "a") as f:
                    f.write(json.dumps({"t": time.time(), "method": self.command, "path": u.path,
                                        "query": u.query, "auth": auth, "body": body}) + "\n")
                if not auth.endswith(":match"):
                    bare = sent.split(" ", 1)[-1].encode()  # echoed plain, base64 and hex too
                    return self.reply(401, {"message": "Bad credentials: %s (%s, %s)" % (
                        sent, base64.b64encode(bare).decode(), bare.hex())})
                code, obj = self.route(u, body)
                with open(a.state + ".tmp", "w") as f:
                    json.dump(threads, f)
                os.rename(a.state + ".tmp", a.state)
            self.reply(code, obj)

        def route(self, u, body):
            if re.match(r"^(?:/api/v4)?/user$", u.path) and self.command == "GET":
                if a.user_403:
                    return 403, {"message": "Resource not accessible by integration"}
                return 200, {"login": a.login, "username": a.login, "id": 5}
            m = LIST.match(u.path)
            if m and self.command == "GET":
                q = parse_qs(u.query)
                per = int(q.get("per_page", ["20"])[0])
                page = int(q.get("page", ["1"])[0])
                return 200, thread(u.path)[(page - 1) * per:page * per]
            if m and self.command == "POST":
                next_id[0] += 1
                c = by(a.login, next_id[0], (body or {}).get("body"))
                thread(u.path).append(c)
                return 201, c
            gh, gl = GH_ITEM.match(u.path), GL_ITEM.match(u.path)
            if (gh and self.command == "PATCH") or (gl and self.command == "PUT"):
                cid = int((gh or gl).group(2))
                for path, cs in threads.items():
                    if gl and path != gl.group(1):
                        continue
                    if gh and not path.startswith("/repos/%s/" % gh.group(1)):
                        continue
                    for c in cs:
                        if c["id"] == cid:
                            c["body"] = (body or {}).get("body")
                            return 200, c
                return 404, {"message": "Not Found"}
            return 404, {"message": "no route %s %s" % (self.command, u.path)}

        do_GET = do_POST = do_PATCH = do_PUT = handle_any

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(a.port_file + ".tmp", a.port_file)
    threading.Timer(a.max_life, srv.shutdown).start()
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())

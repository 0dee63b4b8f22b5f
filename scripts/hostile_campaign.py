#!/usr/bin/env python3
"""Helpers of scripts/hostile-campaign.sh (issue #28): seeded mutants of a signed report, a
misbehaving HTTP server, and the token leak scan.

  hostile_campaign.py mutate BASE.json OUTDIR N SEED
      N edited copies of BASE (OUTDIR/m-NNNN.json) and OUTDIR/index.tsv: "file kind same",
      same = 1 when the copy holds exactly BASE's content (white space, an escape that spells
      the same character): accepting it is no forgery. Every other copy must be refused.
  hostile_campaign.py serve MODE PORTFILE LOG [TOKEN_ENV]
      answers every request on 127.0.0.1 as MODE says (garbage, close, hang, drip, huge,
      badjson, redirect, echo401, flood500, badlen); LOG gets one line per request (method,
      path, whether an auth header came: never its value). redirect points at a second
      listener on the next line of PORTFILE, which logs "LEAKED" when an auth header reaches it.
      Exits after 120 s.
  hostile_campaign.py scan DIR SECRET...
      every file under DIR searched for each secret: plain, any 16-character piece of it,
      URL-encoded (both cases, reserved or every byte), hex (both cases), base64 and base64url
      (the characters that depend only on the secret, at each alignment), JSON \\u escapes.
      Prints one line per hit and the count last.
"""
import base64
import json
import math
import os
import random
import re
import socket
import sys
import threading
import time
import urllib.parse

STRING = re.compile(rb'"((?:[^"\\]|\\.)*)"')
NUMBER = re.compile(rb'(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])')


def strict_load(data):
    def pairs(kv):
        d = {}
        for k, v in kv:
            if k in d:
                raise ValueError("duplicate key")
            d[k] = v
        return d

    def const(c):
        raise ValueError(c)

    def fin(s):
        f = float(s)
        if not math.isfinite(f):
            raise ValueError("not finite")
        return f

    return json.loads(data.decode("utf-8"), object_pairs_hook=pairs, parse_constant=const,
                      parse_float=fin)


def pick(rnd, rx, data, values_only=False):
    ms = [m for m in rx.finditer(data) if not values_only or data[m.end():m.end() + 1].strip() != b":"
          and not data[m.end():].lstrip().startswith(b":")]
    return rnd.choice(ms) if ms else None


def m_byte(rnd, d):
    pos = [i for i, c in enumerate(d) if c not in b" \n\t\r"]
    i = rnd.choice(pos)
    return d[:i] + bytes([rnd.choice(b'0123456789.eE-+"{}[],:\\abcxyzAZ')]) + d[i + 1:]


def m_nul(rnd, d):
    m = pick(rnd, STRING, d, values_only=True)
    at = rnd.randint(m.start(1), m.end(1))
    return d[:at] + rnd.choice([b"\\u0000", b"\\u0000x", b"\\U0000"[:0] + b"\\u0000\\u0000"]) + d[at:]


def m_inf(rnd, d):
    idx = [m.start() for m in re.finditer(rb"\bnull\b", d)]
    if not idx:
        return m_number(rnd, d)
    i = rnd.choice(idx)
    return d[:i] + rnd.choice([b"1e999", b"-1e999", b"1E+400", b"9e99999"]) + d[i + 4:]


def m_number(rnd, d):
    m = pick(rnd, NUMBER, d)
    v = float(m.group())
    new = rnd.choice([v * 0.5, v + 1, 1e-300, -v, v * 1.0000001, 3e9])
    return d[:m.start()] + repr(new).encode() + d[m.end():]


def m_dup(rnd, d):
    keys = [m for m in re.finditer(rb'"([A-Za-z_]+)"\s*:', d)]
    m = rnd.choice(keys)
    val = rnd.choice([b'1', b'"x"', b'true', b'null', b'1e-300', b'"diagnostic"'])
    return d[:m.start()] + m.group()[:-1].rstrip() + b": " + val + b", " + d[m.start():]


def m_escape(rnd, d):
    m = pick(rnd, STRING, d)
    body = m.group(1)
    letters = [i for i, c in enumerate(body) if chr(c).isalnum() and (i == 0 or body[i - 1] != 0x5C)]
    if not letters:
        return m_ws(rnd, d)
    i = m.start(1) + rnd.choice(letters)
    return d[:i] + b"\\u%04x" % d[i] + d[i + 1:]


def m_ws(rnd, d):
    spots = [i for i, c in enumerate(d) if c in b",:[{"]
    i = rnd.choice(spots) + 1
    return d[:i] + rnd.choice([b" ", b"\n", b"\t", b"\r\n  "]) + d[i:]


def m_truncate(rnd, d):
    return d[:rnd.randint(1, len(d) - 2)]


def m_utf8(rnd, d):
    m = pick(rnd, STRING, d, values_only=True)
    at = rnd.randint(m.start(1), m.end(1))
    return d[:at] + rnd.choice([b"\xc0\xaf", b"\xff", b"\xed\xa0\x80", b"\xe2\x80", b"\x00"]) + d[at:]


def m_surrogate(rnd, d):
    m = pick(rnd, STRING, d, values_only=True)
    at = m.end(1)
    return d[:at] + rnd.choice([b"\\ud800", b"\\udc00x", b"\\ud83d\\ude00"]) + d[at:]


def m_member(rnd, d):
    spots = [i for i, c in enumerate(d) if c == ord("{")]
    i = rnd.choice(spots) + 1
    return d[:i] + rnd.choice([b'"certifying": true, ', b'"x": 1, ', b'"mode": "production", ',
                               b'"verdict": "PASS", ', b'"signature": null, ']) + d[i:]


def m_unicode(rnd, d):
    m = pick(rnd, STRING, d, values_only=True)
    at = rnd.randint(m.start(1), m.end(1))
    return d[:at] + rnd.choice(["\u202e".encode(), "\uff1d".encode(), "\u200b".encode(),
                                b"\\u202e", b"\\u0085"]) + d[at:]


KINDS = [("byte", m_byte), ("nul-escape", m_nul), ("null-to-inf", m_inf), ("number", m_number),
         ("dup-key", m_dup), ("escape-same", m_escape), ("white-space", m_ws),
         ("truncate", m_truncate), ("bad-utf8", m_utf8), ("surrogate", m_surrogate),
         ("member", m_member), ("unicode", m_unicode)]


def mutate(base, out, n, seed):
    rnd = random.Random(int(seed))
    data = open(base, "rb").read()
    orig = strict_load(data)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "index.tsv"), "w") as idx:
        for i in range(int(n)):
            kind, fn = KINDS[i % len(KINDS)]
            m = fn(rnd, data)
            try:
                same = int(strict_load(m) == orig)
            except (ValueError, UnicodeDecodeError, RecursionError):
                same = 0
            name = os.path.join(out, "m-%04d.json" % i)
            open(name, "wb").write(m)
            idx.write("%s %s %d\n" % (name, kind, same))


def serve(mode, portfile, log, token_env="KG_TEST_TOKEN"):
    token = os.environ.get(token_env, "")
    lock = threading.Lock()

    def note(line):
        with lock, open(log, "a") as f:
            f.write(line + "\n")

    def head(conn):
        conn.settimeout(10)
        buf = b""
        while b"\r\n\r\n" not in buf and len(buf) < 65536:
            c = conn.recv(4096)
            if not c:
                break
            buf += c
        first = buf.split(b"\r\n", 1)[0].decode(errors="replace")
        auth = any(h.split(b":", 1)[0].strip().lower() in (b"authorization", b"private-token", b"job-token")
                   for h in buf.split(b"\r\n")[1:] if b":" in h)
        return first, auth

    def reply(conn, code, body, extra=b""):
        conn.sendall(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s"
                     b"Connection: close\r\n\r\n%s" % (code, len(body), extra, body))

    def handle(conn, sink):
        try:
            first, auth = head(conn)
            note("%s auth=%s%s" % (first, auth, " LEAKED" if sink and auth else ""))
            if sink:
                return reply(conn, 200, b"{}")
            if mode == "garbage":
                conn.sendall(os.urandom(2048))
            elif mode == "close":
                pass
            elif mode == "hang":
                time.sleep(30)
            elif mode == "drip":
                for c in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}":
                    conn.sendall(bytes([c]))
                    time.sleep(0.5)
            elif mode == "huge":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 268435456\r\n\r\n[")
                chunk = b'{"id": 1, "body": "' + b"x" * 65000 + b'"},'
                for _ in range(4000):
                    conn.sendall(chunk)
            elif mode == "badjson":
                reply(conn, 200, b'{"login": "kgate-bot", "id": [1, 2, {')
            elif mode == "redirect":
                reply(conn, 302, b"{}", b"Location: http://127.0.0.1:%d/steal\r\n" % sink_port[0])
            elif mode == "echo401":
                t = token.encode()
                body = b'{"message": "Bad credentials: %s %s %s %s"}' % (
                    t, base64.b64encode(t), urllib.parse.quote(token, safe="").encode(), t.hex().encode())
                reply(conn, 401, body, b"WWW-Authenticate: Bearer " + t + b"\r\n")
            elif mode == "flood500":
                reply(conn, 500, b'{"message": "' + b"\x1b[2J\x07" * 2000 + b'"}', b"Retry-After: 1\r\n")
            elif mode == "badlen":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\nContent-Length: 99999999999999999999\r\n\r\n{}")
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def listen(sink):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        return s

    main_s, sink_s = listen(False), listen(True)
    sink_port = [sink_s.getsockname()[1]]

    def loop(s, sink):
        while True:
            c, _ = s.accept()
            threading.Thread(target=handle, args=(c, sink), daemon=True).start()

    threading.Thread(target=loop, args=(sink_s, True), daemon=True).start()
    threading.Thread(target=loop, args=(main_s, False), daemon=True).start()
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n%d\n" % (main_s.getsockname()[1], sink_port[0]))
    os.rename(portfile + ".tmp", portfile)
    time.sleep(120)


def encodings(secret):
    s = secret.encode()
    out = {"plain": [s], "url": [], "hex": [s.hex().encode(), s.hex().upper().encode()],
           "base64": [], "json": [b"".join(b"\\u%04x" % c for c in s)]}
    if len(s) > 16:
        out["piece"] = [s[i:i + 16] for i in range(0, len(s) - 15)]
    for safe in ("", "-._~"):
        q = urllib.parse.quote(secret, safe=safe)
        out["url"] += [q.encode(), re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), q).encode()]
    for lead in range(3):
        for enc in (base64.b64encode, base64.urlsafe_b64encode):
            e = enc(b"\0" * lead + s)
            skip = {0: 0, 1: 2, 2: 3}[lead]
            full = (lead + len(s)) // 3 * 4
            core = e[skip:full]
            if len(core) >= 8:
                out["base64"].append(core)
    return out


def scan(d, secrets):
    hits = 0
    pats = [(sec, kind, p) for sec in secrets for kind, ps in encodings(sec).items() for p in ps]
    for root, _, files in os.walk(d):
        for f in files:
            path = os.path.join(root, f)
            try:
                data = open(path, "rb").read()
            except OSError:
                continue
            for sec, kind, p in pats:
                if p in data:
                    hits += 1
                    print("LEAK %s: %s form of %s..." % (path, kind, sec[:6]))
                    break
    print(hits)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "mutate":
        mutate(*args)
    elif cmd == "serve":
        serve(*args)
    elif cmd == "scan":
        scan(args[0], args[1:])
    else:
        sys.exit("hostile_campaign.py: unknown command '%s' (mutate, serve or scan)" % cmd)

#!/usr/bin/env python3
"""Check every relative link and anchor in the Markdown files of a tree.

usage: scripts/doc-links.py [--root DIR] [FILE.md ...]

Without files: every *.md under DIR (default: the repository root), skipping build trees and
hidden folders. For each link or image `[text](target)` outside code (fenced blocks and inline
code spans are skipped): http(s)/mailto targets are left alone; a relative path must exist
(relative to the file; a leading '/' is the root); a '#anchor' must be a heading of the target
Markdown file, as GitHub makes anchors (lowercase, punctuation dropped, spaces to '-', '-1',
'-2' ... for repeats), or an explicit <a id="..."> / <a name="...">.
Exit 0 when every link resolves, 1 with one line per broken link (FILE:LINE: target: why),
2 on a usage error.
"""
import os
import re
import sys

SKIP_DIRS = {'build', 'node_modules', '__pycache__'}
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
REF_DEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+".*")?\s*$')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
EXPLICIT = re.compile(r'<a\s+(?:id|name)="([^"]+)"', re.I)
FENCE = re.compile(r'^\s{0,3}(```|~~~)')


def md_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith('.') and x not in SKIP_DIRS
                         and not x.startswith('build'))
        for f in sorted(files):
            if f.endswith('.md'):
                yield os.path.join(d, f)


def prose_lines(text):
    """(line number, line) outside fenced code, with inline code spans blanked."""
    fence = None
    for n, line in enumerate(text.split('\n'), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif line.strip().startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, re.sub(r'(`+)(.+?)\1', lambda c: ' ' * len(c.group(0)), line)


def slug(heading):
    h = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # links: their text
    h = re.sub(r'<[^>]+>', '', h)                              # inline HTML tags
    h = h.replace('`', '').strip().lower()
    h = re.sub(r'[^\w\- ]', '', h)                             # GitHub keeps letters, digits, _ -
    return h.replace(' ', '-')


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, out = {}, set()
        with open(path, encoding='utf-8') as f:
            text = f.read()
        fence = None
        for line in text.split('\n'):
            m = FENCE.match(line)
            if m:
                fence = m.group(1) if fence is None else (None if line.strip().startswith(fence) else fence)
                continue
            if fence is not None:
                continue
            out.update(EXPLICIT.findall(line))
            h = HEADING.match(line)
            if h:
                s = slug(h.group(2))
                k = seen.get(s, 0)
                out.add(s if k == 0 else '%s-%d' % (s, k))
                seen[s] = k + 1
        _anchors[path] = out
    return _anchors[path]


def check_file(path, root):
    errs = []
    with open(path, encoding='utf-8') as f:
        text = f.read()
    for n, line in prose_lines(text):
        targets = LINK.findall(line)
        m = REF_DEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if re.match(r'^[a-z][a-z0-9+.-]*:', t, re.I):   # http:, https:, mailto:, ...
                continue
            p, _, frag = t.partition('#')
            if p:
                dest = os.path.normpath(os.path.join(root, p.lstrip('/')) if p.startswith('/')
                                        else os.path.join(os.path.dirname(path), p))
                if not os.path.exists(dest):
                    errs.append('%s:%d: %s: no such file' % (os.path.relpath(path, root), n, t))
                    continue
            else:
                dest = path
            if frag:
                if not dest.endswith('.md') or os.path.isdir(dest):
                    continue                                 # anchors of other files: not ours to know
                if frag not in anchors(dest):
                    errs.append('%s:%d: %s: no heading or id "%s" in %s'
                                % (os.path.relpath(path, root), n, t, frag, os.path.relpath(dest, root)))
    return errs


def main(argv):
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == '--root' and i + 1 < len(argv):
            root = argv[i + 1]
            i += 2
        elif argv[i] in ('-h', '--help'):
            print(__doc__.strip())
            return 0
        elif argv[i].startswith('-'):
            print('doc-links.py: unknown flag %s (usage: scripts/doc-links.py [--root DIR] [FILE.md ...])'
                  % argv[i], file=sys.stderr)
            return 2
        else:
            files.append(argv[i])
            i += 1
    if not os.path.isdir(root):
        print('doc-links.py: --root %s: not a directory' % root, file=sys.stderr)
        return 2
    files = files or list(md_files(root))
    errs = []
    for f in files:
        errs += check_file(f, root)
    for e in errs:
        print(e)
    print('doc-links.py: %d file(s), %d broken link(s)' % (len(files), len(errs)))
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
